//! `pods/eviction` (upstream `pkg/registry/core/pod/storage/eviction.go`): a pod is deleted
//! with the Eviction's `deleteOptions` unless a PodDisruptionBudget that selects it allows no
//! disruption now (`status.disruptionsAllowed`, written by the disruption controller; with none
//! running a budget stays at 0 and blocks), which is a 429.

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};

use super::delete::{DeleteOptions, delete_in_txn};
use super::http::{Body, Ctx, parse_body, value_response};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::StorageId;
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::label_selector;
use crate::registry::meta::{self, at};
use crate::storage::key_of;

/// Whether a PDB's label selector selects these labels (`matchLabels` and `matchExpressions`).
fn selects(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    selector
        .filter(|s| s.is_object())
        .is_some_and(|s| label_selector::matches(s, labels))
}

/// `POST pods/<name>/eviction`.
pub fn evict(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let ns = t.namespace.as_deref().unwrap_or("");
    let name = t.name.as_deref().unwrap_or("");
    let eviction = parse_body(ctx)?;
    let options_ctx = Ctx {
        body: eviction
            .get("deleteOptions")
            .filter(|o| o.is_object())
            .map(|o| Bytes::from(o.to_string()))
            .unwrap_or_default(),
        ..Ctx::default()
    };
    let options = DeleteOptions::parse(&options_ctx)?;
    let key = key_of(ns, name);
    srv.store.write(|txn| -> ApiResult<()> {
        let pod = txn
            .get(StorageId::PODS, &key)
            .ok_or_else(|| ApiError::not_found(t.res, name))?
            .value();
        let labels = at(&pod, &["metadata", "labels"]);
        let terminal = matches!(
            at(&pod, &["status", "phase"]).and_then(Value::as_str),
            Some("Succeeded" | "Failed")
        );
        let int =
            |pdb: &Value, f: &str| at(pdb, &["status", f]).and_then(Value::as_i64).unwrap_or(0);
        let blocking = txn
            .list_prefix(StorageId::PODDISRUPTIONBUDGETS, &format!("{ns}/"))
            .iter()
            .map(|pdb| pdb.value())
            .filter(|pdb| selects(at(pdb, &["spec", "selector"]), labels))
            .find(|pdb| int(pdb, "disruptionsAllowed") <= 0);
        if let Some(pdb) = blocking.filter(|_| !terminal) {
            return Err(ApiError::new(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
            )
            .with_details(json!({"causes": [{"reason": "DisruptionBudget",
            "message": format!(
                "The disruption budget {} needs {} healthy pods and has {} currently",
                meta::name_of(&pdb),
                int(&pdb, "desiredHealthy"),
                int(&pdb, "currentHealthy")
            )}]})));
        }
        delete_in_txn(txn, t.res, &key, meta::name_of(&pod), &options)?;
        Ok(())
    })?;
    Ok(value_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_select_pods_by_labels_and_expressions() {
        let labels = json!({"app": "web", "tier": "front"});
        assert!(selects(
            Some(&json!({"matchLabels": {"app": "web"}})),
            Some(&labels)
        ));
        assert!(!selects(
            Some(&json!({"matchLabels": {"app": "db"}})),
            Some(&labels)
        ));
        assert!(selects(
            Some(
                &json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]})
            ),
            Some(&labels)
        ));
        // no selector selects nothing (policy/v1)
        assert!(!selects(None, Some(&labels)));
        assert!(selects(Some(&json!({})), Some(&labels)));
    }
}
