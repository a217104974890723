//! [`ServedResources`]: the resources a server serves right now, the built-in table plus the
//! versions of its custom resources, for routing and discovery. Rebuilt from the stored
//! CustomResourceDefinitions after every change to them ([`ServedResources::sync`]).

use std::collections::HashMap;

use parking_lot::RwLock;
use serde_json::Value;

use super::definition::{condition_true, definition_key, served_versions};
use super::version_order::by_priority;
use crate::registry::meta::at;
use crate::registry::resources::{GROUPS, RESOURCES, ResourceInfo, StorageId, is_builtin_group};

/// One served custom resource version.
#[derive(Debug, Clone, Copy)]
struct Entry {
    res: &'static ResourceInfo,
    /// Published in discovery (the CRD is Established; NamesAccepted alone serves requests).
    discoverable: bool,
}

#[derive(Debug, Default)]
struct Table {
    entries: Vec<Entry>,
    /// Storage bucket number per CRD name, kept when the CRD goes (its objects' keys, like
    /// etcd's, stay the same for a CRD recreated under the name).
    buckets: HashMap<String, u32>,
    /// Per bucket, how often its definition changed: watches end when it moves, as upstream
    /// tears a CRD's storage down when the CRD's spec or accepted names change, or it goes.
    generations: HashMap<u32, u64>,
    /// Per bucket, the definition it is served with now ([`definition_key`]).
    definitions: HashMap<u32, String>,
}

/// The resources served by one server.
#[derive(Debug, Default)]
pub struct ServedResources {
    table: RwLock<Table>,
}

/// A group in `/apis` order with its versions, preferred first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVersions {
    /// Group name.
    pub name: String,
    /// Versions, by priority.
    pub versions: Vec<String>,
}

impl ServedResources {
    /// A resource by group, version and plural: built-in, or a served custom resource version.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&'static ResourceInfo> {
        if let Some(r) = crate::registry::find(group, version, plural) {
            return Some(r);
        }
        self.table
            .read()
            .entries
            .iter()
            .map(|e| e.res)
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    /// Whether the group is served (its paths answer with Status errors, others with Go's
    /// plain-text 404).
    pub fn serves_group(&self, group: &str) -> bool {
        is_builtin_group(group)
            || self
                .table
                .read()
                .entries
                .iter()
                .any(|e| e.res.group == group)
    }

    /// Whether `/apis/<group>/<version>` is a served group version.
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.group(group)
            .is_some_and(|g| g.versions.iter().any(|v| v == version))
    }

    /// Every group of `/apis`, in kube-apiserver's order: the built-in groups, then the custom
    /// resources' groups (group priority 1000), by the name of their first APIService
    /// (`<version>.<group>`), as the aggregator sorts them.
    pub fn groups(&self) -> Vec<GroupVersions> {
        let mut out: Vec<GroupVersions> = GROUPS
            .iter()
            .map(|g| GroupVersions {
                name: g.name.to_string(),
                versions: g.versions.iter().map(|v| v.to_string()).collect(),
            })
            .collect();
        let t = self.table.read();
        let mut custom: Vec<(String, GroupVersions)> = Vec::new();
        for e in t.entries.iter().filter(|e| e.discoverable) {
            let (g, v) = (e.res.group, e.res.version);
            match custom.iter_mut().find(|(_, gv)| gv.name == g) {
                Some((key, gv)) => {
                    if !gv.versions.iter().any(|x| x == v) {
                        gv.versions.push(v.to_string());
                    }
                    let k = format!("{v}.{g}");
                    if k < *key {
                        *key = k;
                    }
                }
                None => custom.push((
                    format!("{v}.{g}"),
                    GroupVersions {
                        name: g.to_string(),
                        versions: vec![v.to_string()],
                    },
                )),
            }
        }
        custom.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, mut gv) in custom {
            gv.versions.sort_by(|a, b| by_priority(a, b));
            out.push(gv);
        }
        out
    }

    /// One group of `/apis`.
    pub fn group(&self, group: &str) -> Option<GroupVersions> {
        self.groups().into_iter().find(|g| g.name == group)
    }

    /// The resources of a group version, for `/api/v1` and `/apis/<group>/<version>`.
    pub fn resources(&self, group: &str, version: &str) -> Vec<&'static ResourceInfo> {
        let mut out: Vec<&'static ResourceInfo> = RESOURCES
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .collect();
        out.extend(
            self.table
                .read()
                .entries
                .iter()
                .filter(|e| e.discoverable && e.res.group == group && e.res.version == version)
                .map(|e| e.res),
        );
        out
    }

    /// The storage bucket of the CRD named `crd_name` (a new one the first time).
    pub fn bucket_of(&self, crd_name: &str) -> StorageId {
        let mut t = self.table.write();
        let next = u32::try_from(t.buckets.len()).unwrap_or(u32::MAX);
        StorageId::custom(*t.buckets.entry(crd_name.to_string()).or_insert(next))
    }

    /// Every custom resource served now: `(bucket, namespaced)`, one per CRD.
    pub fn custom_buckets(&self) -> Vec<(StorageId, bool)> {
        let mut out: Vec<(StorageId, bool)> = Vec::new();
        for e in &self.table.read().entries {
            if !out.iter().any(|(id, _)| *id == e.res.storage) {
                out.push((e.res.storage, e.res.namespaced));
            }
        }
        out
    }

    /// How often the definition behind a bucket changed (0 for built-in buckets).
    pub fn generation(&self, id: StorageId) -> u64 {
        match id.custom_number() {
            Some(n) => self.table.read().generations.get(&n).copied().unwrap_or(0),
            None => 0,
        }
    }

    /// Rebuild the custom entries from every stored CRD. A CRD is served once its names are
    /// accepted (or it is Established) and published in discovery once Established. Returns the
    /// buckets whose definition changed or went (their watches are to end).
    pub fn sync(&self, crds: &[Value]) -> Vec<StorageId> {
        let mut entries = Vec::new();
        let mut definitions = HashMap::new();
        for crd in crds {
            let established = condition_true(crd, "Established");
            if !established && !condition_true(crd, "NamesAccepted") {
                continue;
            }
            let name = at(crd, &["metadata", "name"])
                .and_then(Value::as_str)
                .unwrap_or("");
            let bucket = self.bucket_of(name);
            if let Some(n) = bucket.custom_number() {
                definitions.insert(n, definition_key(crd));
            }
            entries.extend(served_versions(crd, bucket).into_iter().map(|res| Entry {
                res,
                discoverable: established,
            }));
        }
        let mut t = self.table.write();
        let mut changed = Vec::new();
        for (n, key) in &t.definitions {
            if definitions.get(n) != Some(key) {
                changed.push(StorageId::custom(*n));
            }
        }
        for id in &changed {
            if let Some(n) = id.custom_number() {
                *t.generations.entry(n).or_insert(0) += 1;
            }
        }
        t.entries = entries;
        t.definitions = definitions;
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(group: &str, plural: &str, versions: &[&str], established: bool) -> Value {
        let vs: Vec<Value> = versions
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"name": v, "served": true, "storage": i == 0}))
            .collect();
        let status = if established { "True" } else { "False" };
        json!({
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Cluster", "versions": vs,
                     "names": {"plural": plural, "kind": "K"}},
            "status": {"conditions": [
                {"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": status},
            ]},
        })
    }

    #[test]
    fn groups_in_aggregator_order() {
        let s = ServedResources::default();
        s.sync(&[
            crd("b.example.com", "bs", &["v1"], true),
            crd("a.example.com", "as", &["v1beta1", "v2", "v1"], true),
            crd("c.example.com", "cs", &["v1"], false),
        ]);
        let names: Vec<String> = s.groups().into_iter().map(|g| g.name).collect();
        let builtin: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
        assert_eq!(names[..builtin.len()], builtin[..]);
        assert_eq!(names[builtin.len()..], ["a.example.com", "b.example.com"]);
        assert_eq!(
            s.group("a.example.com").map(|g| g.versions),
            Some(vec!["v2".to_string(), "v1".into(), "v1beta1".into()])
        );
        // served but not yet in discovery while not Established
        assert!(s.find("c.example.com", "v1", "cs").is_some());
        assert!(s.resources("c.example.com", "v1").is_empty());
        assert!(s.serves_group_version("a.example.com", "v1beta1"));
        assert!(s.find("apps", "v1", "deployments").is_some());
    }

    #[test]
    fn buckets_stay_with_the_name_and_changes_are_reported() {
        let s = ServedResources::default();
        let a = crd("a.example.com", "as", &["v1"], true);
        assert!(s.sync(std::slice::from_ref(&a)).is_empty());
        let id = s.find("a.example.com", "v1", "as").map(|r| r.storage);
        assert_eq!(id, Some(StorageId::custom(0)));
        assert_eq!(s.sync(&[]), vec![StorageId::custom(0)]);
        assert_eq!(s.generation(StorageId::custom(0)), 1);
        assert!(s.find("a.example.com", "v1", "as").is_none());
        s.sync(&[crd("b.example.com", "bs", &["v1"], true), a]);
        assert_eq!(
            s.find("a.example.com", "v1", "as").map(|r| r.storage),
            Some(StorageId::custom(0))
        );
        assert_eq!(
            s.find("b.example.com", "v1", "bs").map(|r| r.storage),
            Some(StorageId::custom(1))
        );
    }
}
