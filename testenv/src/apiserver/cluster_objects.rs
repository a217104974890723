//! The objects a fresh cluster has: what kube-apiserver makes for itself at start (the
//! generated [`bootstrap`](mod@crate::registry::bootstrap) objects, and the `default/kubernetes`
//! Service with its Endpoints and EndpointSlice pointing at this server), and what
//! kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers put in every
//! namespace (the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap), made by the
//! server itself unless [`ApiServer::namespace_defaults`] is off (a real kube-controller-manager
//! then makes them).
//!
//! They are stored as kube-apiserver writes them (already decoded and defaulted), with fresh
//! uids and timestamps.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::server::ApiServer;
use super::services::KUBERNETES_IP;
use crate::registry::bootstrap;
use crate::registry::meta::{self, meta_mut};
use crate::registry::{StorageId, resources::for_storage};
use crate::storage::{Txn, key_of};

/// The CA certificate published in `kube-root-ca.crt` (kcm-testenv serves plain HTTP; this
/// self-signed `kcm-testenv-ca` is what a client that reads the ConfigMap finds).
pub const ROOT_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBiDCCAS+gAwIBAgIUIUcsWwPtNUe2qxkT1nPCqzbikowwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOa2NtLXRlc3RlbnYtY2EwIBcNMjYxMjA3MTg0NDAyWhgPMjEy
NjExMTMxODQ0MDJaMBkxFzAVBgNVBAMMDmtjbS10ZXN0ZW52LWNhMFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEfjy4M9c2bD7RexN8ydDgEwd1yNRIS0YMHgyzRRpk
qKm31rELrpa0kpuMCVZrvXSlvjQE0+1QGiz9iC58eDaV86NTMFEwHQYDVR0OBBYE
FEO3Q5g/99o7h08rJF9Ds76RitpZMB8GA1UdIwQYMBaAFEO3Q5g/99o7h08rJF9D
s76RitpZMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgEvRI6Wpu
7iHPomaWlA0m+TAgV5n3hFmeJsEE7QmMWb0CIHIk6dbkjbyAMD155+e4frQ5RxGq
iR7w3UvXmscfi5or
-----END CERTIFICATE-----
";

/// The annotation the root-ca-cert-publisher writes on `kube-root-ca.crt`.
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Store `obj` in `id` with a fresh uid and creation time (and generation 1 for the kinds that
/// track it), unless an object of that name exists.
fn put_new(txn: &mut Txn<'_>, id: StorageId, mut obj: Value) {
    let res = for_storage(id);
    let ns = if res.namespaced {
        meta::namespace_of(&obj).to_string()
    } else {
        String::new()
    };
    let key = key_of(&ns, meta::name_of(&obj));
    if txn.get(id, &key).is_some() {
        return;
    }
    let tracks_generation = matches!(
        id,
        StorageId::FLOWSCHEMAS | StorageId::PRIORITYLEVELCONFIGURATIONS
    );
    let m = meta_mut(&mut obj);
    m.insert("uid".into(), json!(meta::new_uid()));
    m.insert("creationTimestamp".into(), json!(meta::now_rfc3339()));
    if tracks_generation {
        m.insert("generation".into(), json!(1));
    }
    // the Available condition of a local APIService is as old as the server
    for c in obj
        .get_mut("status")
        .and_then(|s| s.get_mut("conditions"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        c.insert("lastTransitionTime".into(), json!(meta::now_rfc3339()));
    }
    txn.put(id, &key, obj);
}

/// What kube-apiserver makes at start: the bootstrap objects and `default/kubernetes`.
pub fn bootstrap(srv: &ApiServer) {
    let port = srv.addr.port();
    let ip = srv.addr.ip().to_string();
    srv.store.write(|txn| {
        for (id, obj) in bootstrap::objects() {
            put_new(txn, id, obj);
        }
        put_new(
            txn,
            StorageId::SERVICES,
            json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
                         "clusterIP": KUBERNETES_IP, "clusterIPs": [KUBERNETES_IP], "type": "ClusterIP",
                         "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                         "internalTrafficPolicy": "Cluster"},
                "status": {"loadBalancer": {}},
            }),
        );
        put_new(
            txn,
            StorageId::ENDPOINTS,
            json!({
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": ip}],
                             "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
            }),
        );
        put_new(
            txn,
            StorageId::ENDPOINTSLICES,
            json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "kubernetes", "namespace": "default", "generation": 1,
                             "labels": {"kubernetes.io/service-name": "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            }),
        );
    });
}

/// The `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap of namespace `ns` (when
/// the server makes them: [`ApiServer::namespace_defaults`]).
pub fn namespace_defaults(srv: &ApiServer, ns: &str) {
    if !srv.namespace_defaults.load(Ordering::Relaxed) {
        return;
    }
    srv.store.write(|txn| {
        if txn.get(StorageId::NAMESPACES, ns).is_none() {
            return;
        }
        put_new(
            txn,
            StorageId::SERVICEACCOUNTS,
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": "default", "namespace": ns}}),
        );
        put_new(
            txn,
            StorageId::CONFIGMAPS,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "kube-root-ca.crt", "namespace": ns,
                                "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                   "data": {"ca.crt": ROOT_CA}}),
        );
    });
}
