//! The scratch workspace kube-rs's tests are built in, under `target/peer-tests/`: the published
//! `kube`, `kube-client` and `kube-runtime` crates as crates.io serves them (through cargo's own
//! download and cache), with back the dev-dependency on `kube` that publishing drops from
//! `kube-client` and `kube-runtime` (their `Cargo.toml.orig` keeps it), built with the committed
//! lock file ([`LOCK`]) and `--locked`.
//!
//! Nothing of kube-rs is in this repository; only which versions to take.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use serde_json::Value;

/// The kube-rs release whose tests are run.
pub const KUBE_VERSION: &str = "5.0.0";

/// The crates whose `#[ignore]`d lib tests are run, in kube-rs's workspace order.
pub const CRATES: [&str; 3] = ["kube", "kube-client", "kube-runtime"];

/// The committed lock of the scratch workspace (every dependency's exact version), relative to
/// the repository root. `cargo xtask peer-tests --update-lock` regenerates it.
pub const LOCK: &str = "xtask/src/peer_tests/peer-tests.lock";

/// Written into the workspace once its crates are unpacked and their manifests restored; a
/// different stamp (another release) unpacks them again. Rewriting them every run would make
/// cargo rebuild the three crates.
fn stamp() -> String {
    format!(
        "kube-rs {KUBE_VERSION}: {} unpacked; kube-client and kube-runtime have their dev-dependency on kube back\n",
        CRATES.join(", ")
    )
}

/// A test binary of one crate, built.
#[derive(Debug, Clone)]
pub struct TestBinary {
    /// The crate (`kube-client`).
    pub crate_name: String,
    /// The executable.
    pub path: PathBuf,
    /// The crate's folder: cargo runs a test binary from there.
    pub dir: PathBuf,
}

/// The folders of a run.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `target/peer-tests`.
    pub root: PathBuf,
}

impl Layout {
    /// Under the workspace's target folder.
    pub fn new() -> Layout {
        Layout {
            root: crate::cluster::target_dir().join("peer-tests"),
        }
    }

    /// The scratch workspace.
    pub fn workspace(&self) -> PathBuf {
        self.root.join("ws")
    }

    /// A manifest that only depends on the three crates, for cargo to download them.
    fn fetch(&self) -> PathBuf {
        self.root.join("fetch")
    }

    /// The scratch workspace's target folder (its own: another lock, other features).
    pub fn target(&self) -> PathBuf {
        self.root.join("target")
    }
}

/// Makes the scratch workspace ready to build: the crates downloaded by cargo and unpacked,
/// their manifests restored, and its `Cargo.lock` the committed one — or, with `update_lock`,
/// resolved afresh from kube-rs's own lock (the one the `kube` crate was published with) and
/// written back to [`LOCK`].
pub fn prepare(layout: &Layout, update_lock: bool) -> anyhow::Result<()> {
    let committed = crate::workspace_root().join(LOCK);
    let ws = layout.workspace();
    std::fs::create_dir_all(&ws)?;
    let stamp_path = ws.join(".prepared");
    let prepared = std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp())
        && CRATES
            .iter()
            .all(|c| ws.join(c).join("Cargo.toml").is_file());
    if !prepared {
        let seed = (!update_lock)
            .then(|| std::fs::read_to_string(&committed).ok())
            .flatten();
        let archives = download(&layout.fetch(), seed.as_deref())?;
        for (name, archive) in CRATES.iter().zip(&archives) {
            unpack(archive, name, &ws)?;
        }
        for name in ["kube-client", "kube-runtime"] {
            restore_kube_dev_dependency(&ws.join(name))?;
        }
        std::fs::write(ws.join("Cargo.toml"), workspace_manifest())?;
        std::fs::write(&stamp_path, stamp())?;
    }
    let lock = ws.join("Cargo.lock");
    if update_lock {
        // kube-rs's resolution at release time, then whatever the restored dev-dependencies add.
        std::fs::copy(ws.join("kube").join("Cargo.lock"), &lock)?;
        cargo_in(
            &ws,
            &["metadata", "--format-version", "1"],
            &layout.target(),
        )
        .context("resolving the scratch workspace")?;
        std::fs::copy(&lock, &committed)
            .with_context(|| format!("writing {}", committed.display()))?;
        eprintln!("xtask: peer-tests: wrote {}", committed.display());
        return Ok(());
    }
    let text = std::fs::read_to_string(&committed).with_context(|| {
        format!(
            "reading {} (regenerate it with `cargo xtask peer-tests --update-lock`)",
            committed.display()
        )
    })?;
    // Written only when it changed, so cargo sees nothing new.
    if std::fs::read_to_string(&lock).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&lock, text)?;
    }
    Ok(())
}

/// The scratch workspace's manifest: the three crates as members, and every dependency on
/// them (`kube` on `kube-client`, the tests on `kube`) resolved to these copies, as path
/// dependencies are in kube-rs's own workspace.
fn workspace_manifest() -> String {
    let mut s = String::from(
        "# Written by `cargo xtask peer-tests`: kube-rs's published crates, for their tests.\n[workspace]\nresolver = \"3\"\nmembers = [",
    );
    s.push_str(
        &CRATES
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("]\n\n[patch.crates-io]\n");
    for c in CRATES {
        s.push_str(&format!("{c} = {{ path = \"{c}\" }}\n"));
    }
    s
}

/// Lets cargo download the three crates (a manifest that depends on exactly these versions,
/// its lock seeded with `seed` so that their dependencies resolve as the scratch workspace
/// will), and returns their `.crate` archives in cargo's cache, in [`CRATES`] order.
fn download(dir: &Path, seed: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir.join("src"))?;
    let mut manifest = String::from(
        "# Written by `cargo xtask peer-tests`: makes cargo download kube-rs's crates.\n[package]\nname = \"peer-tests-fetch\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n",
    );
    for c in CRATES {
        manifest.push_str(&format!("{c} = \"={KUBE_VERSION}\"\n"));
    }
    manifest.push_str("\n[workspace]\n");
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    std::fs::write(dir.join("src").join("lib.rs"), "")?;
    if let Some(seed) = seed {
        std::fs::write(dir.join("Cargo.lock"), seed)?;
    }
    let metadata = cargo_in(
        dir,
        &["metadata", "--format-version", "1"],
        &dir.join("target"),
    )
    .context("downloading kube-rs's crates")?;
    let metadata: Value =
        serde_json::from_str(&metadata).context("reading `cargo metadata` output")?;
    CRATES
        .iter()
        .map(|name| {
            let manifest = metadata["packages"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["name"] == *name && p["version"] == KUBE_VERSION)
                .and_then(|p| p["manifest_path"].as_str())
                .with_context(|| format!("cargo resolved no {name} {KUBE_VERSION}"))?;
            cached_archive(Path::new(manifest))
        })
        .collect()
}

/// Cargo unpacks `<home>/registry/cache/<index>/<name>-<version>.crate` into
/// `<home>/registry/src/<index>/<name>-<version>/`: the archive of an unpacked manifest.
fn cached_archive(manifest: &Path) -> anyhow::Result<PathBuf> {
    let unpacked = manifest.parent().context("manifest without folder")?;
    let index = unpacked.parent().context("crate folder without index")?;
    let registry = index
        .parent()
        .and_then(Path::parent)
        .context("index folder outside a registry")?;
    let (Some(crate_dir), Some(index_dir)) = (unpacked.file_name(), index.file_name()) else {
        bail!("unexpected crate path {}", manifest.display());
    };
    let archive = registry
        .join("cache")
        .join(index_dir)
        .join(format!("{}.crate", crate_dir.to_string_lossy()));
    if !archive.is_file() {
        bail!(
            "cargo unpacked {} but its archive {} is missing",
            unpacked.display(),
            archive.display()
        );
    }
    Ok(archive)
}

/// Unpacks `archive` (`<name>-<version>/...`) into `ws/<name>`.
fn unpack(archive: &Path, name: &str, ws: &Path) -> anyhow::Result<()> {
    let dest = ws.join(name);
    let unpacked = ws.join(format!("{name}-{KUBE_VERSION}"));
    for dir in [&dest, &unpacked] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(ws)
        .status()
        .context("running tar")?;
    if !status.success() {
        bail!("unpacking {} failed ({status})", archive.display());
    }
    std::fs::rename(&unpacked, &dest)
        .with_context(|| format!("moving {} to {}", unpacked.display(), dest.display()))?;
    Ok(())
}

/// Appends to `crate_dir/Cargo.toml` the dev-dependency on `kube` its `Cargo.toml.orig` has
/// (a path dependency on the workspace's `kube`, with the same features).
fn restore_kube_dev_dependency(crate_dir: &Path) -> anyhow::Result<()> {
    let orig_path = crate_dir.join("Cargo.toml.orig");
    let orig = std::fs::read_to_string(&orig_path)
        .with_context(|| format!("reading {}", orig_path.display()))?;
    let features = kube_dev_dependency_features(&orig).with_context(|| {
        format!(
            "{} has no `kube = {{ path = ..., features = [...] }}` dev-dependency",
            orig_path.display()
        )
    })?;
    let manifest_path = crate_dir.join("Cargo.toml");
    let mut manifest = std::fs::read_to_string(&manifest_path)?;
    manifest.push_str(&format!(
        "\n# Restored by `cargo xtask peer-tests` from Cargo.toml.orig.\n[dev-dependencies.kube]\npath = \"../kube\"\nfeatures = {features}\n"
    ));
    std::fs::write(&manifest_path, manifest)?;
    Ok(())
}

/// The `features = [...]` of the `kube = { path = ... }` line in the `[dev-dependencies]`
/// section of a `Cargo.toml.orig`.
pub fn kube_dev_dependency_features(orig: &str) -> Option<String> {
    let mut in_dev_deps = false;
    for line in orig.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dev_deps = line == "[dev-dependencies]";
            continue;
        }
        if !in_dev_deps {
            continue;
        }
        let Some(spec) = line.strip_prefix("kube") else {
            continue;
        };
        let Some(spec) = spec.trim_start().strip_prefix('=') else {
            continue;
        };
        let start = spec.find("features")?;
        let list = &spec[start..];
        let open = list.find('[')?;
        let close = list.find(']')?;
        return Some(list[open..=close].to_string());
    }
    None
}

/// Builds the lib test binaries as kube-rs's CI does (`cargo test --lib --workspace
/// --all-features`), `--locked`, and returns them in [`CRATES`] order.
pub fn build(layout: &Layout) -> anyhow::Result<Vec<TestBinary>> {
    let ws = layout.workspace();
    let out = cargo_in(
        &ws,
        &[
            "test",
            "--locked",
            "--lib",
            "--workspace",
            "--all-features",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ],
        &layout.target(),
    )
    .context("building kube-rs's tests")?;
    let mut binaries = Vec::new();
    for line in out.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true {
            continue;
        }
        let (Some(exe), Some(manifest)) =
            (msg["executable"].as_str(), msg["manifest_path"].as_str())
        else {
            continue;
        };
        let dir = Path::new(manifest)
            .parent()
            .context("manifest without folder")?;
        let crate_name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        binaries.push(TestBinary {
            crate_name,
            path: PathBuf::from(exe),
            dir: dir.to_path_buf(),
        });
    }
    binaries.sort_by_key(|b| CRATES.iter().position(|c| *c == b.crate_name));
    let built: Vec<&str> = binaries.iter().map(|b| b.crate_name.as_str()).collect();
    if built != CRATES {
        bail!("expected the lib test binaries of {CRATES:?}, cargo built {built:?}");
    }
    Ok(binaries)
}

/// Runs `cargo ARGS` in `dir` with its own target folder; returns its standard output
/// (standard error goes to ours: progress and diagnostics).
fn cargo_in(dir: &Path, args: &[&str], target: &Path) -> anyhow::Result<String> {
    eprintln!("xtask: $ (cd {}; cargo {})", dir.display(), args.join(" "));
    let mut cmd = Command::new("cargo");
    crate::without_cargo_run_env(&mut cmd);
    let out = cmd
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo")?;
    if !out.status.success() {
        bail!("`cargo {}` failed ({})", args.join(" "), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_kube_dev_dependency_features() {
        let orig = r#"[package]
name = "kube-client"

[dependencies]
kube-core = { path = "../kube-core", version = "=5.0.0" }

[dev-dependencies]
hyper = { workspace = true, features = ["server"] }
kube = { path = "../kube", features = ["derive", "client", "ws"] }
kube-derive = { path = "../kube-derive" }

[[bench]]
kube = { path = "../kube", features = ["not", "this"] }
"#;
        assert_eq!(
            kube_dev_dependency_features(orig).as_deref(),
            Some(r#"["derive", "client", "ws"]"#)
        );
        // A `kube` dependency outside [dev-dependencies], or none at all.
        assert_eq!(
            kube_dev_dependency_features("[dependencies]\nkube = { features = [\"x\"] }\n"),
            None
        );
        assert_eq!(
            kube_dev_dependency_features(
                "[dev-dependencies]\nkube-core = { features = [\"x\"] }\n"
            ),
            None
        );
    }

    #[test]
    fn the_workspace_patches_every_crate_to_its_copy() {
        let m = workspace_manifest();
        assert!(m.contains("members = [\"kube\", \"kube-client\", \"kube-runtime\"]"));
        for c in CRATES {
            assert!(m.contains(&format!("{c} = {{ path = \"{c}\" }}")), "{m}");
        }
    }

    #[test]
    fn the_archive_is_beside_cargos_unpacked_copy() {
        let dir = std::env::temp_dir().join(format!("peer-tests-archive-{}", std::process::id()));
        let cache = dir.join("registry").join("cache").join("index.crates.io-x");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("kube-5.0.0.crate"), b"").unwrap();
        let manifest = dir
            .join("registry")
            .join("src")
            .join("index.crates.io-x")
            .join("kube-5.0.0")
            .join("Cargo.toml");
        assert_eq!(
            cached_archive(&manifest).unwrap(),
            cache.join("kube-5.0.0.crate")
        );
        let missing = manifest
            .to_string_lossy()
            .replace("kube-5.0.0", "kube-9.9.9");
        assert!(cached_archive(Path::new(&missing)).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
