//! The fixed background load of the loaded runs of `cargo xtask bench workqueue|store`.
//!
//! A comparison run on a quiet machine and the same run with the machine busy can rank the
//! two sides differently (the work queue's churn did), so each round runs both sides twice:
//! once as the machine is, once beside [`LOAD_PROCESSES`] processes that spin on the CPU,
//! started here and stopped right after, the same for both sides. Every JSON line is tagged
//! `"load": "quiet"` or `"load": "loaded"`, and each gets its own table.

use std::process::{Child, Command, Stdio};

/// Busy processes of the loaded runs: one per core of the project's 2-core machine, so the
/// benchmark's threads share every core with a spinner.
pub const LOAD_PROCESSES: usize = 2;

/// The two conditions each round runs in, in order.
pub const LOADS: &[&str] = &["quiet", "loaded"];

/// Spinning processes, killed when this is dropped.
pub struct BackgroundLoad {
    children: Vec<Child>,
}

impl BackgroundLoad {
    /// Starts the load of condition `load` (none for `quiet`).
    pub fn start(load: &str) -> anyhow::Result<Self> {
        let count = if load == "loaded" { LOAD_PROCESSES } else { 0 };
        let mut children = Vec::with_capacity(count);
        for _ in 0..count {
            let child = Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            children.push(child);
        }
        if count > 0 {
            eprintln!("xtask: background load: {count} spinning processes");
        }
        Ok(Self { children })
    }
}

impl Drop for BackgroundLoad {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The lines of one condition (lines without a `load` tag count as `quiet`).
pub fn lines_of(lines: &[serde_json::Value], load: &str) -> Vec<serde_json::Value> {
    lines
        .iter()
        .filter(|l| l.get("load").and_then(|v| v.as_str()).unwrap_or("quiet") == load)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lines_of;
    use serde_json::json;

    #[test]
    fn untagged_lines_are_quiet() {
        let lines = [
            json!({"load": "loaded", "x": 1}),
            json!({"x": 2}),
            json!({"load": "quiet", "x": 3}),
        ];
        let quiet: Vec<i64> = lines_of(&lines, "quiet")
            .iter()
            .filter_map(|l| l["x"].as_i64())
            .collect();
        assert_eq!(quiet, [2, 3]);
        assert_eq!(lines_of(&lines, "loaded").len(), 1);
    }
}
