//! What xtask leaves behind when it is interrupted: every child process it started and every
//! temporary folder it made are recorded here, so that Ctrl-C or SIGTERM kills the processes and
//! removes the folders before xtask exits (normal exits clean up through `Drop`).

use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, Default)]
struct Tracked {
    pids: Vec<u32>,
    dirs: Vec<PathBuf>,
}

static TRACKED: Mutex<Tracked> = Mutex::new(Tracked {
    pids: Vec::new(),
    dirs: Vec::new(),
});

fn with<R>(f: impl FnOnce(&mut Tracked) -> R) -> R {
    let mut guard = TRACKED.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// Installs the SIGINT/SIGTERM handler (once, at start).
pub fn install() {
    let result = ctrlc::set_handler(|| {
        eprintln!("xtask: interrupted; stopping the processes it started");
        reap();
        std::process::exit(130);
    });
    if let Err(e) = result {
        eprintln!(
            "xtask: could not install the Ctrl-C handler ({e}); child processes may outlive an interrupt"
        );
    }
}

/// Kills every tracked process and removes every tracked folder.
fn reap() {
    let (pids, dirs) = with(|t| (std::mem::take(&mut t.pids), std::mem::take(&mut t.dirs)));
    if !pids.is_empty() {
        let mut kill = std::process::Command::new("kill");
        kill.arg("-KILL");
        for pid in pids.iter().rev() {
            kill.arg(pid.to_string());
        }
        let _ = kill.status();
    }
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Records a child process.
pub fn track_pid(pid: u32) {
    with(|t| t.pids.push(pid));
}

/// Forgets a child process (it was stopped).
pub fn untrack_pid(pid: u32) {
    with(|t| t.pids.retain(|p| *p != pid));
}

/// A temporary folder removed when dropped, or on an interrupt.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh folder `<system temp>/<prefix>-<pid>-<n>`.
    pub fn new(prefix: &str) -> anyhow::Result<TempDir> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "{prefix}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?;
        with(|t| t.dirs.push(path.clone()));
        Ok(TempDir(path))
    }

    /// The folder.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        with(|t| t.dirs.retain(|d| d != &self.0));
    }
}
