//! `cargo xtask upstream gen-testenv`: kcm-testenv's generated registry data, derived from
//! upstream v1.37.2 itself.
//!
//! - `testenv/src/registry/builtin.rs`: the built-in resource table, read from the discovery
//!   documents of a kube-apiserver started with its default API set, on loopback, as
//!   `cargo xtask cluster up --upstream` starts it (etcd + kube-apiserver only)
//!   ([`gen_testenv_table`](super::gen_testenv_table)).
//! - `testenv/src/registry/schema/definitions.rs`: the type schemas, every definition of
//!   upstream's OpenAPI v3 documents in Go's module cache, descriptions left out
//!   ([`gen_testenv_schemas`](super::gen_testenv_schemas)).
//! - `testenv/src/registry/bootstrap_objects.rs`: the objects a fresh kube-apiserver makes for
//!   itself: local APIServices, bootstrap RBAC, priority-and-fairness configuration
//!   ([`gen_testenv_bootstrap`](super::gen_testenv_bootstrap)).
//! - `testenv/src/registry/schema/go_fields.rs`: per struct field, its Go type and whether Go
//!   omits it when empty ([`gen_testenv_gotypes`](super::gen_testenv_gotypes)).
//!
//! `--check` writes nothing and fails when a committed file differs from what would be written.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use super::build::{self, Binaries};
use super::control_plane::{self, ApiServerRun};
use super::gen_testenv_bootstrap as bootstrap;
use super::gen_testenv_gotypes as gotypes;
use super::gen_testenv_schemas as schemas;
use super::gen_testenv_table::{self as table, Discovery};

/// The Accept header of aggregated discovery.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// A generated file: where it goes, and its text.
#[derive(Debug)]
pub struct Generated {
    /// The path, relative to the workspace root.
    pub path: &'static str,
    /// The file's text.
    pub text: String,
}

/// Where the resource table goes.
pub const TABLE_PATH: &str = "testenv/src/registry/builtin.rs";
/// Where the type schemas go.
pub const SCHEMAS_PATH: &str = "testenv/src/registry/schema/definitions.rs";
/// Where the bootstrap objects go.
pub const BOOTSTRAP_PATH: &str = "testenv/src/registry/bootstrap_objects.rs";
/// Where the Go fields of the types go.
pub const GO_FIELDS_PATH: &str = "testenv/src/registry/schema/go_fields.rs";

/// `cargo xtask upstream gen-testenv [--check]`.
pub fn run(check: bool) -> anyhow::Result<()> {
    let bins = build::build()?;
    let dir = crate::cluster::target_dir().join("gen-testenv");
    let files = generate(&bins, &dir)?;
    let root = crate::workspace_root();
    let mut stale = Vec::new();
    for f in &files {
        let path = root.join(f.path);
        let now = std::fs::read_to_string(&path).unwrap_or_default();
        if now == f.text {
            println!("{} is up to date", f.path);
        } else if check {
            stale.push(f.path);
        } else {
            std::fs::write(&path, &f.text)
                .with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", f.path);
        }
    }
    if !stale.is_empty() {
        bail!(
            "{} differ from what `cargo xtask upstream gen-testenv` generates now",
            stale.join(", ")
        );
    }
    Ok(())
}

/// Generates both files with the binaries in `bins`, running kube-apiserver in `dir`.
pub fn generate(bins: &Binaries, dir: &Path) -> anyhow::Result<Vec<Generated>> {
    let openapi = schemas::openapi_v3_dir(&bins.version).with_context(|| {
        format!(
            "k8s.io/kubernetes@{} is not in Go's module cache (run `cargo xtask upstream build`)",
            bins.version
        )
    })?;
    let definitions = schemas::read_definitions(&openapi)?;
    let schema_text = schemas::render(&bins.version, &definitions)?;
    let cache = schemas::module_cache().context("no Go module cache")?;
    let go_fields = gotypes::read_fields(&cache, &bins.version, &definitions)?;
    let go_fields_text = gotypes::render(&bins.version, &go_fields);

    eprintln!(
        "xtask: starting etcd and kube-apiserver in {}",
        dir.display()
    );
    let run = control_plane::start_api_server(dir, bins, "", false)?;
    let client = Curl::new(&run, dir)?;
    let discovery = read_discovery(&client)?;
    let objects = bootstrap::collect(&|path| client.get(path, "application/json"))?;
    drop(run);
    let table_text = table::render(&bins.version, &discovery)?;
    let bootstrap_text = bootstrap::render(&bins.version, &objects)?;
    Ok(vec![
        Generated {
            path: TABLE_PATH,
            text: table_text,
        },
        Generated {
            path: SCHEMAS_PATH,
            text: schema_text,
        },
        Generated {
            path: GO_FIELDS_PATH,
            text: go_fields_text,
        },
        Generated {
            path: BOOTSTRAP_PATH,
            text: bootstrap_text,
        },
    ])
}

fn read_discovery(client: &Curl) -> anyhow::Result<Discovery> {
    let mut d = Discovery {
        apis: client.get("/apis", "application/json")?,
        aggregated_api: client.get("/api", AGGREGATED)?,
        aggregated_apis: client.get("/apis", AGGREGATED)?,
        ..Default::default()
    };
    d.resource_lists
        .insert("v1".into(), client.get("/api/v1", "application/json")?);
    let group_versions: Vec<String> = d.apis["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["versions"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["groupVersion"].as_str().map(str::to_string))
        .collect();
    for gv in group_versions {
        let list = client.get(&format!("/apis/{gv}"), "application/json")?;
        d.resource_lists.insert(gv, list);
    }
    Ok(d)
}

/// GETs on the loopback kube-apiserver as its admin, through curl (kubectl cannot send the
/// aggregated discovery Accept header).
struct Curl {
    url: String,
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl Curl {
    fn new(run: &ApiServerRun, dir: &Path) -> anyhow::Result<Curl> {
        let cert = dir.join("pki").join("admin.crt");
        let key = dir.join("pki").join("admin.key");
        crate::cluster::write_private(&cert, &run.pki.admin.cert_pem)?;
        crate::cluster::write_private(&key, &run.pki.admin.key_pem)?;
        Ok(Curl {
            url: run.url.clone(),
            ca: run.pki.ca_cert.clone(),
            cert,
            key,
        })
    }

    fn get(&self, path: &str, accept: &str) -> anyhow::Result<Value> {
        let out = Command::new("curl")
            .args(["--silent", "--show-error", "--fail", "--max-time", "30"])
            .arg("--cacert")
            .arg(&self.ca)
            .arg("--cert")
            .arg(&self.cert)
            .arg("--key")
            .arg(&self.key)
            .arg("-H")
            .arg(format!("Accept: {accept}"))
            .arg(format!("{}{path}", self.url))
            .output()
            .context("running curl (needed by gen-testenv)")?;
        if !out.status.success() {
            bail!(
                "GET {path}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        serde_json::from_slice(&out.stdout).with_context(|| format!("GET {path}: not JSON"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed files are what the generator makes of upstream now (skipped, with the
    /// reason, without the upstream binaries, the module cache or curl).
    #[test]
    fn committed_files_are_generated() {
        let go_mod = std::fs::read_to_string(build::module_dir().join("go.mod")).expect("go.mod");
        let version = build::pinned_version(&go_mod).expect("pinned version");
        let bin_dir = crate::cluster::target_dir()
            .join("upstream")
            .join(&version)
            .join("bin");
        let bins = Binaries {
            etcd: bin_dir.join("etcd"),
            kube_apiserver: bin_dir.join("kube-apiserver"),
            kube_controller_manager: bin_dir.join("kube-controller-manager"),
            version: version.clone(),
        };
        if !bins.etcd.is_file() || !bins.kube_apiserver.is_file() {
            eprintln!(
                "skipped: no upstream binaries in {} (cargo xtask upstream build)",
                bin_dir.display()
            );
            return;
        }
        if schemas::openapi_v3_dir(&version).is_none() {
            eprintln!("skipped: k8s.io/kubernetes@{version} is not in Go's module cache");
            return;
        }
        if Command::new("curl").arg("--version").output().is_err() {
            eprintln!("skipped: no curl");
            return;
        }
        let dir = crate::reaper::TempDir::new("kcm-rs-gen-testenv").expect("temp dir");
        let files = generate(&bins, dir.path()).expect("generate");
        for f in files {
            let path = crate::workspace_root().join(f.path);
            let committed = std::fs::read_to_string(&path).expect("committed file");
            assert!(
                committed == f.text,
                "{} is not what `cargo xtask upstream gen-testenv` generates",
                f.path
            );
        }
    }
}
