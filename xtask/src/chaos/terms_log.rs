//! Leader terms and writes as the kcm replicas' own logs tell them (`-v 2`), on one host
//! clock: each process's term starts at its "successfully acquired lease" line and ends when
//! another process acquires the Lease; every write it sent (`"API write"` with `result="ok"`;
//! a write refused by its write fence, `result="fenced"`, was never sent) must lie inside. The
//! audit log's check ([`super::terms_audit`]) is the server's view and needs no clock but the
//! server's; this one also runs on kcm-testenv, which has no audit log.

use std::path::Path;

/// The candidate identity a kcm log announces (`attempting to acquire leader lease`).
pub(crate) fn identity_in_log(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.contains("attempting to acquire leader lease"))
        .and_then(|l| l.split("identity=\"").nth(1))
        .and_then(|r| r.split('"').next())
        .map(str::to_string)
}

/// Seconds since midnight of a klog line (`I1125 04:22:23.200902 ...`).
pub(crate) fn klog_time(line: &str) -> Option<f64> {
    let t = line.split_whitespace().nth(1)?;
    let mut parts = t.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    Some(h * 3600.0 + m * 60.0 + s)
}

/// One process's log: when it acquired the Lease (if it did) and its successful writes.
#[derive(Debug, Default)]
pub(crate) struct LogTerm {
    pub(crate) name: String,
    pub(crate) acquired: Option<f64>,
    pub(crate) writes: Vec<(f64, String)>,
    /// Writes its fence refused (never sent).
    pub(crate) fenced: usize,
}

pub(crate) fn read_term(name: &str, text: &str) -> LogTerm {
    let mut t = LogTerm {
        name: name.to_string(),
        ..Default::default()
    };
    for line in text.lines() {
        if line.contains("successfully acquired lease") && t.acquired.is_none() {
            t.acquired = klog_time(line);
        } else if line.contains("\"API write\"") && line.contains("result=\"fenced\"") {
            t.fenced += 1;
        } else if line.contains("\"API write\"")
            && line.contains("result=\"ok\"")
            && let Some(at) = klog_time(line)
        {
            t.writes.push((at, line.to_string()));
        }
    }
    t
}

/// Writes outside their writer's term: before it acquired the Lease, or after another process
/// acquired it later. Each process of `terms` is one run of one replica.
pub(crate) fn overlapping_writes(terms: &[LogTerm]) -> Vec<String> {
    let mut acquisitions: Vec<(f64, &str)> = terms
        .iter()
        .filter_map(|t| t.acquired.map(|a| (a, t.name.as_str())))
        .collect();
    acquisitions.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bad = Vec::new();
    for t in terms {
        for (at, line) in &t.writes {
            let Some(start) = t.acquired else {
                bad.push(format!(
                    "{} wrote without holding the Lease: {line}",
                    t.name
                ));
                continue;
            };
            let next = acquisitions
                .iter()
                .find(|(a, n)| *a > start && *n != t.name);
            if *at < start || next.is_some_and(|(a, _)| at > a) {
                bad.push(format!("{} wrote outside its term: {line}", t.name));
            }
        }
    }
    bad
}

/// The terms of every `kcm-*.log` in `dir`.
pub(crate) fn read_terms(dir: &Path) -> anyhow::Result<Vec<LogTerm>> {
    Ok(crate::cluster::logs(dir, "kcm-")?
        .iter()
        .map(|(name, text)| read_term(name, text))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(name: &str, acquired: Option<f64>, writes: &[f64]) -> LogTerm {
        LogTerm {
            name: name.into(),
            acquired,
            writes: writes.iter().map(|w| (*w, format!("w{w}"))).collect(),
            fenced: 0,
        }
    }

    #[test]
    fn writes_are_checked_against_terms() {
        let ok = [
            term("a", Some(1.0), &[1.5, 2.0]),
            term("b", Some(3.0), &[3.5]),
        ];
        assert!(overlapping_writes(&ok).is_empty());
        let late = [term("a", Some(1.0), &[3.2]), term("b", Some(3.0), &[3.5])];
        assert_eq!(
            overlapping_writes(&late).len(),
            1,
            "a wrote after b acquired"
        );
        let never = [term("c", None, &[2.0])];
        assert_eq!(overlapping_writes(&never).len(), 1);
    }

    #[test]
    fn klog_lines_are_read() {
        let log = "I1125 04:22:18.988405    6005 leader_election.rs:242] \"attempting to acquire leader lease\" identity=\"vm_1\"\n\
                   I1125 04:22:22.873823    6005 leader_election.rs:249] \"successfully acquired lease\"\n\
                   I1125 04:22:23.200902    6005 api_write.rs:50] \"API write\" verb=\"update\" result=\"ok\"\n\
                   I1125 04:22:23.300902    6005 api_write.rs:50] \"API write\" verb=\"update\" result=\"error\"\n\
                   I1125 04:22:23.400902    6005 api_write.rs:50] \"API write\" verb=\"create\" result=\"fenced\"\n";
        let t = read_term("x", log);
        assert_eq!(t.acquired, Some(4.0 * 3600.0 + 22.0 * 60.0 + 22.873823));
        assert_eq!(t.writes.len(), 1);
        assert_eq!(t.fenced, 1);
    }
}
