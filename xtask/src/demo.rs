//! `cargo xtask demo`: a rollout told live on an embedded cluster.
//!
//! Starts `kcm-testenv` (3 simulated nodes, pods Ready 1.5 s after they start) and `kcm` as
//! separate processes, prints how to point kubectl at the cluster, then: creates a Deployment of
//! 10 replicas, rolls it to a new image, scales it to 15 in the middle of the rollout
//! (proportional scaling), rolls back with `kubectl rollout undo`, and writes an SVG timeline.
//! The cluster keeps running until Ctrl-C unless `--exit` is given.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cluster::{Cluster, build_binaries};
use crate::observe::{Observer, write_timeline};

const NS: &str = "default";
const NAME: &str = "web";

fn deployment_manifest(image: &str) -> String {
    serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NS, "annotations": {"kubernetes.io/change-cause": format!("create with {image}")}},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": NAME}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        }
    })
    .to_string()
}

/// Whether the Deployment finished rolling out (what `kubectl rollout status` waits for).
fn rollout_complete(cluster: &Cluster) -> anyhow::Result<bool> {
    let d = cluster.get_json(&["deployment", NAME, "-n", NS])?;
    let spec = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &d["status"];
    let gen_ok = st["observedGeneration"].as_i64().unwrap_or(0)
        >= d["metadata"]["generation"].as_i64().unwrap_or(0);
    Ok(gen_ok
        && st["updatedReplicas"].as_i64().unwrap_or(0) == spec
        && st["replicas"].as_i64().unwrap_or(0) == spec
        && st["availableReplicas"].as_i64().unwrap_or(0) == spec)
}

fn watch_until(
    cluster: &Cluster,
    obs: &mut Observer,
    what: &str,
    timeout: Duration,
    mut done: impl FnMut(&Cluster) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        obs.observe(cluster, NS, NAME)?;
        if done(cluster)? {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}

fn step(n: u32, text: &str) {
    println!("\n\x1b[1m{n}. {text}\x1b[0m");
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut exit = false;
    for a in args {
        match a.as_str() {
            "--exit" => exit = true,
            other => anyhow::bail!("unknown argument `{other}` (usage: cargo xtask demo [--exit])"),
        }
    }
    build_binaries()?;
    let dir = crate::cluster::target_dir().join("demo");
    let _ = std::fs::remove_dir_all(&dir);
    let cluster = Cluster::start(&dir, &["--nodes", "3", "--pod-ready-after", "1500ms"])
        .context("starting the embedded cluster")?;
    let _kcm = cluster.start_kcm("kcm", &[])?;
    println!(
        "\nAn embedded cluster runs at {} with 3 simulated nodes; kcm runs against it.",
        cluster.url
    );
    println!(
        "Use kubectl on it from another terminal:\n\n    export KUBECONFIG={}\n    kubectl get deploy,rs,pods\n",
        cluster.kubeconfig.display()
    );
    println!("kcm's log: {}", dir.join("kcm.log").display());

    let mut obs = Observer::new(false);
    let mut marks: Vec<(f64, String)> = Vec::new();
    let long = Duration::from_secs(120);
    let started = Instant::now();

    step(
        1,
        "Create Deployment web: 10 replicas of nginx:1.25 (maxSurge 25%, maxUnavailable 25%)",
    );
    cluster.kubectl_stdin(&["apply", "-f", "-"], &deployment_manifest("nginx:1.25"))?;
    marks.push((started.elapsed().as_secs_f64(), "create".into()));
    watch_until(
        &cluster,
        &mut obs,
        "the first rollout",
        long,
        rollout_complete,
    )?;

    step(
        2,
        "Roll to nginx:1.26 (kubectl set image): old and new ReplicaSets trade pods within the surge limit",
    );
    marks.push((started.elapsed().as_secs_f64(), "set image".into()));
    cluster.kubectl(&["set", "image", "deployment/web", "nginx=nginx:1.26"])?;
    cluster.kubectl(&[
        "annotate",
        "deployment/web",
        "kubernetes.io/change-cause=set image nginx:1.26",
        "--overwrite",
    ])?;
    let t0 = Instant::now();
    watch_until(&cluster, &mut obs, "the rollout to start", long, |_| {
        Ok(t0.elapsed() > Duration::from_millis(2500))
    })?;

    step(
        3,
        "Scale to 15 in the middle of the rollout (kubectl scale): the extra replicas are split proportionally",
    );
    marks.push((started.elapsed().as_secs_f64(), "scale 15".into()));
    cluster.kubectl(&["scale", "deployment/web", "--replicas=15"])?;
    watch_until(
        &cluster,
        &mut obs,
        "the rollout to nginx:1.26",
        long,
        rollout_complete,
    )?;

    step(
        4,
        "Roll back (kubectl rollout undo): the first ReplicaSet becomes the new one again, no new ReplicaSet",
    );
    marks.push((started.elapsed().as_secs_f64(), "rollout undo".into()));
    cluster.kubectl(&["rollout", "undo", "deployment/web"])?;
    let t0 = Instant::now();
    watch_until(&cluster, &mut obs, "the rollback", long, |c| {
        Ok(t0.elapsed() > Duration::from_secs(1) && rollout_complete(c)?)
    })?;

    println!("\nWhat kubectl shows now:\n");
    print!(
        "{}",
        cluster.kubectl(&["get", "deployment,replicasets", "-n", NS])?
    );
    println!();
    print!(
        "{}",
        cluster.kubectl(&["rollout", "history", "deployment/web"])?
    );
    let rs = cluster.get_json(&["replicasets", "-n", NS])?;
    let count = rs["items"].as_array().map(Vec::len).unwrap_or(0);
    anyhow::ensure!(
        count == 2,
        "expected 2 ReplicaSets after the rollback (no new one), found {count}"
    );

    let svg: PathBuf = crate::cluster::target_dir()
        .join("e2e")
        .join("demo-timeline.svg");
    write_timeline(
        &svg,
        "cargo xtask demo: Deployment web",
        &obs.samples,
        &marks,
    )?;
    println!(
        "\nTimeline (replicas per ReplicaSet and available pods over time): {}",
        svg.display()
    );

    if exit {
        return Ok(());
    }
    println!("\nThe cluster keeps running; press Ctrl-C to stop it.");
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
