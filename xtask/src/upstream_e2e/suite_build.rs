//! Upstream's e2e suite binary, `go test -c k8s.io/kubernetes/test/e2e`, built from the Go
//! module in `upstream/` into `target/upstream/<version>/e2e/e2e.test`.
//!
//! As with `cargo xtask upstream build`, a build is reused while its inputs are unchanged: a
//! stamp next to the binary records `go version`, the linker flags and a hash of the module's
//! `go.mod`, `go.sum` and Go files. Otherwise `go test -c` runs, itself incremental through Go's
//! build cache (the first build compiles most of k8s.io/kubernetes: 20-30 minutes on 2 cores,
//! less after `cargo xtask upstream build`).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::upstream::build::{module_dir, pinned_version};

/// The package built.
const PACKAGE: &str = "k8s.io/kubernetes/test/e2e";

/// Builds `e2e.test` unless an up-to-date build exists; returns its path.
pub fn build() -> anyhow::Result<PathBuf> {
    let module = module_dir();
    let go_mod = std::fs::read_to_string(module.join("go.mod"))
        .with_context(|| format!("reading {}", module.join("go.mod").display()))?;
    let version = pinned_version(&go_mod)
        .context("upstream/go.mod does not require k8s.io/kubernetes at a version")?;
    let dir = crate::cluster::target_dir()
        .join("upstream")
        .join(&version)
        .join("e2e");
    let bin = dir.join("e2e.test");
    let ldflags = ldflags(&version);
    let stamp = stamp(&module, &go_version()?, &ldflags)?;
    let stamp_file = dir.join(".stamp");
    if bin.is_file() && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(&stamp) {
        eprintln!("xtask: {} is built (reused)", bin.display());
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "xtask: building upstream {version}'s e2e suite into {} (the first build takes 20-30 \
         minutes on 2 cores)",
        bin.display()
    );
    let started = std::time::Instant::now();
    let out = bin.display().to_string();
    let args = ["test", "-c", "-ldflags", &ldflags, "-o", &out, PACKAGE];
    eprintln!("xtask: $ (cd {}; go {})", module.display(), args.join(" "));
    let status = Command::new("go")
        .args(args)
        .current_dir(&module)
        .status()
        .context("running go")?;
    if !status.success() {
        bail!(
            "`go test -c {PACKAGE}` failed ({status}); a `missing go.sum entry` means \
             upstream/tools.go lacks an import the suite needs (add it, then `go mod tidy`)"
        );
    }
    std::fs::write(&stamp_file, &stamp)?;
    eprintln!(
        "xtask: e2e.test built in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(bin)
}

/// The suite reports the version it was built from (its log's first lines, and the client's
/// User-Agent), as Kubernetes' own build stamps it (hack/lib/version.sh).
fn ldflags(version: &str) -> String {
    let mut parts = version.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or_default();
    let minor = parts.next().unwrap_or_default();
    [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ]
    .iter()
    .flat_map(|pkg| {
        [
            format!("-X {pkg}.gitVersion={version}"),
            format!("-X {pkg}.gitMajor={major}"),
            format!("-X {pkg}.gitMinor={minor}"),
            format!("-X {pkg}.gitTreeState=archive"),
        ]
    })
    .collect::<Vec<_>>()
    .join(" ")
}

fn go_version() -> anyhow::Result<String> {
    let out = Command::new("go")
        .arg("version")
        .output()
        .context("`go` could not be run: install Go 1.26 or newer and put it on PATH")?;
    if !out.status.success() {
        bail!(
            "`go version` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The Go version, the linker flags and the module's files, hashed.
fn stamp(module: &Path, go_version: &str, ldflags: &str) -> anyhow::Result<String> {
    let mut files = Vec::new();
    collect(module, &mut files)?;
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ldflags.hash(&mut h);
    for f in &files {
        f.strip_prefix(module).unwrap_or(f).hash(&mut h);
        std::fs::read(f)?.hash(&mut h);
    }
    Ok(format!("{go_version}\n{:016x}\n", h.finish()))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "go" || e == "mod" || e == "sum")
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn stamps_the_pinned_version() {
        let flags = super::ldflags("v1.37.2");
        assert!(flags.contains("-X k8s.io/component-base/version.gitVersion=v1.37.2"));
        assert!(flags.contains("-X k8s.io/client-go/pkg/version.gitMinor=37"));
    }

    #[test]
    fn the_stamp_follows_the_module_files() {
        let dir = crate::reaper::TempDir::new("kcm-rs-e2e-stamp").expect("temp dir");
        std::fs::write(dir.path().join("go.mod"), "module x\n").expect("write");
        std::fs::write(dir.path().join("notes.txt"), "ignored").expect("write");
        let a = super::stamp(dir.path(), "go1.26", "").expect("stamp");
        std::fs::write(dir.path().join("notes.txt"), "still ignored").expect("write");
        assert_eq!(a, super::stamp(dir.path(), "go1.26", "").expect("stamp"));
        std::fs::write(dir.path().join("go.sum"), "x v1 h1:abc\n").expect("write");
        let b = super::stamp(dir.path(), "go1.26", "").expect("stamp");
        assert_ne!(a, b);
        assert_ne!(b, super::stamp(dir.path(), "go1.27", "").expect("stamp"));
    }
}
