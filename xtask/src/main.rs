//! `cargo xtask`: the project's developer commands.
//!
//! - `cargo xtask ci`: format check, clippy with `-D warnings`, every test (unit, integration,
//!   doctests) of the workspace. This is the command CI runs.
//! - `cargo xtask demo [--exit]`: the main job — a rollout on an embedded cluster.
//! - `cargo xtask e2e [--kubeconfig PATH ...]`: the end-to-end scenarios, on an embedded cluster
//!   or on any cluster (`cargo xtask e2e --help`).
//! - `cargo xtask bench <name>`: run a benchmark workload; each prints one JSON line per workload.

mod bench;
mod chaos;
mod ci;
mod cluster;
mod cluster_up;
mod demo;
mod diff;
mod e2e;
mod observe;
mod peer_tests;
mod reaper;
mod upstream;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci                 fmt check + clippy -D warnings + all tests (what CI runs)
  demo [--exit]      a rollout told live on an embedded cluster (kcm-testenv + kcm)
  e2e                end-to-end scenarios: kcm binary + kcm-testenv + kubectl, invariant checks
  e2e --kubeconfig PATH [--context NAME] [--no-kcm] ...
                     the same scenarios against a real cluster (see `cargo xtask e2e --help`)
  e2e --cluster upstream
                     the same scenarios on etcd + kube-apiserver + kube-controller-manager
                     v1.37.2 built from upstream/, nodes simulated by kcm-testenv sim
  cluster up [--upstream]
                     start a cluster (kcm-testenv, or the upstream control plane) until Ctrl-C
  diff [--only NAME,...] [--runs N]
                     every scenario under upstream's controllers and under kcm, compared
  chaos [--schedules N] [--seed S] [--replay SEED]
                     seeded fault schedules (testenv faults, kcm kills, takeovers) with
                     invariant and convergence checks; a failure prints its replay command
  upstream build     build etcd, kube-apiserver, kube-controller-manager from upstream/ (Go)
  peer-tests [--cluster testenv|upstream|both] [--only NAME,...]
                     kube-rs's own cluster tests on kcm-testenv and on kube-apiserver, compared
  bench <name>...    run benchmark workloads (names: see `cargo xtask bench --list`)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    reaper::install();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(&args[1..]),
        Some("chaos") => chaos::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("demo") => demo::run(&args[1..]),
        Some("e2e") => e2e::run(&args[1..]),
        Some("cluster") => cluster_up::run(&args[1..]),
        Some("diff") => diff::run(&args[1..]),
        Some("upstream") => upstream::run(&args[1..]),
        Some("peer-tests") => peer_tests::run(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(anyhow::anyhow!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a command from the workspace root, echoing it first, and fails if it fails.
pub(crate) fn run_cmd(program: &str, args: &[&str]) -> anyhow::Result<()> {
    eprintln!("xtask: $ {program} {}", args.join(" "));
    let status = std::process::Command::new(program)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .map_err(|e| anyhow::anyhow!("could not start `{program}`: {e}"))?;
    if !status.success() {
        anyhow::bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// The workspace root: the parent of this crate's manifest directory.
pub(crate) fn workspace_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}
