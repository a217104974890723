//! The client side of `cargo xtask bench testenv`: one workload, the same kube-client code,
//! against any API server reached through a kubeconfig (kcm-testenv, or kube-apiserver + etcd).
//! Prints one JSON line per mode.
//!
//! * `embedded` — `TestEnv::start` in this process, then a client built from the kubeconfig
//!   it wrote: the time to its first `/readyz` answered `ok` and its first list of ConfigMaps.
//! * `ready --kubeconfig FILE` — started before the server: prints `waiting for FILE`, waits
//!   for the kubeconfig to appear and parse, then polls `/readyz` until `ok` and lists
//!   ConfigMaps; prints the wall-clock instants (`*_unix_ns`) so the caller subtracts the
//!   instant it spawned the server, then a line with what the server serves.
//! * `workload --kubeconfig FILE --pid P [--pid Q]` — 1,000 ConfigMaps server-side applied
//!   (64 in flight), listed whole and in pages of 100, then a watch from the whole list's
//!   resourceVersion while all 1,000 are applied again with changed data, until it has
//!   received the 1,000 updates. Per phase: wall time and the CPU time (utime + stime) of the
//!   server processes `P`, `Q` (read from `/proc`); at the end their peak RSS (VmHWM).
//!
//! After `embedded` and `ready`, the served resources are counted from aggregated discovery
//! (outside the timings).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kcm_util::proc_stats::{peak_rss_kib, pid_cpu_ms, pid_status_kib, process_cpu_ms};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::Discovery;
use kube::{Client, Config};
use serde_json::{Value, json};

const OBJECTS: usize = 1_000;
const IN_FLIGHT: usize = 64;
const PAGE: u32 = 100;
const NAMESPACE: &str = "bench";
const SELECTOR: &str = "app=bench-apiserver";
const MANAGER: &str = "bench-apiserver";
/// Bytes of data per ConfigMap (besides its index and round).
const PAYLOAD: usize = 256;

fn now_unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

/// How long to wait before asking again, `elapsed` into a start: 1 ms at first, then 1 % of the
/// time waited so far (at most 20 ms), so a start of milliseconds is timed to the millisecond
/// and one of seconds is not slowed by thousands of requests.
fn poll_interval(elapsed: Duration) -> Duration {
    (elapsed / 100).clamp(Duration::from_millis(1), Duration::from_millis(20))
}

/// A client from the kubeconfig at `path` (its current context).
async fn client_from(path: &Path) -> anyhow::Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path)
        .with_context(|| format!("reading kubeconfig {}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("kubeconfig {}", path.display()))?;
    Client::try_from(config).context("building a client")
}

/// `GET /readyz` answered `ok`.
async fn ready(client: &Client) -> bool {
    let Ok(request) = http::Request::get("/readyz").body(Vec::new()) else {
        return false;
    };
    client
        .request_text(request)
        .await
        .is_ok_and(|text| text.trim() == "ok")
}

/// Waits for the kubeconfig at `path`, then for `/readyz` and a first list of ConfigMaps;
/// returns the client and the instants (wall clock) of the first `ok` and the first list.
async fn wait_ready(path: &Path, timeout: Duration) -> anyhow::Result<(Client, u128, u128)> {
    let start = Instant::now();
    let mut last_err = String::from("no kubeconfig yet");
    let client = loop {
        if start.elapsed() > timeout {
            bail!("no usable kubeconfig at {} ({last_err})", path.display());
        }
        if path.exists() {
            match client_from(path).await {
                Ok(c) => break c,
                // Written but not complete yet, or not valid: read it again.
                Err(e) => last_err = format!("{e:#}"),
            }
        }
        tokio::time::sleep(poll_interval(start.elapsed())).await;
    };
    while !ready(&client).await {
        if start.elapsed() > timeout {
            bail!("/readyz did not answer ok within {timeout:?}");
        }
        tokio::time::sleep(poll_interval(start.elapsed())).await;
    }
    let ready_at = now_unix_ns();
    let configmaps: Api<ConfigMap> = Api::all(client.clone());
    loop {
        match configmaps.list(&ListParams::default()).await {
            Ok(_) => break,
            Err(e) if start.elapsed() > timeout => bail!("listing ConfigMaps: {e}"),
            Err(_) => tokio::time::sleep(poll_interval(start.elapsed())).await,
        }
    }
    Ok((client, ready_at, now_unix_ns()))
}

/// Groups and resources (preferred versions, no subresources) of aggregated discovery.
async fn served(client: &Client) -> anyhow::Result<(usize, usize)> {
    let discovery = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .context("aggregated discovery")?;
    let groups = discovery.groups().count();
    let resources = discovery
        .groups()
        .map(|g| g.recommended_resources().len())
        .sum();
    Ok((groups, resources))
}

async fn embedded() -> anyhow::Result<Value> {
    let t0 = Instant::now();
    let t0_unix = now_unix_ns();
    let env = TestEnv::start(TestEnvConfig::default()).await?;
    let started = t0.elapsed();
    let (client, ready_at, listed_at) =
        wait_ready(env.kubeconfig_path(), Duration::from_secs(30)).await?;
    let (groups, resources) = served(&client).await?;
    let out = json!({
        "workload": "start",
        "impl": "kcm-testenv-embedded",
        "start_call_ms": ms(started),
        "ready_ms": ms(Duration::from_nanos((ready_at - t0_unix) as u64)),
        "first_list_ms": ms(Duration::from_nanos((listed_at - t0_unix) as u64)),
        "groups": groups,
        "resources": resources,
        "peak_rss_kb": peak_rss_kib(),
    });
    env.shutdown().await;
    Ok(out)
}

/// Says it waits (the caller spawns the server then), prints the instants as soon as the
/// server is ready (the caller reads the server's CPU then), and returns what it serves.
async fn ready_mode(kubeconfig: &Path) -> anyhow::Result<Value> {
    println!("waiting for {}", kubeconfig.display());
    std::io::stdout().flush()?;
    let (client, ready_at, listed_at) = wait_ready(kubeconfig, Duration::from_secs(180)).await?;
    let ready = json!({
        "workload": "start",
        "ready_unix_ns": ready_at.to_string(),
        "first_list_unix_ns": listed_at.to_string(),
    });
    println!("{ready}");
    std::io::stdout().flush()?;
    let (groups, resources) = served(&client).await?;
    Ok(json!({"groups": groups, "resources": resources}))
}

/// The summed CPU time of the server processes, in ms.
fn servers_cpu_ms(pids: &[u32]) -> anyhow::Result<u64> {
    pids.iter()
        .map(|p| pid_cpu_ms(*p).with_context(|| format!("reading /proc/{p}/stat")))
        .sum()
}

fn configmap(i: usize, round: usize) -> Value {
    let payload: String =
        std::iter::repeat_n(char::from(b'a' + (round % 26) as u8), PAYLOAD).collect();
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{i:04}"), "labels": {"app": "bench-apiserver"}},
        "data": {"index": i.to_string(), "round": round.to_string(), "payload": payload},
    })
}

/// Applies all objects with `round`'s data, `IN_FLIGHT` at a time.
async fn apply_all(api: &Api<ConfigMap>, round: usize) -> anyhow::Result<()> {
    let params = PatchParams::apply(MANAGER).force();
    let failed = stream::iter(0..OBJECTS)
        .map(|i| {
            let (api, params) = (api.clone(), params.clone());
            async move {
                let name = format!("cm-{i:04}");
                api.patch(&name, &params, &Patch::Apply(configmap(i, round)))
                    .await
                    .err()
                    .map(|e| format!("{name}: {e}"))
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .filter_map(|e| async move { e })
        .collect::<Vec<_>>()
        .await;
    match failed.first() {
        None => Ok(()),
        Some(e) => bail!("{} of {OBJECTS} applies failed, e.g. {e}", failed.len()),
    }
}

/// One phase's figures: wall ms and server CPU ms.
struct Phase {
    wall: Instant,
    cpu: u64,
}

impl Phase {
    fn start(pids: &[u32]) -> anyhow::Result<Phase> {
        Ok(Phase {
            wall: Instant::now(),
            cpu: servers_cpu_ms(pids)?,
        })
    }

    /// Writes `<name>_ms` and `<name>_server_cpu_ms` into `out`.
    fn end(self, name: &str, pids: &[u32], out: &mut Value) -> anyhow::Result<()> {
        out[format!("{name}_ms")] = ms(self.wall.elapsed()).into();
        out[format!("{name}_server_cpu_ms")] = (servers_cpu_ms(pids)? - self.cpu).into();
        Ok(())
    }
}

async fn workload(kubeconfig: &Path, pids: &[u32]) -> anyhow::Result<Value> {
    let client = client_from(kubeconfig).await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    match namespaces
        .create(&PostParams::default(), &serde_json::from_value(ns)?)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => bail!("creating namespace {NAMESPACE}: {e}"),
    }
    let api: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
    let client_cpu = process_cpu_ms();
    let all_cpu = servers_cpu_ms(pids)?;
    let mut out =
        json!({"workload": "apply_list_watch", "objects": OBJECTS, "in_flight": IN_FLIGHT});

    let phase = Phase::start(pids)?;
    apply_all(&api, 1).await?;
    phase.end("apply", pids, &mut out)?;

    let phase = Phase::start(pids)?;
    let list = api.list(&ListParams::default().labels(SELECTOR)).await?;
    phase.end("list", pids, &mut out)?;
    if list.items.len() != OBJECTS {
        bail!("the list has {} objects, not {OBJECTS}", list.items.len());
    }
    let rv = list.metadata.resource_version.unwrap_or_default();

    let phase = Phase::start(pids)?;
    let (mut paged, mut pages) = (0, 0);
    let mut params = ListParams::default().labels(SELECTOR).limit(PAGE);
    loop {
        let page = api.list(&params).await?;
        paged += page.items.len();
        pages += 1;
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => params = params.continue_token(&c),
            None => break,
        }
    }
    phase.end("paged_list", pids, &mut out)?;
    if paged != OBJECTS {
        bail!("the paged list has {paged} objects, not {OBJECTS}");
    }
    out["pages"] = pages.into();

    // The watch is open before the writes start; the phase runs until it has every update.
    let events = api
        .watch(&WatchParams::default().labels(SELECTOR).timeout(290), &rv)
        .await?;
    let watcher = tokio::spawn(async move {
        let mut events = events.boxed();
        let mut updates = 0;
        while updates < OBJECTS {
            match events.try_next().await {
                Ok(Some(WatchEvent::Modified(_))) => updates += 1,
                Ok(Some(WatchEvent::Error(e))) => return Err(format!("watch error: {e:?}")),
                Ok(Some(_)) => {}
                Ok(None) => return Err(format!("the watch ended after {updates} updates")),
                Err(e) => return Err(format!("watch: {e}")),
            }
        }
        Ok(Instant::now())
    });
    let phase = Phase::start(pids)?;
    let t = Instant::now();
    apply_all(&api, 2).await?;
    out["reapply_ms"] = ms(t.elapsed()).into();
    let received = tokio::time::timeout(Duration::from_secs(120), watcher)
        .await
        .context("the watch did not receive every update within 120 s")?
        .context("the watcher task")?
        .map_err(|e| anyhow::anyhow!(e))?;
    out["watch_all_ms"] = ms(received - t).into();
    phase.end("reapply_watch", pids, &mut out)?;

    out["server_cpu_ms"] = (servers_cpu_ms(pids)? - all_cpu).into();
    out["client_cpu_ms"] = (process_cpu_ms() - client_cpu).into();
    let mut rss = 0;
    for pid in pids {
        let kib = pid_status_kib(*pid, "VmHWM").with_context(|| format!("VmHWM of {pid}"))?;
        out[format!("peak_rss_kb_{pid}")] = kib.into();
        rss += kib;
    }
    out["server_peak_rss_kb"] = rss.into();
    Ok(out)
}

/// `--kubeconfig FILE` and every `--pid N`.
fn parse_flags(args: &[String]) -> anyhow::Result<(PathBuf, Vec<u32>)> {
    let (mut kubeconfig, mut pids) = (None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = it.next().with_context(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--kubeconfig" => kubeconfig = Some(PathBuf::from(value)),
            "--pid" => pids.push(value.parse().with_context(|| format!("--pid {value}"))?),
            other => bail!("unknown flag {other}"),
        }
    }
    Ok((kubeconfig.context("--kubeconfig is required")?, pids))
}

async fn run(args: &[String]) -> anyhow::Result<Value> {
    let (mode, rest) = args
        .split_first()
        .context("usage: bench_apiserver embedded | ready --kubeconfig F | workload --kubeconfig F --pid P...")?;
    match mode.as_str() {
        "embedded" => embedded().await,
        "ready" => ready_mode(&parse_flags(rest)?.0).await,
        "workload" => {
            let (kubeconfig, pids) = parse_flags(rest)?;
            if pids.is_empty() {
                bail!("workload needs the server's --pid");
            }
            workload(&kubeconfig, &pids).await
        }
        other => bail!("unknown mode {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("tokio runtime")
        .and_then(|rt| rt.block_on(run(&args)));
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("bench_apiserver: {e:#}");
            std::process::exit(1);
        }
    }
}
