//! The `process_*` series every Kubernetes component exposes (client_golang's process
//! collector), read from `/proc/self` at each scrape: CPU time, resident and virtual memory,
//! open and maximum file descriptors, start time. Outside Linux nothing is reported.

use std::fmt;
use std::time::Duration;

use kcm_util::prometheus::encode_family;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on every Linux ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of the process's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessStats {
    /// User plus system CPU time.
    pub cpu: Duration,
    /// Resident set size in bytes.
    pub resident_bytes: u64,
    /// Virtual memory size in bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<u64>,
    /// Start time in seconds since the epoch.
    pub start_time_seconds: f64,
}

/// Parses `/proc/self/stat` (after the command name in parentheses) and the boot time from
/// `/proc/stat`: (cpu, virtual bytes, resident pages, start time).
pub fn parse_stat(stat: &str, boot_time_seconds: f64) -> Option<(Duration, u64, u64, f64)> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields after the state (index 0 here is field 3 of proc(5)).
    let num = |i: usize| fields.get(i)?.parse::<u64>().ok();
    let utime = num(11)?;
    let stime = num(12)?;
    let start_ticks = num(19)?;
    let vsize = num(20)?;
    let rss_pages = num(21)?;
    let cpu = Duration::from_secs_f64((utime + stime) as f64 / TICKS_PER_SECOND);
    let start = boot_time_seconds + start_ticks as f64 / TICKS_PER_SECOND;
    Some((cpu, vsize, rss_pages, start))
}

/// The soft "Max open files" limit from `/proc/self/limits`.
pub fn parse_max_fds(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Reads the current figures; `None` where `/proc` is not available.
pub fn read() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let boot = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<f64>()
        .ok()?;
    let (cpu, virtual_bytes, rss_pages, start_time_seconds) = parse_stat(&stat, boot)?;
    let page_size = 4096;
    let open_fds = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0);
    let max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| parse_max_fds(&l));
    Some(ProcessStats {
        cpu,
        resident_bytes: rss_pages * page_size,
        virtual_bytes,
        open_fds,
        max_fds,
        start_time_seconds,
    })
}

/// The collector to register next to kcm's own metrics.
#[derive(Debug, Default)]
pub struct ProcessMetrics;

impl Collector for ProcessMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let Some(stats) = read() else { return Ok(()) };
        let e = &mut encoder;
        // The text encoder appends `_total` to counter samples.
        encode_family(
            e,
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            &ConstCounter::new(stats.cpu.as_secs_f64()),
        )?;
        encode_family(
            e,
            "process_open_fds",
            "Number of open file descriptors.",
            &ConstGauge::new(stats.open_fds as i64),
        )?;
        if let Some(max) = stats.max_fds {
            encode_family(
                e,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                &ConstGauge::new(max as i64),
            )?;
        }
        encode_family(
            e,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            &ConstGauge::new(stats.resident_bytes as i64),
        )?;
        encode_family(
            e,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            &ConstGauge::new(stats.virtual_bytes as i64),
        )?;
        encode_family(
            e,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            &ConstGauge::new(stats.start_time_seconds),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_limits_parse() {
        let stat = "1234 (kcm (x) y) S 1 1234 1234 0 -1 4194560 2000 0 0 0 250 50 0 0 20 0 \
                    12 0 5000 123456789 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0";
        let (cpu, vsize, rss, start) = parse_stat(stat, 1_700_000_000.0).expect("parses");
        assert_eq!(cpu, Duration::from_secs(3));
        assert_eq!(vsize, 123_456_789);
        assert_eq!(rss, 300);
        assert_eq!(start, 1_700_000_050.0);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1048576              1048576              files\n";
        assert_eq!(parse_max_fds(limits), Some(1_048_576));
    }

    #[test]
    fn series_are_served_with_client_golangs_names() {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(ProcessMetrics));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        for name in [
            "process_cpu_seconds_total ",
            "process_open_fds ",
            "process_resident_memory_bytes ",
            "process_start_time_seconds ",
        ] {
            assert!(
                text.contains(&format!("\n{name}")),
                "{name} missing in\n{text}"
            );
        }
    }
}
