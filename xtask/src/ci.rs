//! `cargo xtask ci`: what CI runs, in the order that fails fastest.

use std::time::Instant;

use crate::run_cmd;
use crate::workspace::library_selection;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(extra) = args.first() {
        anyhow::bail!("`cargo xtask ci` takes no arguments (got `{extra}`)");
    }
    timed(|| run_cmd("cargo", &["fmt", "--all", "--", "--check"]))?;
    // The house rules read the sources only: seconds, and a broken rule fails before a build.
    timed(|| crate::house::run(&[]))?;
    timed(|| {
        run_cmd(
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
        )
    })?;
    timed(|| run_cmd("cargo", &["test", "--workspace", "--locked"]))?;
    timed(docs)?;
    // After the documentation step, whose dependency builds it reuses.
    timed(|| crate::api::run(&[]))?;
    timed(package)?;
    eprintln!("xtask: ci passed");
    Ok(())
}

/// The library crates' rustdoc builds without a warning (broken links, bare URLs, ...).
fn docs() -> anyhow::Result<()> {
    let mut args = vec!["doc", "--no-deps", "--locked"];
    args.extend(library_selection());
    let old = std::env::var_os("RUSTDOCFLAGS");
    let flags = match &old {
        Some(f) => format!("{} -D warnings", f.to_string_lossy()),
        None => "-D warnings".to_string(),
    };
    eprintln!(
        "xtask: $ K8S_OPENAPI_ENABLED_VERSION=1.37 RUSTDOCFLAGS={flags:?} cargo {}",
        args.join(" ")
    );
    let status = std::process::Command::new("cargo")
        .args(&args)
        .env("RUSTDOCFLAGS", &flags)
        // The libraries pick no k8s-openapi version and `cargo doc` builds no dev-dependency
        // that would: name one as docs.rs does (package.metadata.docs.rs).
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .current_dir(crate::workspace_root())
        .status()
        .map_err(|e| anyhow::anyhow!("could not start `cargo`: {e}"))?;
    if !status.success() {
        anyhow::bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Every library crate packages as it would be published. `--no-verify`: a crate's package
/// cannot be built on its own while the kcm-rs crates it depends on are not on crates.io.
fn package() -> anyhow::Result<()> {
    let mut args = vec!["package", "--no-verify", "--locked", "--allow-dirty"];
    args.extend(library_selection());
    run_cmd("cargo", &args)
}

/// Runs one step and says how long it took (CI's budget is per run, on 2 cores).
fn timed(step: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    let start = Instant::now();
    let result = step();
    eprintln!("xtask: step took {:.0?}", start.elapsed());
    result
}
