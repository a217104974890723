//! Upstream's own OpenAPI documents of the built-in kinds: `api/openapi-spec/swagger.json` and
//! `api/openapi-spec/v3/*.json` of `k8s.io/kubernetes@v1.37.2` in the Go module cache
//! (`$GOMODCACHE`, `$GOPATH/pkg/mod`, `~/go/pkg/mod`), read on first use, never at start-up.
//! Nothing of them is in this repository: without the module cache the built-in kinds have no
//! OpenAPI documents (and kcm-testenv says so in its log).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

/// The module whose documents are served.
pub const MODULE: &str = "k8s.io/kubernetes@v1.37.2";

/// Where the module's `api/openapi-spec` folder is, if the module cache holds it.
pub fn spec_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut roots: Vec<PathBuf> = Vec::new();
        if let Some(m) = std::env::var_os("GOMODCACHE").filter(|m| !m.is_empty()) {
            roots.push(PathBuf::from(m));
        }
        if let Some(p) = std::env::var_os("GOPATH") {
            roots.extend(std::env::split_paths(&p).map(|p| p.join("pkg").join("mod")));
        }
        if let Some(h) = std::env::var_os("HOME") {
            roots.push(PathBuf::from(h).join("go").join("pkg").join("mod"));
        }
        roots
            .into_iter()
            .map(|r| r.join(MODULE).join("api").join("openapi-spec"))
            .find(|d| d.join("swagger.json").is_file())
    })
    .as_deref()
}

/// The file of a v3 document: `apis/apps/v1` is `v3/apis__apps__v1_openapi.json`.
pub fn v3_file(dir: &Path, gv_path: &str) -> PathBuf {
    dir.join("v3")
        .join(format!("{}_openapi.json", gv_path.replace('/', "__")))
}

fn read(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(path = %path.display(), "unreadable upstream OpenAPI document: {e}");
            None
        }
    }
}

/// The swagger (OpenAPI v2) document of every built-in kind, parsed once.
pub fn swagger() -> Option<Arc<Value>> {
    static DOC: OnceLock<Option<Arc<Value>>> = OnceLock::new();
    DOC.get_or_init(|| read(&spec_dir()?.join("swagger.json")).map(Arc::new))
        .clone()
}

/// The v3 document of `gv_path` (`api/v1`, `apis/apps/v1`, `apis/apps`, `api`, `apis`,
/// `version`), parsed once; `None` when the module has none.
pub fn v3(gv_path: &str) -> Option<Arc<Value>> {
    static DOCS: OnceLock<Mutex<HashMap<String, Option<Arc<Value>>>>> = OnceLock::new();
    let docs = DOCS.get_or_init(Default::default);
    if let Some(d) = docs.lock().unwrap_or_else(|e| e.into_inner()).get(gv_path) {
        return d.clone();
    }
    let doc = spec_dir()
        .and_then(|dir| read(&v3_file(dir, gv_path)))
        .map(Arc::new);
    docs.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(gv_path.to_string(), doc.clone());
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_file_names() {
        let d = Path::new("/x");
        assert_eq!(
            v3_file(d, "apis/apps/v1"),
            Path::new("/x/v3/apis__apps__v1_openapi.json")
        );
        assert_eq!(v3_file(d, "api"), Path::new("/x/v3/api_openapi.json"));
    }
}
