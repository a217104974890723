//! The real Kubernetes control plane in the loop: `cargo xtask upstream build` builds etcd,
//! kube-apiserver and kube-controller-manager from the Go module in `upstream/`, and
//! [`control_plane::start`] runs them on loopback (used by `cargo xtask cluster up --upstream`
//! and `cargo xtask e2e --cluster upstream`).

pub mod build;
pub mod control_plane;
mod gen_testenv;
mod gen_testenv_bootstrap;
mod gen_testenv_gotypes;
mod gen_testenv_schemas;
mod gen_testenv_table;
mod kubeconfig;
mod pki;

const USAGE: &str = "usage: cargo xtask upstream build
       cargo xtask upstream gen-testenv [--check]

Builds etcd, kube-apiserver and kube-controller-manager from the Go module in upstream/
(versions pinned by upstream/go.mod and go.sum) into target/upstream/<version>/bin/, reusing
an up-to-date build. Needs Go 1.26 or newer and the Go module proxy; the first build takes
10-15 minutes on 2 cores.

gen-testenv regenerates kcm-testenv's built-in resource table (testenv/src/registry/builtin.rs,
from the discovery documents of kube-apiserver started on loopback) and type schemas
(testenv/src/registry/schema/definitions.rs, from upstream's OpenAPI v3 documents in Go's
module cache, descriptions left out); --check only compares them with the committed files.
";

/// `cargo xtask upstream <command>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    match args.first().map(String::as_str) {
        Some("build") if args.len() == 1 => {
            let bins = build::build()?;
            println!("etcd                    {}", bins.etcd.display());
            println!("kube-apiserver          {}", bins.kube_apiserver.display());
            println!(
                "kube-controller-manager {}",
                bins.kube_controller_manager.display()
            );
            Ok(())
        }
        Some("gen-testenv") if args.len() == 1 => gen_testenv::run(false),
        Some("gen-testenv") if args.len() == 2 && args[1] == "--check" => gen_testenv::run(true),
        Some("-h" | "--help") | None => {
            print!("{USAGE}");
            Ok(())
        }
        _ => anyhow::bail!("unknown arguments {args:?}\n\n{USAGE}"),
    }
}
