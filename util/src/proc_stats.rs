//! This process's (or another's) CPU time and memory, and the machine's load, from Linux's
//! `/proc`: what the benchmark examples report next to their timings. Every reading is 0 (or
//! `None`) where `/proc` is not available, so a benchmark still runs elsewhere.
//!
//! CPU time from `/proc/self/stat` counts clock ticks, assumed 100 per second (Linux's
//! `USER_HZ`): 10 ms resolution, but unlike wall time it barely moves when other processes
//! compete for the cores. The `schedstat` readings are nanoseconds of on-CPU time.
//!
//! ```
//! let before = kcm_util::proc_stats::process_cpu_ms();
//! let _work: u64 = (0..1_000_000u64).sum();
//! assert!(kcm_util::proc_stats::process_cpu_ms() >= before);
//! ```

use std::fs;

/// A `kB` line of `/proc/self/status` (`VmRSS`, `VmHWM`, ...), in KiB.
pub fn status_kib(field: &str) -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| status_field_kib(&s, field))
        .unwrap_or(0)
}

/// A `kB` line of `/proc/<pid>/status` of another process, in KiB; `None` when the process is
/// gone (or not ours to read) or has no such line.
pub fn pid_status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status_field_kib(&text, field)
}

/// The value of the line `field:` of a `status` file's text (`VmHWM:     1234 kB` gives 1234).
fn status_field_kib(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Resident set size (`VmRSS`) in KiB.
pub fn rss_kib() -> u64 {
    status_kib("VmRSS")
}

/// Peak resident set size (`VmHWM`) in KiB.
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM")
}

/// utime + stime of the whole process (every thread), in clock ticks.
fn process_cpu_ticks() -> Option<u64> {
    stat_cpu_ticks(&fs::read_to_string("/proc/self/stat").ok()?)
}

/// utime + stime of a `stat` file's text, in clock ticks.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    // Fields after the command name, which is parenthesised (and may hold spaces and
    // parentheses itself): state is index 0, utime 11, stime 12.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// CPU time (user + system, all threads) of another process so far, in ms
/// (`/proc/<pid>/stat`); `None` when the process is gone or not ours to read.
pub fn pid_cpu_ms(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_ticks(&stat).map(|t| t * 10)
}

/// CPU time (user + system, all threads) of this process so far, in ms.
pub fn process_cpu_ms() -> u64 {
    process_cpu_ticks().map_or(0, |t| t * 10)
}

/// CPU time (user + system, all threads) of this process so far, in seconds.
pub fn process_cpu_secs() -> f64 {
    process_cpu_ticks().map_or(0.0, |t| t as f64 / 100.0)
}

/// The first field of a `schedstat` file: on-CPU nanoseconds.
fn schedstat_ns(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// On-CPU time of the calling thread in ns (`/proc/thread-self/schedstat`): unlike wall time
/// it does not count time spent waiting for a CPU, which matters on a loaded machine. The
/// kernel updates it at least every scheduler tick, so short sections carry tick-sized
/// (zero-mean) noise.
pub fn thread_cpu_ns() -> u64 {
    fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| schedstat_ns(&s))
        .unwrap_or(0)
}

/// Sum of on-CPU nanoseconds of this process's threads named `name` (`/proc/self/task/*/comm`).
/// Threads that have exited are not counted: keep the threads of interest alive.
pub fn threads_cpu_ns(name: &str) -> u64 {
    tasks_cpu_ns(|task| fs::read_to_string(task.join("comm")).is_ok_and(|c| c.trim() == name))
        .unwrap_or(0)
}

/// On-CPU nanoseconds of every live thread of this process (`/proc/self/task/*/schedstat`):
/// the process's CPU time as `getrusage` counts it, at nanosecond resolution, so work handed
/// to a thread of its own is counted. Threads that have exited are not. Without
/// `/proc/self/task`, the calling thread's ([`thread_cpu_ns`]).
pub fn live_threads_cpu_ns() -> u64 {
    tasks_cpu_ns(|_| true).unwrap_or_else(thread_cpu_ns)
}

/// Sum of on-CPU nanoseconds of this process's threads that `keep` selects (by their
/// `/proc/self/task/<tid>` folder); `None` without `/proc/self/task`.
fn tasks_cpu_ns(keep: impl Fn(&std::path::Path) -> bool) -> Option<u64> {
    let dir = fs::read_dir("/proc/self/task").ok()?;
    Some(
        dir.flatten()
            .map(|t| t.path())
            .filter(|t| keep(t))
            .filter_map(|t| fs::read_to_string(t.join("schedstat")).ok())
            .filter_map(|s| schedstat_ns(&s))
            .sum(),
    )
}

/// The one-minute load average (`/proc/loadavg`).
pub fn loadavg_1m() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The one-, five- and fifteen-minute load averages as `/proc/loadavg` writes them
/// (`"0.52 0.58 0.59"`); empty where it is not available.
pub fn loadavg_text() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| first_fields(&s, 3))
        .unwrap_or_default()
}

/// The first `n` whitespace-separated fields of `text`, joined by single spaces.
fn first_fields(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Linux every reading is live; elsewhere they are all zero.
    #[test]
    fn readings_are_consistent() {
        if !std::path::Path::new("/proc/self/status").exists() {
            assert_eq!((rss_kib(), peak_rss_kib(), process_cpu_ms()), (0, 0, 0));
            return;
        }
        let rss = rss_kib();
        assert!(rss > 0, "VmRSS");
        assert!(peak_rss_kib() >= rss, "VmHWM is the peak of VmRSS");
        assert_eq!(status_kib("VmNoSuchField"), 0);
        assert_eq!(status_kib("VmRS"), 0, "a field name must match whole");
        let ms = process_cpu_ms();
        assert!((process_cpu_secs() * 1000.0 - ms as f64).abs() <= 10.0);
        std::thread::Builder::new()
            .name("kcm-util-spin".into())
            .spawn(|| {
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_millis(30) {
                    std::hint::black_box(0u64);
                }
                assert!(thread_cpu_ns() > 0);
                assert!(threads_cpu_ns("kcm-util-spin") > 0);
            })
            .expect("spawn")
            .join()
            .expect("spin thread");
        assert!(loadavg_1m().is_some_and(|l| l >= 0.0));
        let text = loadavg_text();
        assert_eq!(text.split(' ').count(), 3, "{text:?}");
        assert!(
            text.split(' ').all(|v| v.parse::<f64>().is_ok()),
            "{text:?}"
        );
    }

    #[test]
    fn stat_cpu_ticks_adds_utime_and_stime_after_the_command_name() {
        // A command name with a space and a parenthesis, as a thread may name itself.
        let stat = "4242 (tokio) rt:w) S 1 4242 4242 0 -1 4194560 2310 0 0 0 \
                    173 41 0 0 20 0 9 0 123456 1234567 890 18446744073709551615";
        assert_eq!(stat_cpu_ticks(stat), Some(214));
        assert_eq!(stat_cpu_ticks("4242 (short) S 1 2"), None);
        assert_eq!(stat_cpu_ticks("no parenthesis at all"), None);
        let garbled = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u s 0 0";
        assert_eq!(stat_cpu_ticks(garbled), None);
    }

    #[test]
    fn status_field_kib_reads_the_named_line_only() {
        let status = "Name:\tetcd\nVmPeak:\t  900 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   80000 kB\n";
        assert_eq!(status_field_kib(status, "VmHWM"), Some(81_234));
        assert_eq!(status_field_kib(status, "VmRSS"), Some(80_000));
        assert_eq!(status_field_kib(status, "VmRS"), None);
        assert_eq!(status_field_kib(status, "VmSwap"), None);
        assert_eq!(status_field_kib("VmHWM:\tmany kB\n", "VmHWM"), None);
    }

    #[test]
    fn another_process_reads_as_this_one_and_a_gone_one_as_none() {
        if !std::path::Path::new("/proc/self/status").exists() {
            return;
        }
        let me = std::process::id();
        assert!(pid_status_kib(me, "VmHWM").is_some_and(|k| k > 0));
        assert!(pid_cpu_ms(me).is_some());
        // Beyond the kernel's pid_max (at most 2^22).
        assert_eq!(pid_cpu_ms(u32::MAX), None);
        assert_eq!(pid_status_kib(u32::MAX, "VmHWM"), None);
    }

    #[test]
    fn loadavg_text_keeps_the_first_three_fields() {
        assert_eq!(
            first_fields("0.52 0.58 0.59 2/1234 5678\n", 3),
            "0.52 0.58 0.59"
        );
        assert_eq!(first_fields("", 3), "");
    }
}
