//! The upstream control plane on loopback: etcd, kube-apiserver and kube-controller-manager (its
//! Deployment and ReplicaSet controllers off, as the README tells users), plus `kcm-testenv sim`
//! as the nodes, scheduler and kubelets — an ordinary API client, as kwok is.
//!
//! Everything lives in one run folder (kept: logs, kubeconfigs, the audit log) and a temporary
//! folder for etcd's data (removed on exit and on Ctrl-C).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::build::Binaries;
use super::kubeconfig;
use super::pki::Pki;
use crate::cluster::{Cluster, Proc, free_port, kubectl, spawn_until_ready, wait_for};
use crate::reaper::TempDir;

/// How to start the control plane.
#[derive(Debug, Clone)]
pub struct Options {
    /// Simulated nodes.
    pub nodes: usize,
    /// Delay from binding to Ready of simulated pods (Go duration).
    pub pod_ready_after: String,
    /// `--feature-gates` for kube-apiserver and kube-controller-manager (empty: their defaults).
    pub feature_gates: String,
    /// kube-controller-manager's `--controllers`: [`CONTROLLERS_WITHOUT_OURS`] (kcm's place),
    /// or `*` for upstream's own Deployment and ReplicaSet controllers (the differential runs).
    pub controllers: String,
    /// Extra kube-controller-manager flags.
    pub controller_manager_args: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            nodes: 3,
            pod_ready_after: "300ms".into(),
            feature_gates: String::new(),
            controllers: CONTROLLERS_WITHOUT_OURS.to_string(),
            controller_manager_args: Vec::new(),
        }
    }
}

/// The flags README.md tells users to run kube-controller-manager with next to kcm.
pub const CONTROLLERS_WITHOUT_OURS: &str = "*,-deployment-controller,-replicaset-controller";

/// The audit policy: every write at RequestResponse (the differential runs read the bodies),
/// Lease writes at Metadata (heartbeats), reads not at all.
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [\"RequestReceived\"]
rules:
  - level: None
    verbs: [\"get\", \"list\", \"watch\"]
  - level: Metadata
    resources: [{group: \"coordination.k8s.io\", resources: [\"leases\"]}]
  - level: RequestResponse
";

/// etcd and kube-apiserver started by [`start_api_server`], ready.
#[derive(Debug)]
pub struct ApiServerRun {
    /// etcd, then kube-apiserver (killed when dropped).
    pub procs: Vec<Proc>,
    /// When etcd was spawned (wall clock), the start of the control plane's start-up.
    pub etcd_spawned: SystemTime,
    /// etcd's data folder (removed when dropped).
    pub etcd_data: TempDir,
    /// The certificates and keys.
    pub pki: Pki,
    /// kube-apiserver's URL (`https://127.0.0.1:<port>`).
    pub url: String,
    /// An admin kubeconfig (`system:masters`).
    pub admin: PathBuf,
    /// kubectl's cache folder for `admin`.
    pub cache: PathBuf,
}

/// Starts etcd and kube-apiserver in `dir` as [`start`] does (certificates, flags, and the
/// audit log `dir/audit.log` when `audit_log`), and returns once kube-apiserver answers
/// `/readyz`. `cargo xtask upstream gen-testenv` reads discovery from it; [`start`] adds
/// kube-controller-manager and the simulation; `cargo xtask bench testenv` times it.
pub fn start_api_server(
    dir: &Path,
    bins: &Binaries,
    feature_gates: &str,
    audit_log: bool,
) -> anyhow::Result<ApiServerRun> {
    std::fs::create_dir_all(dir)?;
    let pki = Pki::generate(&dir.join("pki"))?;
    let etcd_data = TempDir::new("kcm-rs-etcd")?;
    let mut procs = Vec::new();
    // etcd: loopback only; no fsync (a test cluster, thrown away after the run).
    let etcd_port = free_port()?;
    let peer_port = free_port()?;
    let etcd_url = format!("http://127.0.0.1:{etcd_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let etcd_spawned = SystemTime::now();
    procs.push(spawn_logged(
        Command::new(&bins.etcd)
            .arg("--data-dir")
            .arg(etcd_data.path())
            .args(["--name", "default"])
            .arg(format!("--listen-client-urls={etcd_url}"))
            .arg(format!("--advertise-client-urls={etcd_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=default={peer_url}"))
            .args(["--unsafe-no-fsync", "--log-level=warn"]),
        "etcd",
        dir,
    )?);
    wait_for("etcd to be healthy", Duration::from_secs(60), || {
        ensure_running(&mut procs, dir)?;
        Ok(etcd_healthy(etcd_port).then_some(()))
    })?;

    // kube-apiserver.
    let api_port = free_port()?;
    let url = format!("https://127.0.0.1:{api_port}");
    let mut apiserver = Command::new(&bins.kube_apiserver);
    apiserver
        .arg(format!("--etcd-servers={etcd_url}"))
        .args(["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1"])
        .arg(format!("--secure-port={api_port}"))
        .arg(path_flag("--tls-cert-file", &pki.serving_cert))
        .arg(path_flag("--tls-private-key-file", &pki.serving_key))
        .arg(path_flag("--client-ca-file", &pki.ca_cert))
        .args(["--authorization-mode=Node,RBAC", "--allow-privileged=true"])
        .arg(path_flag(
            "--service-account-key-file",
            &pki.service_account_pub,
        ))
        .arg(path_flag(
            "--service-account-signing-key-file",
            &pki.service_account_key,
        ))
        .arg("--service-account-issuer=https://kubernetes.default.svc.cluster.local")
        .args([
            "--service-cluster-ip-range=10.0.0.0/24",
            "--endpoint-reconciler-type=none",
            "--profiling=false",
        ])
        .arg(path_flag("--requestheader-client-ca-file", &pki.ca_cert))
        .args([
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        ])
        .arg(path_flag("--proxy-client-cert-file", &pki.front_proxy_cert))
        .arg(path_flag("--proxy-client-key-file", &pki.front_proxy_key))
        .arg("-v=1");
    if audit_log {
        let audit_policy = dir.join("audit-policy.yaml");
        std::fs::write(&audit_policy, AUDIT_POLICY)?;
        apiserver
            .arg(path_flag("--audit-policy-file", &audit_policy))
            .arg(path_flag("--audit-log-path", &dir.join("audit.log")))
            .args([
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                // 0 would mean lumberjack's default of 100 MB, past which the log is rotated; a
                // benchmark of 3,000 pods writes more than that.
                "--audit-log-maxsize=100000",
            ]);
    }
    if !feature_gates.is_empty() {
        apiserver.arg(format!("--feature-gates={feature_gates}"));
    }
    procs.push(spawn_logged(&mut apiserver, "kube-apiserver", dir)?);

    let admin = dir.join("kubeconfig");
    kubeconfig::write_cert(&admin, &url, &pki.ca_cert, "kcm-rs-admin", &pki.admin)?;
    let cache = dir.join("kubectl-cache");
    wait_for(
        "kube-apiserver to be ready",
        Duration::from_secs(120),
        || {
            ensure_running(&mut procs, dir)?;
            Ok(kubectl(&admin, &cache, &["get", "--raw", "/readyz"], None)
                .ok()
                .filter(|out| out.trim() == "ok")
                .map(|_| ()))
        },
    )?;

    Ok(ApiServerRun {
        procs,
        etcd_spawned,
        etcd_data,
        pki,
        url,
        admin,
        cache,
    })
}

/// Starts the control plane and the simulation in `dir` (the binaries must be built; see
/// [`super::build::build`]). Returns once the API server is ready, kube-controller-manager leads
/// and runs its controllers, the simulated nodes exist, and kcm's ServiceAccount token is written
/// into `dir/kcm.kubeconfig`.
pub fn start(dir: &Path, bins: &Binaries, opts: &Options) -> anyhow::Result<Cluster> {
    let ApiServerRun {
        mut procs,
        etcd_data,
        pki,
        url,
        admin,
        cache,
        ..
    } = start_api_server(dir, bins, &opts.feature_gates, true)?;

    // kube-controller-manager, everything but the controllers kcm replaces.
    let kcm_upstream = dir.join("kube-controller-manager.kubeconfig");
    kubeconfig::write_cert(
        &kcm_upstream,
        &url,
        &pki.ca_cert,
        "system:kube-controller-manager",
        &pki.controller_manager,
    )?;
    let mut controller_manager = Command::new(&bins.kube_controller_manager);
    controller_manager
        .arg(path_flag("--kubeconfig", &kcm_upstream))
        .arg(path_flag("--authentication-kubeconfig", &kcm_upstream))
        .arg(path_flag("--authorization-kubeconfig", &kcm_upstream))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={}", free_port()?))
        .arg(format!("--controllers={}", opts.controllers))
        .arg("--use-service-account-credentials=true")
        .arg(path_flag(
            "--service-account-private-key-file",
            &pki.service_account_key,
        ))
        .arg(path_flag("--root-ca-file", &pki.ca_cert))
        .arg(path_flag("--cluster-signing-cert-file", &pki.ca_cert))
        .arg(path_flag("--cluster-signing-key-file", &pki.ca_key))
        .args(["--profiling=false", "-v=2"])
        .args(&opts.controller_manager_args);
    if !opts.feature_gates.is_empty() {
        controller_manager.arg(format!("--feature-gates={}", opts.feature_gates));
    }
    procs.push(spawn_logged(
        &mut controller_manager,
        "kube-controller-manager",
        dir,
    )?);
    // It leads and runs its controllers once the ServiceAccount controller made `default`.
    wait_for(
        "kube-controller-manager to run its controllers",
        Duration::from_secs(120),
        || {
            ensure_running(&mut procs, dir)?;
            Ok(kubectl(
                &admin,
                &cache,
                &[
                    "get",
                    "serviceaccount",
                    "default",
                    "-n",
                    "default",
                    "-o",
                    "name",
                ],
                None,
            )
            .ok()
            .map(|_| ()))
        },
    )?;

    // kcm's identity: the ServiceAccount and RBAC of deploy/rbac.yaml, and a token for it.
    let rbac = crate::workspace_root().join("deploy").join("rbac.yaml");
    kubectl(
        &admin,
        &cache,
        &["apply", "-f", &rbac.to_string_lossy()],
        None,
    )
    .context("applying deploy/rbac.yaml")?;
    let token = kubectl(
        &admin,
        &cache,
        &[
            "create",
            "token",
            "kcm",
            "-n",
            "kube-system",
            "--duration=48h",
        ],
        None,
    )
    .context("creating a token for the kcm ServiceAccount")?;
    let kcm_kubeconfig = dir.join("kcm.kubeconfig");
    kubeconfig::write_token(
        &kcm_kubeconfig,
        &url,
        &pki.ca_cert,
        "system:serviceaccount:kube-system:kcm",
        token.trim(),
    )?;

    // The nodes, scheduler and kubelets.
    let sim_bin = crate::cluster::target_dir()
        .join("debug")
        .join("kcm-testenv");
    let (sim, _) = spawn_until_ready(
        Command::new(&sim_bin)
            .arg("sim")
            .arg("--kubeconfig")
            .arg(&admin)
            .arg(format!("--nodes={}", opts.nodes))
            .arg(format!("--pod-ready-after={}", opts.pod_ready_after))
            .args(["--no-gc", "--no-namespace-controller"]),
        "sim",
        dir,
        "kcm-testenv sim ready",
    )?;
    procs.push(sim);

    Ok(Cluster::started(
        dir,
        procs,
        vec![etcd_data],
        admin,
        kcm_kubeconfig,
        url,
    ))
}

fn path_flag(flag: &str, path: &Path) -> String {
    format!("{flag}={}", path.display())
}

/// Spawns `cmd` with stdout and stderr into a new `dir/<name>.log`; restartable.
fn spawn_logged(cmd: &mut Command, name: &str, dir: &Path) -> anyhow::Result<Proc> {
    let log_path = dir.join(format!("{name}.log"));
    std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    Proc::spawn_logged(cmd, name, &log_path)
}

/// The control-plane components a chaos schedule restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// etcd (its data folder and ports are kept).
    Etcd,
    /// kube-apiserver (its port, certificates and ServiceAccount keys are kept).
    ApiServer,
}

impl Component {
    /// The process name [`start`] gives it.
    pub fn process_name(self) -> &'static str {
        match self {
            Component::Etcd => "etcd",
            Component::ApiServer => "kube-apiserver",
        }
    }

    /// Its process id in a control plane [`start`] started (`None` in any other cluster), for
    /// reading its CPU from `/proc`. A [`restart`] gives it a new one.
    pub fn pid(self, cluster: &Cluster) -> Option<u32> {
        cluster.with_process(self.process_name(), |p| p.id())
    }
}

/// Kills `component` of a control plane [`start`] started (SIGKILL), starts it again after
/// `down`, and returns once kube-apiserver answers `/readyz` again (which checks etcd), with
/// the time from the kill until then. Every kubectl the harness runs through `cluster` waits
/// meanwhile (a user retrying), while kcm and the node simulation see the outage.
pub fn restart(
    cluster: &Cluster,
    component: Component,
    down: Duration,
) -> anyhow::Result<Duration> {
    let _held = cluster.hold_requests();
    let name = component.process_name();
    let started = Instant::now();
    cluster
        .with_process(name, Proc::kill)
        .with_context(|| format!("no {name} process in this cluster"))?;
    std::thread::sleep(down);
    cluster
        .with_process(name, Proc::respawn)
        .with_context(|| format!("no {name} process in this cluster"))??;
    let cache = cluster.dir().join("kubectl-cache");
    wait_for(
        &format!("kube-apiserver to be ready after the {name} restart"),
        Duration::from_secs(120),
        || {
            if let Some(dead) = cluster.exited_process() {
                bail!(
                    "{dead} exited; see {}",
                    cluster.dir().join(format!("{dead}.log")).display()
                );
            }
            Ok(kubectl(
                &cluster.kubeconfig,
                &cache,
                &["get", "--raw", "/readyz"],
                None,
            )
            .ok()
            .filter(|out| out.trim() == "ok")
            .map(|_| ()))
        },
    )?;
    Ok(started.elapsed())
}

/// Fails with the log's path (and its last lines) when a started process has died.
fn ensure_running(procs: &mut [Proc], dir: &Path) -> anyhow::Result<()> {
    for p in procs.iter_mut() {
        if !p.is_running() {
            let log = dir.join(format!("{}.log", p.name()));
            let tail = std::fs::read_to_string(&log)
                .map(|t| {
                    let lines: Vec<&str> = t.lines().collect();
                    lines[lines.len().saturating_sub(15)..].join("\n")
                })
                .unwrap_or_default();
            bail!(
                "{} exited; its log is {}; last lines:\n{tail}",
                p.name(),
                log.display()
            );
        }
    }
    Ok(())
}

/// `GET /health` on etcd's client port answers `"health":"true"`.
fn etcd_healthy(port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(deadline - Instant::now()));
    if stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body);
    body.contains("\"health\":\"true\"")
}

/// The run folder of a control plane started by `cargo xtask cluster up --upstream`.
pub fn cluster_dir() -> PathBuf {
    crate::cluster::target_dir().join("cluster-upstream")
}

/// Writes to `path` a kubeconfig of this control plane that authenticates as the ServiceAccount
/// `kube-system/<service_account>` (which must exist), with a token valid for two days.
pub fn service_account_kubeconfig(
    cluster: &Cluster,
    service_account: &str,
    path: &Path,
) -> anyhow::Result<()> {
    let token = cluster
        .kubectl(&[
            "create",
            "token",
            service_account,
            "-n",
            "kube-system",
            "--duration=48h",
        ])
        .with_context(|| format!("creating a token for kube-system/{service_account}"))?;
    kubeconfig::write_token(
        path,
        &cluster.url,
        &cluster.dir().join("pki").join("ca.crt"),
        &format!("system:serviceaccount:kube-system:{service_account}"),
        token.trim(),
    )
}
