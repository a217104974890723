//! OpenAPI: `/openapi/v2` (one swagger document) and `/openapi/v3` (an index of documents,
//! one per group version, each at `/openapi/v3/<path>?hash=<etag>`), as kube-apiserver v1.37.2
//! publishes them. The built-in kinds' documents are upstream's own when the Go module cache
//! holds them ([`upstream`], cut to what this server serves by [`filter`]), else built from the
//! generated definitions without descriptions ([`generated`]); the custom resources' are built
//! from their CRDs ([`crd_schema`], [`paths`]) as the apiextensions-apiserver builds them.
//! [`serve`] answers the requests (content negotiation, hashes, caching headers).
//!
//! Documents are built on the first request that needs them, never at start-up, and kept
//! until the CRDs they depend on change.

pub mod crd_schema;
pub mod filter;
pub mod generated;
pub mod paths;
pub mod serve;
pub mod upstream;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha512};

use crate::apiserver::server::ApiServer;
use crate::registry::StorageId;
use crate::registry::custom::definition::condition_true;
use crate::registry::meta::at;
use crd_schema::{Descriptions, kind_schema, list_schema, model_name};
use paths::{Kind, Sub};

/// A serialized document and its hash (upper-case hex SHA-512 of the bytes, as kube-openapi).
#[derive(Debug)]
pub struct Doc {
    /// The JSON bytes.
    pub bytes: Bytes,
    /// The hash, unquoted.
    pub etag: String,
    /// When it was built (`Last-Modified`).
    pub built: jiff::Timestamp,
}

impl Doc {
    fn new(v: &Value) -> Arc<Doc> {
        let bytes = Bytes::from(serde_json::to_vec(v).unwrap_or_default());
        let etag = Sha512::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        Arc::new(Doc {
            bytes,
            etag,
            built: jiff::Timestamp::now(),
        })
    }
}

/// The established CRDs, as stored.
fn crds(srv: &ApiServer) -> Vec<Value> {
    let (items, _) = srv
        .store
        .snapshot(StorageId::CUSTOMRESOURCEDEFINITIONS, "", &|_| true);
    items
        .iter()
        .map(|o| o.value())
        .filter(|c| condition_true(c, "Established"))
        .collect()
}

fn fingerprint(crds: &[&Value]) -> String {
    crds.iter()
        .map(|c| {
            format!(
                "{}@{};",
                crate::registry::meta::name_of(c),
                crate::registry::meta::rv_of(c)
            )
        })
        .collect()
}

/// A small cache of documents keyed by what they were built from.
fn cached(key: String, build: impl FnOnce() -> Option<Arc<Doc>>) -> Option<Arc<Doc>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Doc>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(d) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return d.clone();
    }
    let d = build();
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() > 256 {
        c.clear();
    }
    c.insert(key, d.clone());
    d
}

/// Say once that the built-in kinds' documents are the generated ones, without descriptions.
fn warn_without_module() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        tracing::warn!(
            "kcm-testenv serves the built-in kinds' OpenAPI documents without descriptions: upstream's own are read from {} in the Go module cache ($GOMODCACHE, $GOPATH/pkg/mod or ~/go/pkg/mod), which is not there",
            upstream::MODULE
        );
    });
}

/// Descriptions the custom resources' documents take from upstream's (empty without them).
fn descriptions() -> &'static (Descriptions, HashMap<String, String>) {
    static D: OnceLock<(Descriptions, HashMap<String, String>)> = OnceLock::new();
    D.get_or_init(|| {
        let Some(core) = upstream::v3("api/v1") else {
            return Default::default();
        };
        let s = |p: &str| core.pointer(p).and_then(Value::as_str).map(str::to_string);
        let base = "/components/schemas/io.k8s.api.core.v1.ConfigMap";
        let d = Descriptions {
            api_version: s(&format!("{base}/properties/apiVersion/description")),
            kind: s(&format!("{base}/properties/kind/description")),
            object_meta: s(&format!("{base}/properties/metadata/description")),
            list_meta: s(&format!("{base}List/properties/metadata/description")),
        };
        let mut params = HashMap::new();
        for item in core["paths"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
        {
            let ops = item.as_object().into_iter().flat_map(|m| m.values());
            for list in std::iter::once(&item["parameters"]).chain(ops.map(|o| &o["parameters"])) {
                for p in list.as_array().into_iter().flatten() {
                    if let (Some(n), Some(d)) = (p["name"].as_str(), p["description"].as_str()) {
                        params.entry(n.to_string()).or_insert_with(|| d.to_string());
                    }
                }
            }
        }
        (d, params)
    })
}

/// One served version of a CRD, with what its documents need.
struct CrdVersion<'a> {
    crd: &'a Value,
    version: &'a Value,
}

impl CrdVersion<'_> {
    fn s(&self, path: &[&str]) -> &str {
        at(self.crd, path).and_then(Value::as_str).unwrap_or("")
    }
    fn name(&self, key: &str) -> String {
        let accepted = self.s(&["status", "acceptedNames", key]);
        if accepted.is_empty() {
            self.s(&["spec", "names", key]).to_string()
        } else {
            accepted.to_string()
        }
    }
    fn version(&self) -> &str {
        self.version["name"].as_str().unwrap_or("")
    }
    fn kind(&self) -> CustomKindOwned {
        let kind = self.name("kind");
        let list_kind = match self.name("listKind") {
            l if l.is_empty() => format!("{kind}List"),
            l => l,
        };
        CustomKindOwned {
            group: self.s(&["spec", "group"]).to_string(),
            version: self.version().to_string(),
            plural: self.name("plural"),
            kind,
            list_kind,
            namespaced: self.s(&["spec", "scope"]) == "Namespaced",
            status: at(self.version, &["subresources", "status"]).is_some(),
            scale: at(self.version, &["subresources", "scale"]).is_some(),
        }
    }
    fn schema(&self) -> Option<&Value> {
        at(self.version, &["schema", "openAPIV3Schema"])
    }
}

struct CustomKindOwned {
    group: String,
    version: String,
    kind: String,
    list_kind: String,
    plural: String,
    namespaced: bool,
    status: bool,
    scale: bool,
}

/// Every verb: the CRD handler serves them all.
const CUSTOM_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

impl CustomKindOwned {
    fn borrowed(&self) -> Kind<'_> {
        let model = model_name(&self.group, &self.version, &self.kind);
        let gvk = (
            self.group.as_str(),
            self.version.as_str(),
            self.kind.as_str(),
        );
        let mut subresources = Vec::new();
        if self.status {
            subresources.push(Sub {
                name: "status",
                model: model.clone(),
                gvk,
                verbs: SUBRESOURCE_VERBS,
            });
        }
        if self.scale {
            subresources.push(Sub {
                name: "scale",
                model: paths::SCALE.to_string(),
                gvk,
                verbs: SUBRESOURCE_VERBS,
            });
        }
        Kind {
            group: &self.group,
            version: &self.version,
            kind: &self.kind,
            plural: &self.plural,
            namespaced: self.namespaced,
            list_model: model_name(&self.group, &self.version, &self.list_kind),
            model,
            verbs: CUSTOM_VERBS,
            subresources,
        }
    }
}

fn served_versions(crd: &Value) -> impl Iterator<Item = CrdVersion<'_>> {
    at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true)
        .map(move |version| CrdVersion { crd, version })
}

/// Add a CRD version's schemas and paths to a document's tables.
fn add_crd_version(
    cv: &CrdVersion<'_>,
    v2: bool,
    schemas: &mut Map<String, Value>,
    paths: &mut Map<String, Value>,
) {
    let (d, params) = descriptions();
    let k = cv.kind();
    let preserve = at(cv.crd, &["spec", "preserveUnknownFields"]) == Some(&Value::Bool(true));
    schemas.insert(
        model_name(&k.group, &k.version, &k.kind),
        kind_schema(&k.group, &k.version, &k.kind, cv.schema(), preserve, v2, d),
    );
    schemas.insert(
        model_name(&k.group, &k.version, &k.list_kind),
        list_schema(&k.group, &k.version, &k.kind, &k.list_kind, v2, d),
    );
    let describe = |n: &str| params.get(n).cloned();
    paths.extend(paths::paths(&k.borrowed(), v2, &describe));
}

/// The v3 document of a custom resources' group version.
fn crd_v3(gv: (&str, &str), crds: &[&Value]) -> Value {
    let mut schemas = Map::new();
    let mut paths = Map::new();
    for crd in crds {
        for cv in served_versions(crd).filter(|cv| cv.version() == gv.1) {
            add_crd_version(&cv, false, &mut schemas, &mut paths);
        }
    }
    // the meta types the paths reach: upstream's (described) where the module cache has its
    // core document, else the generated ones
    let mut table = generated::v3_schemas();
    if let Some(core) = upstream::v3("api/v1")
        && let Some(all) = core
            .pointer("/components/schemas")
            .and_then(Value::as_object)
    {
        table.extend(all.clone());
    }
    table.extend(schemas);
    let mut roots = BTreeSet::new();
    filter::refs(&Value::Object(paths.clone()), &mut roots);
    filter::prune(&mut table, "#/components/schemas/", &roots);
    let schemas = table;
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// Every v3 document served now, by key.
pub fn v3_documents(srv: &ApiServer) -> BTreeMap<String, Arc<Doc>> {
    let mut out = BTreeMap::new();
    let module = upstream::spec_dir().is_some();
    if !module {
        warn_without_module();
    }
    for key in generated::builtin_keys(&srv.crds) {
        let doc = if module {
            cached(format!("v3 builtin {key}"), || {
                let doc = upstream::v3(&key)?;
                filter::v3(&doc, &srv.crds).map(|d| Doc::new(&d))
            })
        } else {
            cached(format!("v3 generated {key}"), || {
                generated::v3(&key, &srv.crds).map(|d| Doc::new(&d))
            })
        };
        if let Some(d) = doc {
            out.insert(key, d);
        }
    }
    let crds = crds(srv);
    let mut by_gv: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    for crd in &crds {
        for cv in served_versions(crd) {
            let k = cv.kind();
            by_gv.entry((k.group, k.version)).or_default().push(crd);
        }
    }
    for ((g, v), crds) in by_gv {
        let key = format!("apis/{g}/{v}");
        let fp = format!("v3 crd {key} {}", fingerprint(&crds));
        if let Some(d) = cached(fp, || Some(Doc::new(&crd_v3((&g, &v), &crds)))) {
            out.insert(key, d);
        }
    }
    out
}

/// The v3 index: every document's server-relative URL with its hash.
pub fn v3_index(docs: &BTreeMap<String, Arc<Doc>>) -> Value {
    let paths: Map<String, Value> = docs
        .iter()
        .map(|(k, d)| {
            (
                k.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{k}?hash={}", d.etag)}),
            )
        })
        .collect();
    json!({"paths": paths})
}

/// The swagger document: upstream's cut to the served paths, with every custom resource's
/// definitions and paths merged in.
pub fn v2_document(srv: &ApiServer) -> Arc<Doc> {
    let crds = crds(srv);
    let refs: Vec<&Value> = crds.iter().collect();
    let key = format!("v2 {}", fingerprint(&refs));
    let build = || {
        let mut doc = match upstream::swagger() {
            Some(module) => cached_v2_base(|| filter::v2(&module, &srv.crds)),
            None => {
                warn_without_module();
                cached_v2_base(|| generated::v2(&srv.crds))
            }
        };
        let mut schemas = Map::new();
        let mut paths = Map::new();
        for crd in &crds {
            for cv in served_versions(crd) {
                add_crd_version(&cv, true, &mut schemas, &mut paths);
            }
        }
        if let Some(d) = doc["definitions"].as_object_mut() {
            d.extend(schemas);
        }
        if let Some(p) = doc["paths"].as_object_mut() {
            p.extend(paths);
        }
        Some(Doc::new(&doc))
    };
    cached(key, build).unwrap_or_else(|| Doc::new(&Value::Null))
}

/// The built-in part of the swagger document, built once (the built-in kinds do not change).
fn cached_v2_base(build: impl FnOnce() -> Value) -> Value {
    static BASE: OnceLock<Value> = OnceLock::new();
    BASE.get_or_init(build).clone()
}
