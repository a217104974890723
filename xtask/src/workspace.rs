//! The workspace as `cargo metadata --no-deps` describes it: its packages, their targets and
//! their dependencies on each other. Shared by `cargo xtask ci`, `house` and `api`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// Workspace packages that are binaries only, or whose library half serves only their binary:
/// neither published nor held to the library crates' rules (documentation, public API, the
/// upstream map).
pub(crate) const NOT_LIBRARIES: &[&str] = &[
    "xtask",
    "kcm",
    "kcm-testenv-cli",
    "kcm-sample-controller",
    "kcm-example-configmap",
];

/// `--workspace --exclude P` for every package of [`NOT_LIBRARIES`]: the library crates, as
/// cargo selects them.
pub(crate) fn library_selection() -> Vec<&'static str> {
    let mut args = vec!["--workspace"];
    for p in NOT_LIBRARIES {
        args.extend(["--exclude", p]);
    }
    args
}

/// The workspace's packages.
#[derive(Debug, Deserialize)]
pub(crate) struct Workspace {
    pub packages: Vec<Package>,
    pub workspace_root: PathBuf,
}

/// One package of the workspace.
#[derive(Debug, Deserialize)]
pub(crate) struct Package {
    pub name: String,
    pub manifest_path: PathBuf,
    pub targets: Vec<Target>,
    pub dependencies: Vec<Dependency>,
}

/// One target of a package (its library, a binary, a test, a bench, an example).
#[derive(Debug, Deserialize)]
pub(crate) struct Target {
    /// Its root file.
    pub src_path: PathBuf,
}

/// One dependency of a package as its manifest declares it.
#[derive(Debug, Deserialize)]
pub(crate) struct Dependency {
    pub name: String,
    /// `None` for a normal dependency, else `dev` or `build`.
    pub kind: Option<String>,
}

impl Workspace {
    /// Runs `cargo metadata --no-deps` in the workspace root.
    pub(crate) fn read() -> anyhow::Result<Workspace> {
        let out = std::process::Command::new("cargo")
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(crate::workspace_root())
            .output()
            .context("could not start `cargo metadata`")?;
        if !out.status.success() {
            anyhow::bail!(
                "`cargo metadata --no-deps` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        serde_json::from_slice(&out.stdout).context("reading `cargo metadata`'s output")
    }

    /// The library crates: every package but [`NOT_LIBRARIES`], in the workspace's order.
    pub(crate) fn libraries(&self) -> impl Iterator<Item = &Package> {
        self.packages
            .iter()
            .filter(|p| !NOT_LIBRARIES.contains(&p.name.as_str()))
    }

    /// `path` relative to the workspace root, as a string with `/`.
    pub(crate) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.workspace_root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

impl Package {
    /// The folder of its `Cargo.toml`.
    pub(crate) fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new("."))
    }

    /// The names of its dependencies of `kind` (`None`: normal dependencies, `Some("build")`,
    /// `Some("dev")`).
    pub(crate) fn dependencies_of<'a>(
        &'a self,
        kind: Option<&'a str>,
    ) -> impl Iterator<Item = &'a str> {
        self.dependencies
            .iter()
            .filter(move |d| d.kind.as_deref() == kind)
            .map(|d| d.name.as_str())
    }
}
