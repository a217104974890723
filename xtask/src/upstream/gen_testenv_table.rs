//! The resource table of `cargo xtask upstream gen-testenv`: kube-apiserver's discovery
//! documents (legacy `/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`, and the aggregated
//! `APIGroupDiscoveryList`s of `/api` and `/apis`) turned into the Rust table of
//! `testenv/src/registry/builtin.rs`.
//!
//! Storage buckets: every resource kube-apiserver stores (its discovery entry has a
//! `storageVersionHash`) gets the bucket of its group and resource; a resource served in
//! several versions (autoscaling/v1 and v2 `horizontalpodautoscalers`) has one bucket, and
//! events.k8s.io `events` share core `events`' (the one pair of cohabiting resources left in
//! `pkg/kubeapiserver/default_storage_factory_builder.go`). Resources without storage (reviews,
//! `bindings`, `componentstatuses`) name the empty bucket `NONE`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Context, bail};
use serde_json::Value;

/// Resources stored together with another group's resource: `(group, resource)` → the group
/// whose bucket they use.
const COHABITING: &[(&str, &str, &str)] = &[("events.k8s.io", "events", "")];

/// What the generator reads from a running kube-apiserver.
#[derive(Debug, Default)]
pub struct Discovery {
    /// `GET /apis` (legacy `APIGroupList`).
    pub apis: Value,
    /// `APIResourceList` by group version (`v1`, `apps/v1`).
    pub resource_lists: BTreeMap<String, Value>,
    /// The aggregated `APIGroupDiscoveryList` of `/api`.
    pub aggregated_api: Value,
    /// The aggregated `APIGroupDiscoveryList` of `/apis`.
    pub aggregated_apis: Value,
}

/// One resource of the table.
#[derive(Debug)]
struct Resource {
    group: String,
    version: String,
    plural: String,
    singular: String,
    kind: String,
    namespaced: bool,
    short_names: Vec<String>,
    categories: Vec<String>,
    verbs: Vec<String>,
    hash: String,
    subresources: Vec<Subresource>,
}

#[derive(Debug)]
struct Subresource {
    name: String,
    /// The group and version discovery names for it (when they are not the resource's).
    group: Option<String>,
    version: Option<String>,
    kind: String,
    verbs: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The groups other than core in `/apis` order, each with its versions, preferred first.
fn groups(d: &Discovery) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for g in d.apis["groups"].as_array().context("/apis has no groups")? {
        let name = text(g, "name");
        let mut versions: Vec<String> = g["versions"]
            .as_array()
            .map(|vs| vs.iter().map(|v| text(v, "version")).collect())
            .unwrap_or_default();
        let preferred = text(&g["preferredVersion"], "version");
        if versions.first() != Some(&preferred) {
            // keep the table's rule: the preferred version first
            versions.retain(|v| *v != preferred);
            versions.insert(0, preferred);
        }
        out.push((name, versions));
    }
    Ok(out)
}

/// The aggregated documents' groups and versions, in order, to check the legacy ones against.
fn aggregated_groups(d: &Discovery) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for list in [&d.aggregated_api, &d.aggregated_apis] {
        for item in list["items"].as_array().into_iter().flatten() {
            let name = text(&item["metadata"], "name");
            let versions = item["versions"]
                .as_array()
                .map(|vs| vs.iter().map(|v| text(v, "version")).collect())
                .unwrap_or_default();
            out.push((name, versions));
        }
    }
    out
}

fn resources_of(group: &str, version: &str, list: &Value) -> anyhow::Result<Vec<Resource>> {
    let entries = list["resources"]
        .as_array()
        .with_context(|| format!("no resources in {group}/{version}"))?;
    let mut out: Vec<Resource> = Vec::new();
    for e in entries {
        let name = text(e, "name");
        if let Some((parent, sub)) = name.split_once('/') {
            let Some(r) = out.iter_mut().find(|r| r.plural == parent) else {
                bail!("{group}/{version}: subresource {name} before its resource");
            };
            let field = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            r.subresources.push(Subresource {
                name: sub.to_string(),
                group: field("group"),
                version: field("version"),
                kind: text(e, "kind"),
                verbs: strings(&e["verbs"]),
            });
            continue;
        }
        out.push(Resource {
            group: group.to_string(),
            version: version.to_string(),
            singular: text(e, "singularName"),
            kind: text(e, "kind"),
            namespaced: e["namespaced"].as_bool().unwrap_or(false),
            short_names: strings(&e["shortNames"]),
            categories: strings(&e["categories"]),
            verbs: strings(&e["verbs"]),
            hash: text(e, "storageVersionHash"),
            subresources: Vec::new(),
            plural: name,
        });
    }
    Ok(out)
}

/// The storage buckets: `(constant name, group, plural)` in table order, `NONE` first.
fn buckets(resources: &[Resource]) -> Vec<(String, String, String)> {
    let mut out = vec![("NONE".to_string(), String::new(), String::new())];
    for r in resources {
        let Some((g, p)) = storage_key(r) else {
            continue;
        };
        if out.iter().any(|(_, og, op)| *og == g && *op == p) {
            continue;
        }
        let mut name = p.to_ascii_uppercase();
        if out.iter().any(|(n, _, _)| *n == name) {
            let prefix = g.split('.').next().unwrap_or(&g).to_ascii_uppercase();
            name = format!("{prefix}_{name}");
        }
        out.push((name, g, p));
    }
    out
}

/// The `(group, plural)` of a resource's bucket (`None` when kube-apiserver does not store it).
fn storage_key(r: &Resource) -> Option<(String, String)> {
    if r.hash.is_empty() {
        return None;
    }
    let group = COHABITING
        .iter()
        .find(|(g, p, _)| *g == r.group && *p == r.plural)
        .map_or(r.group.as_str(), |(_, _, to)| to);
    Some((group.to_string(), r.plural.clone()))
}

fn str_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// The Rust source of `testenv/src/registry/builtin.rs`.
pub fn render(version: &str, d: &Discovery) -> anyhow::Result<String> {
    let groups = groups(d)?;
    let aggregated = aggregated_groups(d);
    let mut legacy = vec![(String::new(), vec!["v1".to_string()])];
    legacy.extend(groups.iter().cloned());
    if aggregated != legacy {
        bail!(
            "the aggregated discovery's groups and versions differ from the legacy ones:\n\
             aggregated {aggregated:?}\nlegacy {legacy:?}"
        );
    }
    let mut resources = Vec::new();
    for (group, versions) in &legacy {
        for v in versions {
            let gv = if group.is_empty() {
                v.clone()
            } else {
                format!("{group}/{v}")
            };
            let list = d
                .resource_lists
                .get(&gv)
                .with_context(|| format!("no resource list for {gv}"))?;
            resources.extend(resources_of(group, v, list)?);
        }
    }
    let buckets = buckets(&resources);
    let bucket_of = |r: &Resource| -> &str {
        storage_key(r)
            .and_then(|(g, p)| buckets.iter().find(|(_, bg, bp)| *bg == g && *bp == p))
            .map_or("NONE", |(n, _, _)| n.as_str())
    };

    let mut out = String::new();
    writeln!(
        out,
        "// @generated by `cargo xtask upstream gen-testenv` from the discovery documents of\n\
         // kube-apiserver {version} with its default API set (as `cargo xtask cluster up --upstream`\n\
         // starts it). Do not edit; regenerate with `cargo xtask upstream gen-testenv`.\n\
         \n\
         use super::resource_info::{{GroupInfo, ResourceInfo, StorageId, SubresourceInfo}};\n\
         \n\
         impl StorageId {{\n\
         \x20   /// The bucket of the resources kube-apiserver does not store (reviews, `bindings`,\n\
         \x20   /// `componentstatuses`): always empty.\n\
         \x20   pub const NONE: StorageId = StorageId(0);"
    )?;
    for (i, (name, group, plural)) in buckets.iter().enumerate().skip(1) {
        let g = if group.is_empty() { "core" } else { group };
        writeln!(
            out,
            "    /// {g} `{plural}`\n    pub const {name}: StorageId = StorageId({i});"
        )?;
    }
    writeln!(
        out,
        "}}\n\n\
         /// Number of built-in storage buckets ([`StorageId::NONE`] included); custom resources'\n\
         /// buckets follow them.\n\
         pub const STORAGE_COUNT: usize = {};\n\n\
         /// The built-in API groups other than core, in kube-apiserver's `/apis` order (group\n\
         /// priority), each with its versions, the preferred one first.\n\
         pub static GROUPS: &[GroupInfo] = &[",
        buckets.len()
    )?;
    for (name, versions) in &groups {
        writeln!(
            out,
            "    GroupInfo {{ name: {name:?}, versions: {} }},",
            str_list(versions)
        )?;
    }
    writeln!(
        out,
        "];\n\n\
         /// Every built-in resource: core/v1 first, then each group of [`GROUPS`] by version,\n\
         /// resources in discovery order.\n\
         pub static RESOURCES: &[ResourceInfo] = &["
    )?;
    for r in &resources {
        let mut subs = Vec::new();
        for s in &r.subresources {
            let over = |v: &Option<String>| match v {
                None => "None".to_string(),
                Some(v) => format!("Some({v:?})"),
            };
            subs.push(format!(
                "SubresourceInfo {{ name: {:?}, kind: {:?}, group: {}, version: {}, verbs: {} }}",
                s.name,
                s.kind,
                over(&s.group),
                over(&s.version),
                str_list(&s.verbs)
            ));
        }
        writeln!(
            out,
            "    ResourceInfo {{ group: {:?}, version: {:?}, plural: {:?}, singular: {:?}, \
             kind: {:?}, namespaced: {}, short_names: {}, categories: {}, verbs: {}, \
             subresources: &[{}], storage: StorageId::{}, storage_version_hash: {:?}, \
             custom: None }},",
            r.group,
            r.version,
            r.plural,
            r.singular,
            r.kind,
            r.namespaced,
            str_list(&r.short_names),
            str_list(&r.categories),
            str_list(&r.verbs),
            subs.join(", "),
            bucket_of(r),
            r.hash,
        )?;
    }
    writeln!(out, "];")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn discovery() -> Discovery {
        let mut d = Discovery {
            apis: json!({"groups": [
                {"name": "events.k8s.io", "versions": [{"version": "v1"}],
                 "preferredVersion": {"version": "v1"}},
                {"name": "autoscaling", "versions": [{"version": "v2"}, {"version": "v1"}],
                 "preferredVersion": {"version": "v2"}},
            ]}),
            aggregated_api: json!({"items": [{"metadata": {"name": ""}, "versions": [{"version": "v1"}]}]}),
            aggregated_apis: json!({"items": [
                {"metadata": {"name": "events.k8s.io"}, "versions": [{"version": "v1"}]},
                {"metadata": {"name": "autoscaling"}, "versions": [{"version": "v2"}, {"version": "v1"}]},
            ]}),
            ..Default::default()
        };
        let hpa = || {
            json!({"resources": [
                {"name": "horizontalpodautoscalers", "singularName": "horizontalpodautoscaler",
                 "namespaced": true, "kind": "HorizontalPodAutoscaler", "verbs": ["get"],
                 "shortNames": ["hpa"], "categories": ["all"], "storageVersionHash": "h"},
                {"name": "horizontalpodautoscalers/status", "singularName": "", "namespaced": true,
                 "kind": "HorizontalPodAutoscaler", "verbs": ["get", "patch", "update"]},
            ]})
        };
        d.resource_lists.insert("autoscaling/v2".into(), hpa());
        d.resource_lists.insert("autoscaling/v1".into(), hpa());
        d.resource_lists.insert(
            "events.k8s.io/v1".into(),
            json!({"resources": [{"name": "events", "singularName": "event", "namespaced": true,
                                  "kind": "Event", "verbs": ["get"], "storageVersionHash": "e"}]}),
        );
        d.resource_lists.insert(
            "v1".into(),
            json!({"resources": [
                {"name": "bindings", "singularName": "binding", "namespaced": true, "kind": "Binding", "verbs": ["create"]},
                {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event",
                 "verbs": ["get"], "storageVersionHash": "e"},
                {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
                 "verbs": ["get"], "storageVersionHash": "p"},
                {"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy",
                 "version": "v1", "kind": "Eviction", "verbs": ["create"]},
            ]}),
        );
        d
    }

    #[test]
    fn buckets_shared_by_versions_and_cohabiting_events() {
        let out = render("v1.37.2", &discovery()).expect("render");
        assert!(out.contains("pub const EVENTS: StorageId = StorageId(1);"));
        assert!(out.contains("pub const PODS: StorageId = StorageId(2);"));
        assert!(out.contains("pub const HORIZONTALPODAUTOSCALERS: StorageId = StorageId(3);"));
        assert!(out.contains("pub const STORAGE_COUNT: usize = 4;"));
        assert_eq!(out.matches("storage: StorageId::EVENTS").count(), 2);
        assert_eq!(
            out.matches("storage: StorageId::HORIZONTALPODAUTOSCALERS")
                .count(),
            2
        );
        assert!(out.contains("plural: \"bindings\""));
        assert!(out.contains("storage: StorageId::NONE"));
        assert!(out.contains(
            "SubresourceInfo { name: \"eviction\", kind: \"Eviction\", group: Some(\"policy\"), \
             version: Some(\"v1\"), verbs: &[\"create\"] }"
        ));
        assert!(out.contains("GroupInfo { name: \"autoscaling\", versions: &[\"v2\", \"v1\"] }"));
    }

    #[test]
    fn legacy_and_aggregated_discovery_must_agree() {
        let mut d = discovery();
        d.aggregated_apis["items"][1]["versions"] = json!([{"version": "v1"}]);
        assert!(render("v1.37.2", &d).is_err());
    }
}
