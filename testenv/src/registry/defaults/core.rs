//! The defaulting functions of core/v1 types (upstream `pkg/apis/core/v1/defaults.go`; which
//! types get them: `zz_generated.defaults.go`), with v1.37's feature gates at their defaults
//! (`ImageVolume` on; `H2CContainerProbe` off; pod-level resource defaults deferred to the pod
//! strategy by `PodLevelResourcesFixDefaulting`, and not done here).

use base64::Engine;
use serde_json::{Map, Value, json};

use super::{Defaulter, default, default_int, default_str, obj_entry, str_of};

/// The function of a core/v1 type.
pub(super) fn defaulter(ty: &str) -> Option<Defaulter> {
    Some(match ty {
        "Pod" => pod,
        "PodSpec" => pod_spec,
        "PodStatus" => pod_status,
        "Container" | "EphemeralContainer" => container,
        "ContainerPort" | "EndpointPort" | "ServicePort" => port_protocol,
        "Probe" => probe,
        "HTTPGetAction" => http_get,
        "ObjectFieldSelector" => field_selector,
        "Volume" => volume,
        "HostPathVolumeSource" => host_path,
        "SecretVolumeSource"
        | "ConfigMapVolumeSource"
        | "DownwardAPIVolumeSource"
        | "ProjectedVolumeSource" => volume_mode,
        "ServiceAccountTokenProjection" => token_projection,
        "Service" => service,
        "Secret" => secret,
        "PersistentVolume" => persistent_volume,
        "PersistentVolumeClaim" => claim,
        "PersistentVolumeClaimSpec" => claim_spec,
        "Namespace" => namespace,
        "NamespaceStatus" => namespace_status,
        "NodeStatus" => node_status,
        "LimitRangeItem" => limit_range_item,
        "ReplicationController" => replication_controller,
        _ => return None,
    })
}

/// Whether an image reference gets `imagePullPolicy: Always`: its tag is `latest`, which
/// upstream's `parsers.ParseImageName` also reports for a reference with neither tag nor digest.
pub fn pull_always(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

fn pull_policy(image: &str) -> &'static str {
    if pull_always(image) {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// `SetDefaults_Pod`: what only a Pod gets, not a PodSpec in a template.
fn pod(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    if spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|g| g < 0)
    {
        spec.insert("terminationGracePeriodSeconds".into(), json!(1));
    }
    let host_network = spec
        .get("hostNetwork")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            // requests default to limits (on a Pod, not on a template)
            let res = obj_entry(c, "resources");
            if let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() {
                let requests = obj_entry(res, "requests");
                for (k, v) in limits {
                    requests.entry(k).or_insert(v);
                }
            }
            if host_network {
                for p in c
                    .get_mut("ports")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object_mut)
                {
                    if p.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0
                        && let Some(cp) = p.get("containerPort").cloned()
                    {
                        p.insert("hostPort".into(), cp);
                    }
                }
            }
        }
    }
    default(spec, "enableServiceLinks", json!(true));
}

/// `SetDefaults_PodSpec`.
fn pod_spec(o: &mut Map<String, Value>) {
    if str_of(o, "serviceAccountName").is_empty()
        && let Some(sa) = o.get("serviceAccount").cloned()
    {
        o.insert("serviceAccountName".into(), sa);
    }
    match o.get("serviceAccountName").cloned() {
        Some(sa) if !sa.as_str().unwrap_or("").is_empty() => {
            o.insert("serviceAccount".into(), sa);
        }
        _ => {
            o.remove("serviceAccount");
        }
    }
    default_str(o, "dnsPolicy", "ClusterFirst");
    default_str(o, "restartPolicy", "Always");
    default(o, "securityContext", json!({}));
    default(o, "terminationGracePeriodSeconds", json!(30));
    default_str(o, "schedulerName", "default-scheduler");
}

/// `SetDefaults_PodStatus`: the singular pod IP and the list agree.
fn pod_status(o: &mut Map<String, Value>) {
    let ip = str_of(o, "podIP").to_string();
    let first = o
        .get("podIPs")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(|p| p.get("ip"))
        .and_then(Value::as_str)
        .map(str::to_string);
    match (ip.is_empty(), first) {
        (false, None) => {
            o.insert("podIPs".into(), json!([{"ip": ip}]));
        }
        (true, Some(f)) => {
            o.insert("podIP".into(), json!(f));
        }
        (false, Some(f)) if f != ip => {
            o.insert("podIPs".into(), json!([{"ip": ip}]));
        }
        _ => {}
    }
}

/// `SetDefaults_Container` (also an ephemeral container's); `resources` is a struct Go
/// always writes.
fn container(o: &mut Map<String, Value>) {
    if str_of(o, "imagePullPolicy").is_empty() {
        let p = pull_policy(str_of(o, "image"));
        o.insert("imagePullPolicy".into(), json!(p));
    }
    default_str(o, "terminationMessagePath", "/dev/termination-log");
    default_str(o, "terminationMessagePolicy", "File");
    obj_entry(o, "resources");
}

/// The `+default="TCP"` of a container, endpoint or service port's protocol.
fn port_protocol(o: &mut Map<String, Value>) {
    default_str(o, "protocol", "TCP");
}

/// `SetDefaults_Probe`.
fn probe(o: &mut Map<String, Value>) {
    default_int(o, "timeoutSeconds", 1);
    default_int(o, "periodSeconds", 10);
    default_int(o, "successThreshold", 1);
    default_int(o, "failureThreshold", 3);
}

/// `SetDefaults_HTTPGetAction`.
fn http_get(o: &mut Map<String, Value>) {
    default_str(o, "path", "/");
    default_str(o, "scheme", "HTTP");
}

/// `SetDefaults_ObjectFieldSelector`.
fn field_selector(o: &mut Map<String, Value>) {
    default_str(o, "apiVersion", "v1");
}

/// The volume sources of a `VolumeSource` (one of them is set).
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// `SetDefaults_Volume`: no source is an `emptyDir`; an image volume's pull policy as a
/// container's.
fn volume(o: &mut Map<String, Value>) {
    if !VOLUME_SOURCES
        .iter()
        .any(|s| o.get(*s).is_some_and(|v| !v.is_null()))
    {
        o.insert("emptyDir".into(), json!({}));
    }
    if let Some(img) = o.get_mut("image").and_then(Value::as_object_mut)
        && str_of(img, "pullPolicy").is_empty()
    {
        let p = pull_policy(str_of(img, "reference"));
        img.insert("pullPolicy".into(), json!(p));
    }
}

/// `SetDefaults_HostPathVolumeSource`.
fn host_path(o: &mut Map<String, Value>) {
    default(o, "type", json!(""));
}

/// `SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource`: mode 0644.
fn volume_mode(o: &mut Map<String, Value>) {
    default(o, "defaultMode", json!(420));
}

/// `SetDefaults_ServiceAccountTokenProjection`.
fn token_projection(o: &mut Map<String, Value>) {
    default(o, "expirationSeconds", json!(3600));
}

/// `SetDefaults_Service` (the ports' protocol comes with [`port_protocol`]).
fn service(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        let unset = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(t) => t.as_i64() == Some(0),
        };
        if unset && let Some(port) = p.get("port").cloned() {
            p.insert("targetPort".into(), port);
        }
    }
    let ty = str_of(spec, "type").to_string();
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    // service.ExternallyAccessible
    let externally =
        ty == "LoadBalancer" || ty == "NodePort" || (ty == "ClusterIP" && external_ips);
    if externally {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", json!(true));
        let ingress = o
            .get_mut("status")
            .and_then(|s| s.get_mut("loadBalancer"))
            .and_then(|l| l.get_mut("ingress"))
            .and_then(Value::as_array_mut);
        for ing in ingress
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if !str_of(ing, "ip").is_empty() {
                default(ing, "ipMode", json!("VIP"));
            }
        }
    }
}

/// `SetDefaults_Secret`; and `stringData`, which upstream's conversion into the internal type
/// writes over `data` (it is never stored).
fn secret(o: &mut Map<String, Value>) {
    default_str(o, "type", "Opaque");
    if let Some(Value::Object(strings)) = o.remove("stringData")
        && !strings.is_empty()
    {
        let data = obj_entry(o, "data");
        for (k, v) in strings {
            let text = v.as_str().unwrap_or("");
            let encoded = base64::engine::general_purpose::STANDARD.encode(text);
            data.insert(k, Value::String(encoded));
        }
    }
}

/// `SetDefaults_PersistentVolume`.
fn persistent_volume(o: &mut Map<String, Value>) {
    default_str(obj_entry(o, "status"), "phase", "Pending");
    let spec = obj_entry(o, "spec");
    default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
    default(spec, "volumeMode", json!("Filesystem"));
}

/// `SetDefaults_PersistentVolumeClaim`.
fn claim(o: &mut Map<String, Value>) {
    default_str(obj_entry(o, "status"), "phase", "Pending");
}

/// `SetDefaults_PersistentVolumeClaimSpec` (also a StatefulSet's claim templates').
fn claim_spec(o: &mut Map<String, Value>) {
    default(o, "volumeMode", json!("Filesystem"));
}

/// `SetDefaults_Namespace`: the `kubernetes.io/metadata.name` label.
fn namespace(o: &mut Map<String, Value>) {
    let meta = obj_entry(o, "metadata");
    let name = str_of(meta, "name").to_string();
    if !name.is_empty() {
        obj_entry(meta, "labels").insert("kubernetes.io/metadata.name".into(), json!(name));
    }
}

/// `SetDefaults_NamespaceStatus`.
fn namespace_status(o: &mut Map<String, Value>) {
    default_str(o, "phase", "Active");
}

/// `SetDefaults_NodeStatus`: allocatable defaults to capacity.
fn node_status(o: &mut Map<String, Value>) {
    if o.get("allocatable").is_none_or(Value::is_null)
        && let Some(c) = o.get("capacity").filter(|c| c.is_object()).cloned()
    {
        o.insert("allocatable".into(), c);
    }
}

/// `SetDefaults_LimitRangeItem`: a container's default limit from its max, default request
/// from the default limit, then from its min.
fn limit_range_item(o: &mut Map<String, Value>) {
    if str_of(o, "type") != "Container" {
        return;
    }
    let max = o.get("max").and_then(Value::as_object).cloned();
    let min = o.get("min").and_then(Value::as_object).cloned();
    let def = obj_entry(o, "default");
    for (k, v) in max.into_iter().flatten() {
        def.entry(k).or_insert(v);
    }
    let def = def.clone();
    let req = obj_entry(o, "defaultRequest");
    for (k, v) in def.into_iter().chain(min.into_iter().flatten()) {
        req.entry(k).or_insert(v);
    }
    // empty maps are left out when written (omitempty)
    for k in ["default", "defaultRequest"] {
        if o.get(k)
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            o.remove(k);
        }
    }
}

/// `SetDefaults_ReplicationController`: selector and labels from the template's labels.
fn replication_controller(o: &mut Map<String, Value>) {
    let labels = o
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.is_object())
        .cloned();
    let Some(labels) = labels else {
        return;
    };
    let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
    let spec = obj_entry(o, "spec");
    if empty(spec.get("selector")) {
        spec.insert("selector".into(), labels.clone());
    }
    let meta = obj_entry(o, "metadata");
    if empty(meta.get("labels")) {
        meta.insert("labels".into(), labels);
    }
}
