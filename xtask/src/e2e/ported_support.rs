//! What the ports of upstream's integration tests (`ported_deployment*.rs`,
//! `ported_replicaset.rs`) share: pods whose status the scenario writes by hand, owner
//! references, patches, the scale subresource and "ReplicaSet stable".
//!
//! Upstream's integration tests run the controllers against an API server without nodes and
//! mark pods Ready themselves. Our clusters run pods on simulated (or real) kubelets, which own
//! a bound pod's status. Where a test needs that control, its pods are *held*: a nodeSelector
//! no node matches keeps them Pending and unbound on every kind of cluster, so no kubelet ever
//! writes their status, and [`set_ready`] writes it as upstream's `markPodReady` does.

use std::time::SystemTime;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use super::Ctx;
use crate::cluster::wait_for;
use crate::timestamps::rfc3339_seconds;

/// The node label of [`hold`]'s nodeSelector; no node has it.
const HOLD_LABEL: &str = "kcm-rs.io/e2e-no-such-node";

/// The annotation that orders pods for scale-down (lower cost goes first).
pub(super) const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Makes the pods of `template` (a PodTemplateSpec) unschedulable everywhere: see the module
/// documentation.
pub(super) fn hold(template: &mut Value) {
    template["spec"]["nodeSelector"] = json!({HOLD_LABEL: "true"});
}

/// A container Pod Security "restricted" admits, named as upstream's test fixtures name theirs.
pub(super) fn container(image: &str) -> Value {
    json!({"name": "fake-name", "image": image,
           "securityContext": super::images::restricted_security_context()})
}

/// Sets the held pods `names` Running with condition Ready `ready` since `since`, in one
/// kubectl call (a strategic merge keeps the scheduler's PodScheduled condition).
pub(super) fn set_ready(
    c: &Ctx,
    ns: &str,
    names: &[String],
    ready: bool,
    since: SystemTime,
) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let patch = json!({"status": {"phase": "Running", "conditions": [{
        "type": "Ready", "status": if ready { "True" } else { "False" },
        "lastTransitionTime": rfc3339_seconds(since)}]}});
    let mut args = vec!["-n", ns, "patch", "pod"];
    args.extend(names.iter().map(String::as_str));
    let patch = patch.to_string();
    args.extend(["--subresource=status", "--type=strategic", "-p", &patch]);
    c.kubectl(&args)?;
    Ok(())
}

/// Applies a JSON merge patch to `target` (`kind/name`) in `ns`.
pub(super) fn merge_patch(c: &Ctx, ns: &str, target: &str, patch: &Value) -> anyhow::Result<()> {
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        target,
        "--type=merge",
        "-p",
        &patch.to_string(),
    ])?;
    Ok(())
}

/// Replaces `path` of `target` (`kind/name`) in `ns` with `value` (a JSON patch), for what a
/// merge patch cannot express: a whole label map or owner reference list.
pub(super) fn replace_field(
    c: &Ctx,
    ns: &str,
    target: &str,
    path: &str,
    value: Value,
) -> anyhow::Result<()> {
    let patch = json!([{"op": "replace", "path": path, "value": value}]);
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        target,
        "--type=json",
        "-p",
        &patch.to_string(),
    ])?;
    Ok(())
}

/// Creates the objects of `manifests` with `kubectl create` (not apply, which would add its
/// last-applied annotation) and returns them as the server stored them.
pub(super) fn create(c: &Ctx, ns: &str, manifests: &[Value]) -> anyhow::Result<Vec<Value>> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": manifests});
    let out = c.kubectl_stdin(
        &["-n", ns, "create", "-f", "-", "-o", "json"],
        &list.to_string(),
    )?;
    // One JSON document per object, or a List.
    let mut created = Vec::new();
    for v in serde_json::Deserializer::from_str(&out).into_iter::<Value>() {
        let v = v.context("kubectl create printed invalid JSON")?;
        match v["kind"].as_str() {
            Some("List") => created.extend(items(&v)),
            _ => created.push(v),
        }
    }
    Ok(created)
}

/// The `items` of a list.
pub(super) fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// An object's name.
pub(super) fn name(o: &Value) -> String {
    o["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// An object's uid.
pub(super) fn uid(o: &Value) -> String {
    o["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// An integer field, 0 when absent (as Go's zero values read).
pub(super) fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The owner reference with `controller: true`, as `metav1.GetControllerOf`.
pub(super) fn controller_of(o: &Value) -> Option<Value> {
    o["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
        .cloned()
}

/// How many owner references `o` has.
pub(super) fn owner_count(o: &Value) -> usize {
    o["metadata"]["ownerReferences"]
        .as_array()
        .map_or(0, Vec::len)
}

/// An owner reference to `o` (kind and apiVersion from the object), with `controller` set.
pub(super) fn owner_ref(o: &Value, controller: Option<bool>) -> Value {
    let mut r = json!({"apiVersion": o["apiVersion"], "kind": o["kind"],
                       "name": name(o), "uid": uid(o)});
    if let Some(flag) = controller {
        r["controller"] = json!(flag);
    }
    r
}

/// A Lease to stand for an owner of a kind no controller here manages. Upstream points such
/// references at a StatefulSet uid that exists nowhere, which is safe only without a garbage
/// collector; ours run one, which deletes objects whose owners are all gone and drops dangling
/// references, so the owner must exist. Leases are served by every cluster the scenarios use.
pub(super) fn foreign_owner(c: &Ctx, ns: &str, owner_name: &str) -> anyhow::Result<Value> {
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": owner_name}, "spec": {}});
    create(c, ns, &[lease])?
        .pop()
        .context("kubectl created no Lease")
}

/// Writes `object` back (read from the server, then its selector and template labels changed)
/// and expects the API to refuse it as immutable, as upstream's selector immutability tests do.
/// Without a resourceVersion kubectl fills in the current one, so a controller's status write
/// in between makes a conflict, which is retried.
pub(super) fn expect_selector_immutable(c: &Ctx, ns: &str, object: &Value) -> anyhow::Result<()> {
    let mut object = object.clone();
    object["metadata"]["resourceVersion"] = Value::Null;
    let kind = object["kind"].as_str().unwrap_or("object").to_string();
    for _ in 0..10 {
        let err = match c.kubectl_stdin(&["-n", ns, "replace", "-f", "-"], &object.to_string()) {
            Ok(_) => bail!("changing the selector of an apps/v1 {kind} must fail"),
            Err(e) => format!("{e:#}"),
        };
        if err.contains("(Conflict)") {
            continue;
        }
        ensure!(
            err.contains("Invalid value") && err.contains("field is immutable"),
            "expected an \"Invalid value\" … \"field is immutable\" error, got: {err}"
        );
        return Ok(());
    }
    bail!("every write of the changed {kind} conflicted with another write")
}

/// `k=v,...` of a label map.
pub(super) fn selector_of(labels: &Value) -> String {
    labels
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// Pods in `ns` matching `selector`, terminating and finished ones included (as a plain list).
pub(super) fn pods(c: &Ctx, ns: &str, selector: &str) -> anyhow::Result<Vec<Value>> {
    Ok(items(&c.get_json(&["pods", "-n", ns, "-l", selector])?))
}

/// Waits until ReplicaSet `rs` has observed its generation and its status counts its spec
/// replicas (upstream's `WaitRSStable`); returns it.
pub(super) fn wait_rs_stable(c: &Ctx, ns: &str, rs: &str) -> anyhow::Result<Value> {
    wait_for(
        &format!("ReplicaSet {rs} to be stable"),
        c.timeout(),
        || {
            let r = c.get_json(&["replicaset", rs, "-n", ns])?;
            let stable = int(&r["status"]["observedGeneration"])
                >= int(&r["metadata"]["generation"])
                && int(&r["status"]["replicas"]) == int(&r["spec"]["replicas"]);
            Ok(stable.then_some(r))
        },
    )
}

/// Scales `resource` (`deployments` or `replicasets`) `name` through its scale subresource, as
/// upstream's `testScalingUsingScaleSubresource`: the Scale must show the object's replicas
/// first, and the object must show the new value after the write.
pub(super) fn scale_via_subresource(
    c: &Ctx,
    ns: &str,
    resource: &str,
    name: &str,
    replicas: i64,
) -> anyhow::Result<()> {
    let object = format!("/apis/apps/v1/namespaces/{ns}/{resource}/{name}");
    let uri = format!("{object}/scale");
    let spec_replicas = |c: &Ctx| -> anyhow::Result<i64> {
        let o: Value = serde_json::from_str(&c.kubectl(&["get", "--raw", &object])?)?;
        Ok(int(&o["spec"]["replicas"]))
    };
    let scale: Value = serde_json::from_str(&c.kubectl(&["get", "--raw", &uri])?)?;
    let before = spec_replicas(c)?;
    ensure!(
        int(&scale["spec"]["replicas"]) == before,
        "the scale subresource of {resource}/{name} shows {} replicas, the object {before}",
        scale["spec"]["replicas"]
    );
    // A write carries the Scale's resourceVersion; on a conflict read and write again.
    wait_for(
        &format!("the scale write to {resource}/{name}"),
        c.timeout(),
        || {
            let mut scale: Value = serde_json::from_str(&c.kubectl(&["get", "--raw", &uri])?)?;
            scale["spec"]["replicas"] = json!(replicas);
            Ok(
                c.kubectl_stdin(&["replace", "--raw", &uri, "-f", "-"], &scale.to_string())
                    .ok()
                    .map(|_| ()),
            )
        },
    )?;
    let after = spec_replicas(c)?;
    ensure!(
        after == replicas,
        "{resource}/{name} has spec.replicas {after} after its scale subresource was set to {replicas}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_of_label_maps() {
        assert_eq!(
            selector_of(&json!({"foo": "bar", "case": "1"})),
            "case=1,foo=bar"
        );
        assert_eq!(selector_of(&json!({})), "");
        assert_eq!(selector_of(&Value::Null), "");
    }

    #[test]
    fn controller_and_owner_refs() {
        let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": "rs", "uid": "u1"}});
        assert_eq!(
            owner_ref(&rs, Some(false)),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1",
                   "controller": false})
        );
        let pod = json!({"metadata": {"ownerReferences": [
            owner_ref(&rs, None), owner_ref(&rs, Some(true))]}});
        assert_eq!(controller_of(&pod), Some(owner_ref(&rs, Some(true))));
        assert_eq!(owner_count(&pod), 2);
        assert_eq!(controller_of(&json!({"metadata": {}})), None);
    }
}
