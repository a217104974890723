//! Another process's CPU time and peak memory, from Linux's `/proc/<pid>` (the controllers the
//! benchmark starts; kcm-util's `proc_stats` reads the calling process's own).

use anyhow::{Context, bail};

/// utime + stime of `pid`, in seconds (clock ticks of 1/100 s, Linux's USER_HZ).
pub(crate) fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name in parentheses; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(u), Some(s)) => Ok((u + s) / 100.0),
        _ => bail!("unexpected /proc/{pid}/stat: {stat}"),
    }
}

/// VmHWM of `pid` in MiB.
pub(crate) fn peak_rss_mib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .context("no VmHWM")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_cpu_time_and_a_peak() {
        let me = std::process::id();
        assert!(cpu_seconds(me).expect("readable") >= 0.0);
        assert!(peak_rss_mib(me).expect("readable") > 0.0);
        assert!(cpu_seconds(u32::MAX).is_err());
    }
}
