//! Processes the e2e scenarios and the demo run: a cluster (a `kcm-testenv` this crate starts, or
//! any cluster reached through an external kubeconfig), `kcm` instances, and the real `kubectl`
//! (always with a fresh `--cache-dir`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, RwLock, RwLockWriteGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// Where cargo puts debug binaries for this workspace (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"))
}

/// Builds the two binaries the scenarios run.
pub fn build_binaries() -> anyhow::Result<()> {
    build(&["kcm", "kcm-testenv-cli"])
}

/// Builds the binaries of `packages` (debug profile, `--locked`).
pub fn build(packages: &[&str]) -> anyhow::Result<()> {
    let mut args = vec!["build", "--locked"];
    for p in packages {
        args.extend_from_slice(&["-p", p]);
    }
    crate::run_cmd("cargo", &args)
}

/// The logs of `dir` whose file name starts with `prefix` and ends with `.log`, as
/// `(file name, text)`, in file name order (unreadable files read as empty).
pub fn logs(dir: &Path, prefix: &str) -> anyhow::Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name.starts_with(prefix) && name.ends_with(".log") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            found.push((name, text));
        }
    }
    found.sort();
    Ok(found)
}

/// A child process killed when dropped.
#[derive(Debug)]
pub struct Proc {
    child: Child,
    name: String,
    /// How to start it again ([`Proc::spawn_logged`] only).
    respawn: Option<Respawn>,
}

/// A process's command line and log file, to start it again after a kill (the chaos runs
/// restart etcd and kube-apiserver with their data and ports unchanged).
#[derive(Debug, Clone)]
struct Respawn {
    program: std::ffi::OsString,
    args: Vec<std::ffi::OsString>,
    envs: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)>,
    cwd: Option<PathBuf>,
    log: PathBuf,
}

impl Respawn {
    fn of(cmd: &Command, log: &Path) -> Respawn {
        Respawn {
            program: cmd.get_program().to_owned(),
            args: cmd.get_args().map(ToOwned::to_owned).collect(),
            envs: cmd
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
                .collect(),
            cwd: cmd.get_current_dir().map(Path::to_path_buf),
            log: log.to_path_buf(),
        }
    }

    /// The command again, its output appended to the same log.
    fn command(&self) -> anyhow::Result<Command> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        for (k, v) in &self.envs {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.log)
            .with_context(|| format!("opening {}", self.log.display()))?;
        cmd.stdout(Stdio::from(log.try_clone()?)).stderr(log);
        Ok(cmd)
    }
}

impl Proc {
    /// Spawns `cmd` (stdin closed, stderr and stdout as `cmd` says), tracked so that an
    /// interrupt of xtask kills it too.
    pub fn spawn(cmd: &mut Command, name: &str) -> anyhow::Result<Proc> {
        let child = cmd
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {name} ({:?})", cmd.get_program()))?;
        crate::reaper::track_pid(child.id());
        Ok(Proc {
            child,
            name: name.into(),
            respawn: None,
        })
    }

    /// Spawns `cmd` with stdout and stderr into `log`; [`Proc::respawn`] can start it again.
    pub fn spawn_logged(cmd: &mut Command, name: &str, log: &Path) -> anyhow::Result<Proc> {
        let respawn = Respawn::of(cmd, log);
        let mut p = Proc::spawn(&mut respawn.command()?, name)?;
        p.respawn = Some(respawn);
        Ok(p)
    }

    /// Starts the process again with the command line it was spawned with (killing it first if
    /// it still runs); its output goes on into the same log.
    pub fn respawn(&mut self) -> anyhow::Result<()> {
        let respawn = self
            .respawn
            .clone()
            .with_context(|| format!("{} was not started to be restarted", self.name))?;
        if self.is_running() {
            self.kill();
        }
        // The old child is reaped (killed above, or exited on its own and waited by
        // `is_running`); replacing it loses nothing.
        self.child = respawn
            .command()?
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("restarting {} ({:?})", self.name, respawn.program))?;
        crate::reaper::track_pid(self.child.id());
        Ok(())
    }

    /// Sends SIGKILL and waits.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::reaper::untrack_pid(self.child.id());
    }

    /// The process's standard output, if it was piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    /// Sends `signal` (as `kill` takes it: `-STOP`, `-CONT`) to the process.
    pub fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status();
    }

    /// The process id (for reading `/proc/<pid>`).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The process name given to [`Proc::spawn`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends SIGTERM (graceful stop) and waits up to `grace` before killing.
    pub fn terminate(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                crate::reaper::untrack_pid(self.child.id());
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "xtask: {} did not stop within {grace:?}; killing it",
            self.name
        );
        self.kill();
        None
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A cluster the scenarios run against: a `kcm-testenv` started (and killed on drop) by this
/// process, or an external cluster reached through a kubeconfig.
#[derive(Debug)]
pub struct Cluster {
    /// The processes of a cluster this crate started (`kcm-testenv`, or the upstream control
    /// plane and the node simulation), in start order; killed in reverse order when the cluster
    /// is dropped. Empty for an external cluster.
    processes: Mutex<Vec<Proc>>,
    /// Held for reading by every kubectl this crate runs through the cluster, and for writing
    /// while a control-plane component restarts ([`Cluster::hold_requests`]), so that the
    /// harness, a user of the cluster, waits out a restart instead of failing on it.
    requests: RwLock<()>,
    /// Folders removed after the processes are stopped (etcd's data).
    temp_dirs: Vec<crate::reaper::TempDir>,
    /// Kubeconfig every `kubectl` this crate runs uses: written by `kcm-testenv`, an admin
    /// certificate's for the upstream control plane, or for an external cluster a
    /// self-contained copy pinned to one context.
    pub kubeconfig: PathBuf,
    /// Kubeconfig `kcm` runs with: the same as `kubeconfig`, except on the upstream control
    /// plane, where kcm runs as the ServiceAccount `deploy/rbac.yaml` binds.
    pub kcm_kubeconfig: PathBuf,
    /// Server URL.
    pub url: String,
    /// Which kind of cluster this is.
    pub kind: ClusterKind,
    dir: PathBuf,
}

/// The kinds of cluster the scenarios run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterKind {
    /// A `kcm-testenv` started by this crate.
    Testenv,
    /// kube-apiserver, etcd and kube-controller-manager built from `upstream/`, started by this
    /// crate, with the node simulation of `kcm-testenv sim`.
    Upstream,
    /// Any cluster reached through a kubeconfig; nothing is started.
    External,
}

impl ClusterKind {
    /// The name `--cluster` options take: `testenv`, `upstream`, `external`.
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Testenv => "testenv",
            ClusterKind::Upstream => "upstream",
            ClusterKind::External => "external",
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let processes = self.processes.get_mut().unwrap_or_else(|e| e.into_inner());
        while let Some(mut p) = processes.pop() {
            p.kill();
        }
        self.temp_dirs.clear();
    }
}

impl Cluster {
    /// Starts `kcm-testenv` with `args` (`--nodes 3`), logs to `dir/testenv.log`, waits until ready.
    pub fn start(dir: &Path, args: &[&str]) -> anyhow::Result<Cluster> {
        Cluster::start_binary(dir, &target_dir().join("debug").join("kcm-testenv"), args)
    }

    /// [`Cluster::start`] with the `kcm-testenv` binary at `bin` (the benchmarks' release build).
    pub fn start_binary(dir: &Path, bin: &Path, args: &[&str]) -> anyhow::Result<Cluster> {
        std::fs::create_dir_all(dir)?;
        let kubeconfig = dir.join("kubeconfig");
        let mut cmd = Command::new(bin);
        cmd.args(["--listen", "127.0.0.1:0", "--kubeconfig-out"])
            .arg(&kubeconfig)
            .args(args);
        let (proc, rest) = spawn_until_ready(&mut cmd, "kcm-testenv", dir, "kcm-testenv ready: ")?;
        let url = rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        Ok(Cluster {
            processes: Mutex::new(vec![proc]),
            requests: RwLock::new(()),
            temp_dirs: Vec::new(),
            kcm_kubeconfig: kubeconfig.clone(),
            kubeconfig,
            url,
            kind: ClusterKind::Testenv,
            dir: dir.to_path_buf(),
        })
    }

    /// A cluster made of processes this crate started (see [`crate::upstream`]).
    pub fn started(
        dir: &Path,
        processes: Vec<Proc>,
        temp_dirs: Vec<crate::reaper::TempDir>,
        kubeconfig: PathBuf,
        kcm_kubeconfig: PathBuf,
        url: String,
    ) -> Cluster {
        Cluster {
            processes: Mutex::new(processes),
            requests: RwLock::new(()),
            temp_dirs,
            kubeconfig,
            kcm_kubeconfig,
            url,
            kind: ClusterKind::Upstream,
            dir: dir.to_path_buf(),
        }
    }

    /// The folder of this run: logs, kubeconfigs, timelines.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a started process has exited (its name), for a clear error when a component dies.
    pub fn exited_process(&self) -> Option<String> {
        self.processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
            .find_map(|p| (!p.is_running()).then(|| p.name().to_string()))
    }

    /// Runs `f` on the started process named `name`; `None` if there is none.
    pub fn with_process<T>(&self, name: &str, f: impl FnOnce(&mut Proc) -> T) -> Option<T> {
        self.processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
            .find(|p| p.name() == name)
            .map(f)
    }

    /// Holds back every kubectl this crate runs through the cluster until the guard is dropped
    /// (waiting for those already running to finish first).
    pub fn hold_requests(&self) -> RwLockWriteGuard<'_, ()> {
        self.requests.write().unwrap_or_else(|e| e.into_inner())
    }

    /// An existing cluster reached through `kubeconfig` (its `context`, or its current context).
    ///
    /// The chosen context is written, credentials inlined, to `dir/kubeconfig` (mode 0600) with
    /// `kubectl config view --minify --flatten`, so that every kubectl and kcm started later talks
    /// to the same cluster even if the user switches contexts meanwhile, and so that `kcm` (which
    /// has no `--context` flag) can use it. Nothing is started.
    pub fn external(
        dir: &Path,
        kubeconfig: &Path,
        context: Option<&str>,
    ) -> anyhow::Result<Cluster> {
        if !kubeconfig.is_file() {
            bail!("kubeconfig {} is not a readable file", kubeconfig.display());
        }
        std::fs::create_dir_all(dir)?;
        let cache = dir.join("kubectl-cache");
        let mut args = vec!["config", "view", "--minify", "--flatten", "--raw"];
        if let Some(ctx) = context {
            args.extend_from_slice(&["--context", ctx]);
        }
        let pinned = kubectl(kubeconfig, &cache, &args, None)
            .with_context(|| format!("reading kubeconfig {}", kubeconfig.display()))?;
        let pinned_path = dir.join("kubeconfig");
        write_private(&pinned_path, &pinned)?;
        let url = kubectl(
            &pinned_path,
            &cache,
            &[
                "config",
                "view",
                "-o",
                "jsonpath={.clusters[0].cluster.server}",
            ],
            None,
        )?
        .trim()
        .to_string();
        if url.is_empty() {
            bail!(
                "kubeconfig {} has no cluster server for context {}",
                kubeconfig.display(),
                context.unwrap_or("(current)")
            );
        }
        Ok(Cluster {
            processes: Mutex::new(Vec::new()),
            requests: RwLock::new(()),
            temp_dirs: Vec::new(),
            kcm_kubeconfig: pinned_path.clone(),
            kubeconfig: pinned_path,
            url,
            kind: ClusterKind::External,
            dir: dir.to_path_buf(),
        })
    }

    /// Starts a `kcm` process against this cluster, logging to `dir/<name>.log`.
    pub fn start_kcm(&self, name: &str, args: &[&str]) -> anyhow::Result<Proc> {
        self.start_kcm_as(name, &self.kcm_kubeconfig, args)
    }

    /// [`Cluster::start_kcm`] with another identity (`kubeconfig`).
    pub fn start_kcm_as(
        &self,
        name: &str,
        kubeconfig: &Path,
        args: &[&str],
    ) -> anyhow::Result<Proc> {
        let bin = target_dir().join("debug").join("kcm");
        let log = std::fs::File::create(self.dir.join(format!("{name}.log")))?;
        Proc::spawn(
            Command::new(&bin)
                .arg("--kubeconfig")
                .arg(kubeconfig)
                .args(["--secure-port", "0", "-v", "2"])
                .args(args)
                .stdout(Stdio::null())
                .stderr(log),
            name,
        )
    }

    /// Runs kubectl against the cluster; returns stdout, fails with stderr on a non-zero exit.
    pub fn kubectl(&self, args: &[&str]) -> anyhow::Result<String> {
        let _running = self.requests.read().unwrap_or_else(|e| e.into_inner());
        kubectl(
            &self.kubeconfig,
            &self.dir.join("kubectl-cache"),
            args,
            None,
        )
    }

    /// Runs kubectl with `stdin` as standard input (for `apply -f -`).
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> anyhow::Result<String> {
        let _running = self.requests.read().unwrap_or_else(|e| e.into_inner());
        kubectl(
            &self.kubeconfig,
            &self.dir.join("kubectl-cache"),
            args,
            Some(stdin),
        )
    }

    /// Reads one object or list as JSON.
    pub fn get_json(&self, args: &[&str]) -> anyhow::Result<serde_json::Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let out = self.kubectl(&all)?;
        serde_json::from_str(&out).context("kubectl printed invalid JSON")
    }
}

/// Spawns `cmd` with stdout piped and stderr to `dir/<name>.log`, and waits for its first stdout
/// line, which must start with `ready_prefix`; returns the process and the rest of that line.
/// Stdout is drained afterwards so the process never blocks on a full pipe.
pub fn spawn_until_ready(
    cmd: &mut Command,
    name: &str,
    dir: &Path,
    ready_prefix: &str,
) -> anyhow::Result<(Proc, String)> {
    let log_path = dir.join(format!("{name}.log"));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut proc = Proc::spawn(cmd.stdout(Stdio::piped()).stderr(log), name)?;
    let stdout = proc.take_stdout().context("no stdout pipe")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = lines.next().transpose()?.with_context(|| {
        format!(
            "{name} exited before it was ready; see {}",
            log_path.display()
        )
    })?;
    let Some(rest) = line.strip_prefix(ready_prefix) else {
        bail!(
            "unexpected first line from {name}: {line:?}; see {}",
            log_path.display()
        );
    };
    let rest = rest.to_string();
    std::thread::spawn(move || for _ in lines {});
    Ok((proc, rest))
}

/// Writes `contents` to `path`, readable by the owner only (it may hold credentials).
pub fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(contents.as_bytes())?;
    Ok(())
}

/// Runs the real kubectl with a kubeconfig and a cache dir of its own.
pub fn kubectl(
    kubeconfig: &Path,
    cache: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> anyhow::Result<String> {
    use std::io::Write;
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().context("starting kubectl (is it installed?)")?;
    // The input is written while the output is read: kubectl prints a line per object as it
    // goes, and a writer that waited for the whole input to be taken before reading would
    // block both sides once kubectl's output filled its pipe (2,000-odd objects).
    let (out, written) = std::thread::scope(|scope| {
        let writer = stdin
            .zip(child.stdin.take())
            .map(|(input, mut pipe)| scope.spawn(move || pipe.write_all(input.as_bytes())));
        let out = child.wait_with_output();
        (out, writer.map(|w| w.join()))
    });
    let out = out?;
    if !out.status.success() {
        bail!(
            "kubectl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    match written {
        Some(Ok(Err(e))) => return Err(e).context("writing kubectl's input"),
        Some(Err(_)) => bail!("the thread writing kubectl's input panicked"),
        Some(Ok(Ok(()))) | None => {}
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A loopback port free right now.
pub fn free_port() -> anyhow::Result<u16> {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

/// Polls `check` every 200 ms until it returns `Some` or `timeout` passes.
pub fn wait_for<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> anyhow::Result<Option<T>>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + timeout;
    let mut last_err = None;
    loop {
        match check() {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last_err = Some(e),
        }
        if Instant::now() >= deadline {
            match last_err {
                Some(e) => {
                    bail!("timed out after {timeout:?} waiting for {what} (last error: {e:#})")
                }
                None => bail!("timed out after {timeout:?} waiting for {what}"),
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
