//! `cargo xtask upstream build`: etcd, kube-apiserver and kube-controller-manager built from the
//! Go module in `upstream/` (versions pinned by its go.mod and go.sum) into
//! `target/upstream/<kubernetes version>/bin/`.
//!
//! A build is reused while `go.mod`, `go.sum`, our Go sources and `go version` are unchanged (a
//! stamp file next to the binaries records them); otherwise `go build` runs, itself incremental
//! through Go's build cache. The first build on a fresh machine downloads about 200 modules and
//! compiles for 10–15 minutes on 2 cores.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The binaries of the upstream control plane.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The Kubernetes version they were built from (`v1.37.2`).
    pub version: String,
    /// `etcd`.
    pub etcd: PathBuf,
    /// `kube-apiserver`.
    pub kube_apiserver: PathBuf,
    /// `kube-controller-manager`.
    pub kube_controller_manager: PathBuf,
}

/// The Go packages built, by output name.
const PACKAGES: [(&str, &str); 3] = [
    ("etcd", "./cmd/etcd"),
    ("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
    (
        "kube-controller-manager",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
    ),
];

/// The folder of our Go module.
pub fn module_dir() -> PathBuf {
    crate::workspace_root().join("upstream")
}

/// The `k8s.io/kubernetes` version `go.mod` requires.
pub fn pinned_version(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("k8s.io/kubernetes"), Some(v), _)
            | (Some("require"), Some("k8s.io/kubernetes"), Some(v))
                if v.starts_with('v') =>
            {
                Some(v.to_string())
            }
            _ => None,
        }
    })
}

/// Builds the binaries unless an up-to-date build exists; returns where they are.
pub fn build() -> anyhow::Result<Binaries> {
    let module = module_dir();
    let go_mod = std::fs::read_to_string(module.join("go.mod"))
        .with_context(|| format!("reading {}", module.join("go.mod").display()))?;
    let version = pinned_version(&go_mod)
        .context("upstream/go.mod does not require k8s.io/kubernetes at a version")?;
    let bin_dir = crate::cluster::target_dir()
        .join("upstream")
        .join(&version)
        .join("bin");
    let binaries = Binaries {
        etcd: bin_dir.join("etcd"),
        kube_apiserver: bin_dir.join("kube-apiserver"),
        kube_controller_manager: bin_dir.join("kube-controller-manager"),
        version,
    };
    let go_version = go_version()?;
    let ldflags = version_ldflags(&binaries.version);
    let stamp = stamp(&module, &go_version, &ldflags)?;
    let stamp_file = bin_dir.join(".stamp");
    let all_built = PACKAGES
        .iter()
        .all(|(name, _)| bin_dir.join(name).is_file());
    if all_built && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str()) {
        eprintln!(
            "xtask: upstream {} is built in {} (reused)",
            binaries.version,
            bin_dir.display()
        );
        return Ok(binaries);
    }
    std::fs::create_dir_all(&bin_dir)?;
    eprintln!(
        "xtask: building upstream {} with {go_version} into {} (the first build downloads the \
         modules and takes 10-15 minutes on 2 cores)",
        binaries.version,
        bin_dir.display()
    );
    let started = std::time::Instant::now();
    go(&module, &["mod", "download"]).context(
        "could not download the pinned upstream Go modules (is the Go module proxy reachable? \
         GOPROXY and the error above say which module failed)",
    )?;
    let mut args = vec!["build", "-ldflags", &ldflags, "-o"];
    let out = format!("{}/", bin_dir.display());
    args.push(&out);
    args.extend(PACKAGES.iter().map(|(_, pkg)| *pkg));
    go(&module, &args).context("building the upstream control plane failed (see above)")?;
    std::fs::write(&stamp_file, &stamp)?;
    eprintln!(
        "xtask: upstream {} built in {:.0} s: {}",
        binaries.version,
        started.elapsed().as_secs_f64(),
        bin_dir.display()
    );
    Ok(binaries)
}

/// The `-X` flags Kubernetes' own build sets (hack/lib/version.sh), so the binaries report
/// `version` (in `/version`, their logs and User-Agents, and as the binary version behind feature
/// gate defaults and emulation versions) instead of `v0.0.0-master`. The commit is left empty
/// (User-Agents then say `kubernetes/unknown`): modules carry no commit.
fn version_ldflags(version: &str) -> String {
    let mut parts = version.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or_default();
    let minor = parts.next().unwrap_or_default();
    let mut flags = Vec::new();
    for pkg in [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ] {
        flags.push(format!("-X {pkg}.gitVersion={version}"));
        flags.push(format!("-X {pkg}.gitMajor={major}"));
        flags.push(format!("-X {pkg}.gitMinor={minor}"));
        flags.push(format!("-X {pkg}.gitCommit="));
        flags.push(format!("-X {pkg}.gitTreeState=archive"));
    }
    flags.join(" ")
}

fn go_version() -> anyhow::Result<String> {
    let out = Command::new("go").arg("version").output().map_err(|e| {
        anyhow::anyhow!(
            "`go` could not be run ({e}): the upstream control plane is built from Go modules; \
             install Go 1.26 or newer and put it on PATH"
        )
    })?;
    if !out.status.success() {
        bail!(
            "`go version` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What a build depends on: the Go version, the linker flags and our module's files.
fn stamp(module: &Path, go_version: &str, ldflags: &str) -> anyhow::Result<String> {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    collect_files(module, &mut files)?;
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ldflags.hash(&mut h);
    for f in &files {
        f.hash(&mut h);
        std::fs::read(f)?.hash(&mut h);
    }
    Ok(format!("{go_version}\n{:016x}\n", h.finish()))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "go" || e == "mod" || e == "sum")
        {
            out.push(path);
        }
    }
    Ok(())
}

fn go(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    eprintln!("xtask: $ (cd {}; go {})", dir.display(), args.join(" "));
    let status = Command::new("go")
        .args(args)
        .current_dir(dir)
        .status()
        .context("running go")?;
    if !status.success() {
        bail!("`go {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::pinned_version;

    #[test]
    fn stamps_the_version_as_kubernetes_builds_do() {
        let flags = super::version_ldflags("v1.37.2");
        for want in [
            "-X k8s.io/component-base/version.gitVersion=v1.37.2",
            "-X k8s.io/component-base/version.gitMajor=1",
            "-X k8s.io/component-base/version.gitMinor=37",
            "-X k8s.io/client-go/pkg/version.gitVersion=v1.37.2",
            "-X k8s.io/client-go/pkg/version.gitTreeState=archive",
        ] {
            assert!(flags.contains(want), "{want} missing from {flags}");
        }
    }

    #[test]
    fn reads_the_pinned_kubernetes_version() {
        let block = "module x\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.7.0\n\tk8s.io/kubernetes v1.37.2\n)\n";
        assert_eq!(pinned_version(block).as_deref(), Some("v1.37.2"));
        let single = "module x\nrequire k8s.io/kubernetes v1.36.3\n";
        assert_eq!(pinned_version(single).as_deref(), Some("v1.36.3"));
        let replaced = "replace (\n\tk8s.io/kubernetes => ../k\n)\n";
        assert_eq!(pinned_version(replaced), None);
        assert_eq!(pinned_version("module x\n"), None);
    }
}
