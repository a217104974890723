//! kube-apiserver's in-process CustomResourceDefinition controllers, run after every change
//! to a CRD: the naming controller (accepted names, `NamesAccepted`), the establishing
//! controller (`Established`), the served resources and discovery refreshed, and the
//! finalizer controller, which deletes a deleted CRD's objects before the CRD goes. Each
//! status change is its own write, as upstream's controllers make them through the API.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::delete::{DeleteOptions, delete_in_txn};
use super::handlers::update_in_txn;
use super::server::ApiServer;
use crate::registry::custom::crd_strategy::CLEANUP_FINALIZER;
use crate::registry::custom::definition::condition_true;
use crate::registry::custom::naming::{establishing, naming, set_condition};
use crate::registry::meta::{self, at};
use crate::registry::{ResourceInfo, StorageId, for_storage};
use crate::storage::key_of;

const CRDS: StorageId = StorageId::CUSTOMRESOURCEDEFINITIONS;

fn all_crds(srv: &ApiServer) -> Vec<Value> {
    srv.store
        .snapshot(CRDS, "", &|_| true)
        .0
        .iter()
        .map(|o| o.value())
        .collect()
}

/// Write a CRD's new status through the status subresource's update path, if the CRD is still
/// the one the decision was made on (a controller's UpdateStatus with its resourceVersion).
fn write_status(srv: &ApiServer, before: &Value, after: Value) -> bool {
    let name = meta::name_of(before).to_string();
    let res = for_storage(CRDS);
    srv.store.write(|txn| {
        let Some(cur) = txn.get(CRDS, &name) else {
            return false;
        };
        if cur.rv.to_string() != meta::rv_of(before) {
            return false;
        }
        update_in_txn(txn, res, Some("status"), &cur, after, false).is_ok()
    })
}

/// Bring every CRD's status, the served resources and the finalizers up to date.
pub fn reconcile(srv: &Arc<ApiServer>) {
    let _serial = srv.crd_controller.lock();
    // a status write may enable the next step (names accepted, then established)
    for _ in 0..4 {
        let crds = all_crds(srv);
        let mut wrote = false;
        for crd in &crds {
            let now = meta::now_rfc3339();
            if let Some(next) = naming(crd, &crds, &now) {
                wrote |= write_status(srv, crd, next);
            } else if let Some(next) = establishing(crd, &now) {
                wrote |= write_status(srv, crd, next);
            }
        }
        if !wrote {
            break;
        }
    }
    let crds = all_crds(srv);
    for id in srv.crds.sync(&crds) {
        // watches of a changed or removed custom resource end, as upstream's do when it
        // tears the old storage down
        srv.store.wake(id);
    }
    for crd in &crds {
        let deleting = at(crd, &["metadata", "deletionTimestamp"]).is_some();
        if deleting && meta::finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER) {
            let uid = meta::uid_of(crd).to_string();
            if srv.crd_finalizing.lock().insert(uid.clone()) {
                tokio::spawn(finalize(srv.clone(), meta::name_of(crd).to_string(), uid));
            }
        }
    }
}

/// The finalizer controller for one CRD: `Terminating` True, every object deleted (objects
/// with finalizers are waited for), then `Terminating` False and the finalizer removed, which
/// deletes the CRD.
async fn finalize(srv: Arc<ApiServer>, name: String, uid: String) {
    let Some(crd) = srv.store.get(CRDS, &name).map(|o| o.value()) else {
        srv.crd_finalizing.lock().remove(&uid);
        return;
    };
    let now = meta::now_rfc3339();
    let mut progress = crd.clone();
    set_condition(
        &mut progress,
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
        &now,
    );
    write_status(&srv, &crd, progress);
    let (reason, message) = if condition_true(&crd, "Established") {
        let group = at(&crd, &["spec", "group"])
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = at(&crd, &["spec", "versions"])
            .and_then(Value::as_array)
            .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
            .and_then(|v| v["name"].as_str())
            .unwrap_or("");
        let plural = at(&crd, &["spec", "names", "plural"])
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(res) = srv.crds.find(group, version, plural) {
            delete_all(&srv, res).await;
        }
        ("InstanceDeletionCompleted", "removed all instances")
    } else {
        ("NeverEstablished", "resource was never established")
    };
    if srv.shutdown.is_cancelled() {
        return;
    }
    srv.store.write(|txn| {
        let Some(cur) = txn.get(CRDS, &name) else {
            return;
        };
        let mut v = cur.value();
        if meta::uid_of(&v) != uid {
            return;
        }
        set_condition(
            &mut v,
            "Terminating",
            "False",
            reason,
            message,
            &meta::now_rfc3339(),
        );
        let fins: Vec<String> = meta::finalizers(&v)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .collect();
        meta::set_finalizers(&mut v, &fins);
        let _ = update_in_txn(txn, for_storage(CRDS), Some("status"), &cur, v, false);
    });
    srv.crd_finalizing.lock().remove(&uid);
    reconcile(&srv);
}

/// Delete every object of a custom resource and wait until none is left.
async fn delete_all(srv: &Arc<ApiServer>, res: &'static ResourceInfo) {
    let mut changes = srv.store.subscribe_storage(res.storage);
    let (items, _) = srv.store.snapshot(res.storage, "", &|_| true);
    let opts = DeleteOptions::default();
    for it in items {
        let v = it.value();
        let name = meta::name_of(&v).to_string();
        let key = key_of(meta::namespace_of(&v), &name);
        let _ = srv
            .store
            .write(|txn| delete_in_txn(txn, res, &key, &name, &opts));
    }
    while srv.store.count(res.storage) > 0 {
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = srv.shutdown.cancelled() => return,
        }
    }
}
