//! `cargo xtask api [--bless]`: each library crate's public API against its committed baseline
//! `api/<crate>.txt` (one sorted line per public item, see [`rustdoc_json`]), so that growing or
//! changing it is a decision. Without `--bless` a difference fails with the lines that differ;
//! `--bless` writes the baselines from the tree. Run by `cargo xtask ci`.
//!
//! The items come from rustdoc's JSON output, an unstable rustdoc feature used on the stable
//! toolchain (`RUSTC_BOOTSTRAP=1`), for the library crates as `cargo xtask ci`'s documentation
//! step builds them (one `cargo doc`, the same selection and features, so the dependencies it
//! checked are reused): an item behind a feature no library enables is not listed.

mod line_diff;
mod rustdoc_json;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::workspace::{Workspace, library_selection};

/// Where the baselines live, relative to the workspace root.
const BASELINES: &str = "api";

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let bless = match args {
        [] => false,
        [flag] if flag == "--bless" => true,
        _ => bail!(
            "usage: cargo xtask api [--bless] (got `{}`)",
            args.join(" ")
        ),
    };
    let ws = Workspace::read()?;
    build_json()?;
    let doc_dir = crate::cluster::target_dir().join("doc");
    let dir = ws.workspace_root.join(BASELINES);
    let mut differences = Vec::new();
    let mut expected = Vec::new();
    for p in ws.libraries() {
        let lines = crate_items(&doc_dir, &p.name)?;
        let baseline = baseline_path(&dir, &p.name);
        expected.push(baseline.clone());
        let rel = ws.relative(&baseline);
        if bless {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(
                &baseline,
                lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
            )
            .with_context(|| format!("writing {rel}"))?;
            eprintln!("xtask: api: {rel}: {} public items", lines.len());
            continue;
        }
        let old: Vec<String> = match std::fs::read_to_string(&baseline) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {rel}")),
        };
        let changed = line_diff::diff(&old, &lines);
        if !changed.is_empty() {
            differences.push(format!(
                "--- {rel} (baseline)\n+++ {} (this tree)\n{}",
                p.name,
                changed.join("\n")
            ));
        }
    }
    for stale in stale_baselines(&dir, &expected)? {
        let rel = ws.relative(&stale);
        if bless {
            std::fs::remove_file(&stale).with_context(|| format!("removing {rel}"))?;
            eprintln!("xtask: api: removed {rel} (no such library crate)");
        } else {
            differences.push(format!("--- {rel} (baseline of no library crate)"));
        }
    }
    if !differences.is_empty() {
        bail!(
            "the public API differs from its baselines:\n\n{}\n\nIf the change is intended, run \
             `cargo xtask api --bless` and commit {BASELINES}/ with it.",
            differences.join("\n\n")
        );
    }
    if !bless {
        eprintln!("xtask: api: every library crate's public API matches {BASELINES}/");
    }
    Ok(())
}

/// Documents the library crates as JSON (`target/doc/<crate>.json`).
fn build_json() -> anyhow::Result<()> {
    let mut args = vec!["doc", "--no-deps", "--locked"];
    args.extend(library_selection());
    let flags = "-Z unstable-options --output-format json";
    eprintln!(
        "xtask: $ RUSTC_BOOTSTRAP=1 K8S_OPENAPI_ENABLED_VERSION=1.37 RUSTDOCFLAGS={flags:?} cargo {}",
        args.join(" ")
    );
    let status = std::process::Command::new("cargo")
        .args(&args)
        // rustdoc's JSON output is unstable; this reads its format version before trusting it.
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTDOCFLAGS", flags)
        // As the documentation step: the libraries pick no k8s-openapi version.
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .current_dir(crate::workspace_root())
        .status()
        .context("could not start `cargo`")?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// The public item lines of crate `name`, from its JSON in `doc_dir`.
fn crate_items(doc_dir: &Path, name: &str) -> anyhow::Result<Vec<String>> {
    let json = doc_dir.join(format!("{}.json", name.replace('-', "_")));
    let bytes = std::fs::read(&json).with_context(|| format!("reading {}", json.display()))?;
    let doc: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("parsing {} as JSON", json.display()))?;
    rustdoc_json::public_items(&doc).with_context(|| format!("the public items of {name}"))
}

fn baseline_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.txt"))
}

/// Baselines in `dir` that belong to no library crate (`expected` are those that do).
fn stale_baselines(dir: &Path, expected: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut stale = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "txt") && !expected.contains(&path) {
            stale.push(path);
        }
    }
    stale.sort();
    Ok(stale)
}
