//! Stale-controller consistency (upstream `pkg/controller/util/consistency`, feature gate
//! `StaleControllerConsistencyReplicaSet`, beta and on by default since v1.36): a controller
//! records the resourceVersion of each write it makes on behalf of an owner, and defers the
//! owner's next sync until every informer it reads has caught up with those writes. Without it a
//! sync right after a write decides from a cache that does not show the write yet, and its status
//! write fails with a 409 Conflict (or, worse, it acts twice).
//!
//! ```
//! use std::sync::Arc;
//! use kcm_controller::consistency::{ConsistencyStore, GroupResource};
//!
//! const PODS: GroupResource = GroupResource { group: "", resource: "pods" };
//! let cache_rv = Arc::new(parking_lot::Mutex::new(String::from("10")));
//! let seen = cache_rv.clone();
//! let store = ConsistencyStore::new(vec![(PODS, Arc::new(move || seen.lock().clone()))]);
//! store.wrote_at("ns", "web", "uid-1", PODS, "12");
//! assert!(store.ensure_ready("ns", "web").is_err(), "the pod cache is at 10, the write at 12");
//! *cache_rv.lock() = "12".into();
//! assert!(store.ensure_ready("ns", "web").is_ok());
//! ```

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

/// An API group and resource (`apps`/`replicasets`, ``/`pods`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Resource, plural.
    pub resource: &'static str,
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// The resourceVersion an informer's cache has last applied (list, event or bookmark).
pub type LastSyncResourceVersion = Arc<dyn Fn() -> String + Send + Sync>;

/// A sync deferred because a cache has not seen the controller's own write yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "read version: {read_rv} is not as new as written version: {wrote_rv} for group resource {group_resource}"
)]
pub struct ConsistencyError {
    /// The cache's resourceVersion.
    pub read_rv: String,
    /// The write's resourceVersion.
    pub wrote_rv: String,
    /// The cache that is behind.
    pub group_resource: GroupResource,
}

/// Compares two resourceVersions as upstream's `CompareResourceVersion`: both must be decimal
/// digits without a leading zero (else `None`); longer is newer, then lexical order.
pub fn compare_resource_version(a: &str, b: &str) -> Option<Ordering> {
    let well_formed =
        |s: &str| !s.is_empty() && !s.starts_with('0') && s.bytes().all(|c| c.is_ascii_digit());
    if !well_formed(a) || !well_formed(b) {
        return None;
    }
    Some(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// Syncs skipped because a cache was stale, by metrics subsystem and cache
/// (`<subsystem>_stale_sync_skips_total{group, resource}`).
static STALE_SYNC_SKIPS: Mutex<std::collections::BTreeMap<(&'static str, GroupResource), u64>> =
    parking_lot::const_mutex(std::collections::BTreeMap::new());

/// Counts one sync skipped by `subsystem` (e.g. `replicaset_controller`) for `error`'s cache.
pub fn record_stale_sync_skip(subsystem: &'static str, error: &ConsistencyError) {
    *STALE_SYNC_SKIPS
        .lock()
        .entry((subsystem, error.group_resource))
        .or_default() += 1;
}

/// Every skip counter: `(subsystem, cache, count)`, for a metrics endpoint.
pub fn stale_sync_skips() -> Vec<(&'static str, GroupResource, u64)> {
    STALE_SYNC_SKIPS
        .lock()
        .iter()
        .map(|((s, gr), n)| (*s, *gr, *n))
        .collect()
}

#[derive(Debug)]
struct OwnerRecord {
    uid: String,
    versions: HashMap<GroupResource, String>,
}

/// The writes made for each owner (`namespace/name`), newest resourceVersion per resource.
pub struct ConsistencyStore {
    writes: Mutex<HashMap<(String, String), OwnerRecord>>,
    stores: Vec<(GroupResource, LastSyncResourceVersion)>,
}

impl fmt::Debug for ConsistencyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsistencyStore")
            .field("owners", &self.writes.lock().len())
            .field(
                "stores",
                &self.stores.iter().map(|(gr, _)| gr).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ConsistencyStore {
    /// A store checking the caches in `stores`.
    pub fn new(stores: Vec<(GroupResource, LastSyncResourceVersion)>) -> Self {
        Self {
            writes: Mutex::new(HashMap::new()),
            stores,
        }
    }

    /// Records a write for `owner` (uid `owner_uid`) to `resource` at `rv`; keeps the newest per
    /// resource. A record of an owner with another uid (a recreated object) is replaced.
    pub fn wrote_at(
        &self,
        namespace: &str,
        name: &str,
        owner_uid: &str,
        resource: GroupResource,
        rv: &str,
    ) {
        let mut writes = self.writes.lock();
        let record = writes
            .entry((namespace.to_string(), name.to_string()))
            .or_insert_with(|| OwnerRecord {
                uid: owner_uid.to_string(),
                versions: HashMap::new(),
            });
        if record.uid != owner_uid {
            record.uid = owner_uid.to_string();
            record.versions.clear();
        }
        let newer = record.versions.get(&resource).is_none_or(|old| {
            !matches!(
                compare_resource_version(old, rv),
                Some(Ordering::Greater | Ordering::Equal)
            )
        });
        if newer {
            record.versions.insert(resource, rv.to_string());
        }
    }

    /// Forgets `owner`'s writes (only if its uid is `owner_uid`, when given).
    pub fn clear(&self, namespace: &str, name: &str, owner_uid: Option<&str>) {
        let mut writes = self.writes.lock();
        let key = (namespace.to_string(), name.to_string());
        if writes
            .get(&key)
            .is_some_and(|r| owner_uid.is_none_or(|u| u.is_empty() || r.uid == u))
        {
            writes.remove(&key);
        }
    }

    /// `Ok` when every cache has seen `owner`'s writes (the record is then dropped), or when
    /// nothing is recorded; the first cache still behind otherwise. Caches that have not synced
    /// (`""`) and versions that are not comparable are not waited for.
    pub fn ensure_ready(&self, namespace: &str, name: &str) -> Result<(), ConsistencyError> {
        let key = (namespace.to_string(), name.to_string());
        let mut writes = self.writes.lock();
        let Some(record) = writes.get(&key) else {
            return Ok(());
        };
        for (gr, wrote) in &record.versions {
            let Some((_, read)) = self.stores.iter().find(|(g, _)| g == gr) else {
                continue;
            };
            let read = read();
            if read.is_empty() {
                continue;
            }
            if compare_resource_version(wrote, &read) == Some(Ordering::Greater) {
                return Err(ConsistencyError {
                    read_rv: read,
                    wrote_rv: wrote.clone(),
                    group_resource: *gr,
                });
            }
        }
        writes.remove(&key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PODS: GroupResource = GroupResource {
        group: "",
        resource: "pods",
    };
    const RS: GroupResource = GroupResource {
        group: "apps",
        resource: "replicasets",
    };

    #[test]
    fn resource_versions_compare_as_upstream() {
        let cases = [
            ("1", "2", Some(Ordering::Less)),
            ("10", "9", Some(Ordering::Greater)),
            ("123", "123", Some(Ordering::Equal)),
            (
                "99999999999999999999",
                "100000000000000000000",
                Some(Ordering::Less),
            ),
            ("", "1", None),
            ("01", "1", None),
            ("1a", "1", None),
            ("-1", "1", None),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare_resource_version(a, b), want, "{a} vs {b}");
        }
    }

    fn cache(rv: &str) -> (Arc<Mutex<String>>, LastSyncResourceVersion) {
        let cell = Arc::new(Mutex::new(rv.to_string()));
        let read = cell.clone();
        (cell, Arc::new(move || read.lock().clone()))
    }

    #[test]
    fn a_sync_waits_for_every_cache_to_see_the_writes() {
        let (pods, pods_rv) = cache("5");
        let (rs, rs_rv) = cache("5");
        let store = ConsistencyStore::new(vec![(PODS, pods_rv), (RS, rs_rv)]);
        assert!(
            store.ensure_ready("ns", "web").is_ok(),
            "no writes recorded"
        );
        store.wrote_at("ns", "web", "u1", PODS, "7");
        store.wrote_at("ns", "web", "u1", PODS, "6"); // older: kept 7
        store.wrote_at("ns", "web", "u1", RS, "8");
        let err = store.ensure_ready("ns", "web").unwrap_err();
        assert_eq!(err.read_rv, "5");
        *pods.lock() = "7".into();
        let err = store.ensure_ready("ns", "web").unwrap_err();
        assert_eq!((err.group_resource, err.wrote_rv.as_str()), (RS, "8"));
        *rs.lock() = "9".into();
        assert!(store.ensure_ready("ns", "web").is_ok());
        *pods.lock() = "1".into();
        assert!(
            store.ensure_ready("ns", "web").is_ok(),
            "the record was dropped once ready"
        );
    }

    #[test]
    fn unsynced_caches_unknown_resources_and_bad_versions_do_not_block() {
        let (_, empty) = cache("");
        let store = ConsistencyStore::new(vec![(PODS, empty)]);
        store.wrote_at("ns", "a", "u", PODS, "9");
        store.wrote_at("ns", "a", "u", RS, "9");
        assert!(store.ensure_ready("ns", "a").is_ok());
        let (_, pods_rv) = cache("3");
        let store = ConsistencyStore::new(vec![(PODS, pods_rv)]);
        store.wrote_at("ns", "b", "u", PODS, "not-a-number");
        assert!(store.ensure_ready("ns", "b").is_ok());
    }

    #[test]
    fn clear_and_recreated_owners() {
        let (_, pods_rv) = cache("1");
        let store = ConsistencyStore::new(vec![(PODS, pods_rv)]);
        store.wrote_at("ns", "web", "u1", PODS, "5");
        store.clear("ns", "web", Some("other-uid"));
        assert!(
            store.ensure_ready("ns", "web").is_err(),
            "another uid: kept"
        );
        store.clear("ns", "web", Some("u1"));
        assert!(store.ensure_ready("ns", "web").is_ok());
        store.wrote_at("ns", "web", "u1", PODS, "5");
        store.wrote_at("ns", "web", "u2", PODS, "2"); // recreated: the old record goes
        assert!(store.ensure_ready("ns", "web").is_err());
        store.clear("ns", "web", None);
        assert!(store.ensure_ready("ns", "web").is_ok());
    }
}
