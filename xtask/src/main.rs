//! `cargo xtask`: the project's developer commands.
//!
//! - `cargo xtask ci`: format check, the house rules, clippy with `-D warnings`, every test
//!   (unit, integration, doctests) of the workspace, the documentation, the public API against
//!   its baselines, packaging. This is the command CI runs.
//! - `cargo xtask api [--bless]`: each library crate's public items against `api/<crate>.txt`.
//! - `cargo xtask house`: the house rules alone (module circles, crate layers, file lengths, the
//!   upstream map, citations).
//! - `cargo xtask demo [--exit]`: the main job — a rollout on an embedded cluster.
//! - `cargo xtask e2e [--kubeconfig PATH ...]`: the end-to-end scenarios, on an embedded cluster
//!   or on any cluster (`cargo xtask e2e --help`).
//! - `cargo xtask upstream-e2e`: upstream's own Deployment and ReplicaSet e2e tests under
//!   kube-controller-manager and under kcm, compared (`cargo xtask upstream-e2e --help`).
//! - `cargo xtask bench <name>`: run a benchmark workload; each prints one JSON line per workload.

mod api;
mod bench;
mod chaos;
mod ci;
mod cluster;
mod cluster_up;
mod demo;
mod diff;
mod e2e;
mod house;
mod observe;
mod peer_tests;
mod reaper;
mod svg;
mod timestamps;
mod upstream;
mod upstream_e2e;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci                 fmt check + house rules + clippy -D warnings + all tests + docs +
                     public API check + packaging (what CI runs)
  api [--bless]      each library crate's public items against api/<crate>.txt (--bless
                     rewrites the baselines)
  house              the house rules: no module circle, no upward crate arrow, no file over
                     600 lines, every library file in docs/upstream-map.md, no citation of a
                     document outside the repository
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
  upstream-e2e [--controllers kcm|upstream|both] [--focus RE] [--skip RE]
                     upstream's own Deployment and ReplicaSet e2e tests (e2e.test) under
                     kube-controller-manager's controllers and under kcm's, compared
  peer-tests [--cluster testenv|upstream|both] [--only NAME,...]
                     kube-rs's own cluster tests on kcm-testenv and on kube-apiserver, compared
  bench <name>...    run benchmark workloads (names: see `cargo xtask bench --list`)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    reaper::install();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(&args[1..]),
        Some("api") => api::run(&args[1..]),
        Some("chaos") => chaos::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("demo") => demo::run(&args[1..]),
        Some("e2e") => e2e::run(&args[1..]),
        Some("cluster") => cluster_up::run(&args[1..]),
        Some("diff") => diff::run(&args[1..]),
        Some("house") => house::run(&args[1..]),
        Some("upstream") => upstream::run(&args[1..]),
        Some("upstream-e2e") => upstream_e2e::run(&args[1..]),
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
    let mut cmd = std::process::Command::new(program);
    if program == "cargo" {
        without_cargo_run_env(&mut cmd);
    }
    let status = cmd
        .args(args)
        .current_dir(workspace_root())
        .status()
        .map_err(|e| anyhow::anyhow!("could not start `{program}`: {e}"))?;
    if !status.success() {
        anyhow::bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Drops the variables `cargo run` gives xtask about itself (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_NAME`, ...) from a nested cargo's environment. Build scripts such as ring's ask
/// to rerun when these change, and cargo compares them with its own environment: a nested
/// `cargo build` that sees `CARGO_PKG_NAME=xtask` where the `cargo run` that built xtask saw
/// none rebuilds ring and everything above it (2 minutes and more on a 2-core machine), and the
/// next `cargo xtask` rebuilds them back.
pub(crate) fn without_cargo_run_env(cmd: &mut std::process::Command) {
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(is_cargo_run_var) {
            cmd.env_remove(key);
        }
    }
}

/// The variables cargo sets for the binary it runs (not those that configure cargo itself,
/// such as `CARGO_HOME` or `CARGO_TARGET_DIR`).
fn is_cargo_run_var(key: &str) -> bool {
    key.starts_with("CARGO_PKG_")
        || key.starts_with("CARGO_MANIFEST_")
        || matches!(
            key,
            "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE" | "OUT_DIR"
        )
}

/// The workspace root: the parent of this crate's manifest directory.
pub(crate) fn workspace_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::is_cargo_run_var;

    #[test]
    fn nested_cargo_forgets_what_cargo_run_said_about_xtask() {
        for key in [
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "OUT_DIR",
        ] {
            assert!(is_cargo_run_var(key), "{key}");
        }
        for key in [
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_INCREMENTAL",
            "CARGO",
            "PATH",
        ] {
            assert!(!is_cargo_run_var(key), "{key}");
        }
    }
}
