//! On the upstream control plane, kcm replicas that elect a leader each run as a ServiceAccount
//! of their own, so that kube-apiserver's audit log names the writer of every request (the
//! clock-free term check of [`super::terms_audit`]).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cluster::Cluster;
use crate::upstream::control_plane;

/// The ServiceAccount (in kube-system) replica `i` of a run named `run` authenticates as.
pub(crate) fn service_account(run: &str, i: usize) -> String {
    format!("kcm-{run}-{i}")
}

/// The audit log's user names of the `n` replicas of `run`.
pub(crate) fn users(run: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "system:serviceaccount:kube-system:{}",
                service_account(run, i)
            )
        })
        .collect()
}

/// Creates a ServiceAccount per replica with kcm's ClusterRole and the Lease Role of namespace
/// `lease_namespace` (`kcm-e2e-leases`, made by `create_namespace`), and a kubeconfig for each
/// (`dir/<service account>.kubeconfig`), in replica order.
pub(crate) fn replica_identities(
    c: &Cluster,
    dir: &Path,
    run: &str,
    n: usize,
    lease_namespace: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let subjects: Vec<serde_json::Value> = (0..n)
        .map(|i| json!({"kind": "ServiceAccount", "name": service_account(run, i), "namespace": "kube-system"}))
        .collect();
    let mut items: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": service_account(run, i), "namespace": "kube-system"}})
        })
        .collect();
    items.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": format!("kcm-{run}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kcm"},
        "subjects": subjects}),
    );
    items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": format!("kcm-{run}-leases"), "namespace": lease_namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kcm-e2e-leases"},
        "subjects": subjects}));
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
    )?;
    (0..n)
        .map(|i| {
            let path = dir.join(format!("{}.kubeconfig", service_account(run, i)));
            control_plane::service_account_kubeconfig(c, &service_account(run, i), &path)?;
            Ok(path)
        })
        .collect()
}
