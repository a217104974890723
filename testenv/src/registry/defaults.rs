//! Defaulting, applied on every write (spec §3.1; upstream `apps/v1/defaults.go`,
//! `core/v1/defaults.go`).

use serde_json::{Map, Value, json};

use super::quantity;
use super::resources::StorageId;

fn obj_entry<'a>(o: &'a mut Map<String, Value>, k: &str) -> &'a mut Map<String, Value> {
    let e = o.entry(k.to_string()).or_insert_with(|| json!({}));
    if !e.is_object() {
        *e = json!({});
    }
    e.as_object_mut().expect("object ensured above")
}

fn default(o: &mut Map<String, Value>, k: &str, v: Value) {
    if o.get(k).is_none_or(Value::is_null) {
        o.insert(k.to_string(), v);
    }
}

fn default_str(o: &mut Map<String, Value>, k: &str, v: &str) {
    if o.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
        o.insert(k.to_string(), Value::String(v.to_string()));
    }
}

/// Apply the defaults of a kind to an object.
pub fn apply(id: StorageId, obj: &mut Value) {
    let Some(o) = obj.as_object_mut() else { return };
    match id {
        StorageId::DEPLOYMENTS => {
            let spec = obj_entry(o, "spec");
            default(spec, "replicas", json!(1));
            let strategy = obj_entry(spec, "strategy");
            default_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                let ru = obj_entry(strategy, "rollingUpdate");
                default(ru, "maxUnavailable", json!("25%"));
                default(ru, "maxSurge", json!("25%"));
            }
            default(spec, "revisionHistoryLimit", json!(10));
            default(spec, "progressDeadlineSeconds", json!(600));
            template(spec);
        }
        StorageId::REPLICASETS => {
            let spec = obj_entry(o, "spec");
            default(spec, "replicas", json!(1));
            template(spec);
        }
        StorageId::PODS => {
            let spec = obj_entry(o, "spec");
            pod_spec(spec, true);
        }
        StorageId::CUSTOMRESOURCEDEFINITIONS => super::custom::crd_strategy::apply_defaults(obj),
        // custom resources are defaulted from their schema while decoding
        _ => {}
    }
}

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template").and_then(Value::as_object_mut) {
        let ps = obj_entry(t, "spec");
        pod_spec(ps, false);
    }
}

/// Whether an image reference gets `imagePullPolicy: Always` (tag `latest` or no tag/digest).
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

fn probe(p: &mut Map<String, Value>) {
    default(p, "timeoutSeconds", json!(1));
    default(p, "periodSeconds", json!(10));
    default(p, "successThreshold", json!(1));
    default(p, "failureThreshold", json!(3));
    handler(p);
}

fn handler(h: &mut Map<String, Value>) {
    if let Some(g) = h.get_mut("httpGet").and_then(Value::as_object_mut) {
        default_str(g, "path", "/");
        default_str(g, "scheme", "HTTP");
    }
}

fn container(c: &mut Map<String, Value>, is_pod: bool) {
    if let Some(img) = c.get("image").and_then(Value::as_str) {
        let p = if pull_always(img) {
            "Always"
        } else {
            "IfNotPresent"
        };
        default_str(c, "imagePullPolicy", p);
    }
    default_str(c, "terminationMessagePath", "/dev/termination-log");
    default_str(c, "terminationMessagePolicy", "File");
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default_str(p, "protocol", "TCP");
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for e in env.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(fr) = e
                .get_mut("valueFrom")
                .and_then(|v| v.get_mut("fieldRef"))
                .and_then(Value::as_object_mut)
            {
                default_str(fr, "apiVersion", "v1");
            }
        }
    }
    let res = obj_entry(c, "resources");
    for list in ["limits", "requests"] {
        if let Some(m) = res.get_mut(list).and_then(Value::as_object_mut) {
            canonical_quantities(m);
        }
    }
    if is_pod && let Some(lim) = res.get("limits").and_then(Value::as_object).cloned() {
        let req = obj_entry(res, "requests");
        for (k, v) in lim {
            req.entry(k).or_insert(v);
        }
    }
    for p in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(pr) = c.get_mut(p).and_then(Value::as_object_mut) {
            probe(pr);
        }
    }
    if let Some(lc) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for h in ["postStart", "preStop"] {
            if let Some(hh) = lc.get_mut(h).and_then(Value::as_object_mut) {
                handler(hh);
            }
        }
    }
}

/// Quantities rounded up to milli precision and written in canonical form.
fn canonical_quantities(m: &mut Map<String, Value>) {
    for (_, q) in m.iter_mut() {
        if let Some(c) = q.as_str().and_then(quantity::canonical) {
            *q = Value::String(c);
        }
    }
}

fn volume(v: &mut Map<String, Value>) {
    const SOURCES: &[&str] = &[
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
    if !SOURCES.iter().any(|s| v.contains_key(*s)) {
        v.insert("emptyDir".into(), json!({}));
    }
    for k in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(k).and_then(Value::as_object_mut) {
            default(s, "defaultMode", json!(420));
        }
    }
    if let Some(q) = v
        .get_mut("emptyDir")
        .and_then(|e| e.get_mut("sizeLimit"))
        .filter(|q| q.is_string())
        && let Some(c) = q.as_str().and_then(quantity::canonical)
    {
        *q = Value::String(c);
    }
    if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        default(h, "type", json!(""));
    }
    if let Some(items) = v
        .get_mut("downwardAPI")
        .and_then(|d| d.get_mut("items"))
        .and_then(Value::as_array_mut)
    {
        for it in items.iter_mut() {
            if let Some(fr) = it.get_mut("fieldRef").and_then(Value::as_object_mut) {
                default_str(fr, "apiVersion", "v1");
            }
        }
    }
    if let Some(srcs) = v
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut)
    {
        for s in srcs.iter_mut() {
            if let Some(t) = s
                .get_mut("serviceAccountToken")
                .and_then(Value::as_object_mut)
            {
                default(t, "expirationSeconds", json!(3600));
            }
        }
    }
}

fn pod_spec(spec: &mut Map<String, Value>, is_pod: bool) {
    default_str(spec, "restartPolicy", "Always");
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "schedulerName", "default-scheduler");
    default(spec, "securityContext", json!({}));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    if is_pod {
        default(spec, "enableServiceLinks", json!(true));
    }
    let host_network = spec
        .get("hostNetwork")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for list in ["containers", "initContainers"] {
        if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                container(c, is_pod);
                if is_pod
                    && host_network
                    && let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut)
                {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        if p.get("hostPort").is_none()
                            && let Some(cp) = p.get("containerPort").cloned()
                        {
                            p.insert("hostPort".into(), cp);
                        }
                    }
                }
            }
        }
    }
    if let Some(vs) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            volume(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_table() {
        // upstream TestSetDefaultContainerImagePullPolicy-like cases
        for (img, always) in [
            ("nginx", true),
            ("nginx:latest", true),
            ("nginx:1.25", false),
            ("nginx@sha256:abc", false),
            ("localhost:5000/app", true),
            ("localhost:5000/app:v1", false),
        ] {
            assert_eq!(pull_always(img), always, "{img}");
        }
    }

    #[test]
    fn deployment_defaults() {
        let mut d = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        apply(StorageId::DEPLOYMENTS, &mut d);
        let s = &d["spec"];
        assert_eq!(s["replicas"], 1);
        assert_eq!(
            s["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(s["revisionHistoryLimit"], 10);
        assert_eq!(s["progressDeadlineSeconds"], 600);
        let ps = &s["template"]["spec"];
        assert_eq!(ps["restartPolicy"], "Always");
        assert_eq!(ps["dnsPolicy"], "ClusterFirst");
        assert_eq!(ps["schedulerName"], "default-scheduler");
        assert_eq!(ps["terminationGracePeriodSeconds"], 30);
        assert_eq!(ps["securityContext"], json!({}));
        assert!(ps.get("enableServiceLinks").is_none());
        let c = &ps["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c["terminationMessagePolicy"], "File");
        assert_eq!(c["resources"], json!({}));
    }

    #[test]
    fn recreate_gets_no_rolling_update() {
        let mut d = json!({"spec": {"strategy": {"type": "Recreate"}}});
        apply(StorageId::DEPLOYMENTS, &mut d);
        assert!(d["spec"]["strategy"].get("rollingUpdate").is_none());
    }

    #[test]
    fn pod_defaults() {
        let mut p = json!({"spec": {"containers": [{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "1024Mi"}, "requests": {"cpu": "0.5"}}}], "volumes": [{"name": "v"}]}});
        apply(StorageId::PODS, &mut p);
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["limits"]["memory"],
            "1Gi"
        );
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "500m"
        );
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["requests"]["memory"],
            "1Gi"
        );
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert_eq!(p["spec"]["volumes"][0]["emptyDir"], json!({}));
    }
}
