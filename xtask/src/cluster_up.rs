//! `cargo xtask cluster up [--upstream]`: a cluster to use by hand, until Ctrl-C.
//!
//! Without `--upstream`: `kcm-testenv` (3 simulated nodes). With it: etcd, kube-apiserver and
//! kube-controller-manager built from `upstream/` (its Deployment and ReplicaSet controllers off)
//! and the node simulation. Either way kcm is not started: run it with the printed kubeconfig.

use std::time::Duration;

use anyhow::bail;

use crate::cluster::{Cluster, build, target_dir};
use crate::upstream::{build as upstream_build, control_plane};

const USAGE: &str = "usage: cargo xtask cluster up [--upstream] [--nodes N] [--feature-gates GATES]

Starts a cluster and prints the kubeconfig to use with kubectl and kcm; Ctrl-C stops every
process and removes etcd's data.

  --upstream             etcd + kube-apiserver + kube-controller-manager v1.37.2 built from
                         upstream/ (cargo xtask upstream build), with
                         --controllers=*,-deployment-controller,-replicaset-controller, and the
                         simulated nodes of `kcm-testenv sim`; kcm's ServiceAccount token is in
                         kcm.kubeconfig next to the admin kubeconfig
  --nodes N              simulated nodes (default 3)
  --feature-gates GATES  passed to kube-apiserver and kube-controller-manager (--upstream only)
";

/// Runs `cargo xtask cluster <args>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut upstream = false;
    let mut nodes = 3usize;
    let mut gates = String::new();
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("up") => {}
        Some("-h" | "--help") | None => {
            print!("{USAGE}");
            return Ok(());
        }
        Some(other) => bail!("unknown cluster command `{other}`\n\n{USAGE}"),
    }
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--upstream" => upstream = true,
            "--nodes" => {
                let v = it.next().map(String::as_str).unwrap_or_default();
                nodes =
                    v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        anyhow::anyhow!("--nodes wants a positive count, got {v:?}")
                    })?;
            }
            "--feature-gates" => gates = it.next().cloned().unwrap_or_default(),
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown flag `{other}`\n\n{USAGE}"),
        }
    }
    build(&["kcm-testenv-cli"])?;
    let cluster = if upstream {
        let bins = upstream_build::build()?;
        let opts = control_plane::Options {
            nodes,
            feature_gates: gates,
            ..control_plane::Options::default()
        };
        control_plane::start(&control_plane::cluster_dir(), &bins, &opts)?
    } else {
        let dir = target_dir().join("cluster-testenv");
        Cluster::start(&dir, &["--nodes", &nodes.to_string()])?
    };
    println!("cluster up at {}", cluster.url);
    println!("  export KUBECONFIG={}", cluster.kubeconfig.display());
    if upstream {
        println!(
            "  kcm: cargo run -p kcm -- --kubeconfig {}",
            cluster.kcm_kubeconfig.display()
        );
        println!("  audit log: {}", cluster.dir().join("audit.log").display());
    }
    println!("  logs: {}/*.log", cluster.dir().display());
    println!("Ctrl-C stops it.");
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if let Some(name) = cluster.exited_process() {
            bail!(
                "{name} exited; see {}",
                cluster.dir().join(format!("{name}.log")).display()
            );
        }
    }
}
