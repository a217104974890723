//! Columns and cells of the common kinds served generically (upstream
//! `pkg/printers/internalversion/printers.go`: `printConfigMap`, `printSecret`,
//! `printService`, `printStatefulSet`), as kubectl shows them. Column descriptions are ours.

use serde_json::{Value, json};

use super::human_duration::since;
use crate::registry::meta::{self, at};
use crate::registry::{ResourceInfo, StorageId};

fn col(name: &str, format: &str, priority: i32, description: &str) -> Value {
    json!({"name": name, "type": "string", "format": format, "description": description, "priority": priority})
}

/// The columns of a kind this file prints (`None`: another printer).
pub(super) fn columns(res: &ResourceInfo, name: &Value, age: &Value) -> Option<Vec<Value>> {
    Some(match res.storage {
        StorageId::CONFIGMAPS => vec![
            name.clone(),
            col("Data", "", 0, "The number of keys in data and binaryData."),
            age.clone(),
        ],
        StorageId::SECRETS => vec![
            name.clone(),
            col("Type", "", 0, "The secret's type."),
            col("Data", "", 0, "The number of keys in data."),
            age.clone(),
        ],
        StorageId::SERVICES => vec![
            name.clone(),
            col("Type", "", 0, "How the service is exposed."),
            col("Cluster-IP", "", 0, "The service's cluster IP."),
            col("External-IP", "", 0, "External addresses of the service."),
            col("Port(s)", "", 0, "The service's ports."),
            age.clone(),
            col("Selector", "", 1, "The pods the service sends traffic to."),
        ],
        StorageId::STATEFULSETS => vec![
            name.clone(),
            col("Ready", "", 0, "Ready replicas out of the desired ones."),
            age.clone(),
            col("Containers", "", 1, "The template's containers."),
            col("Images", "", 1, "The template's images."),
        ],
        _ => return None,
    })
}

fn len_of(v: &Value, key: &str) -> usize {
    v.get(key).and_then(Value::as_object).map_or(0, |m| m.len())
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// A Service's external addresses as `getServiceExternalIP` prints them.
fn external_ip(v: &Value) -> String {
    let listed: Vec<&str> = at(v, &["spec", "externalIPs"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match text(v, &["spec", "type"]) {
        "ExternalName" => text(v, &["spec", "externalName"]).to_string(),
        "LoadBalancer" => {
            let mut ips: Vec<String> = at(v, &["status", "loadBalancer", "ingress"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|i| {
                    let ip = text(i, &["ip"]);
                    if ip.is_empty() {
                        text(i, &["hostname"]).to_string()
                    } else {
                        ip.to_string()
                    }
                })
                .collect();
            ips.extend(listed.iter().map(|s| s.to_string()));
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ if !listed.is_empty() => listed.join(","),
        _ => "<none>".into(),
    }
}

/// A Service's ports: `80/TCP`, `80:30080/TCP` with a node port, `<none>` without.
fn ports(v: &Value) -> String {
    let ps: Vec<String> = at(v, &["spec", "ports"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let proto = text(p, &["protocol"]);
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(n) if n != 0 => format!("{port}:{n}/{proto}"),
                _ => format!("{port}/{proto}"),
            }
        })
        .collect();
    if ps.is_empty() {
        "<none>".into()
    } else {
        ps.join(",")
    }
}

/// A map selector as `labels.FormatLabels` prints it (sorted, `<none>` when empty).
fn map_selector(v: Option<&Value>) -> String {
    let pairs: Vec<String> = v
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// The cells of a kind this file prints (`None`: another printer).
pub(super) fn cells(res: &ResourceInfo, v: &Value) -> Option<Vec<Value>> {
    let name = json!(meta::name_of(v));
    let age = json!(since(at(v, &["metadata", "creationTimestamp"])));
    Some(match res.storage {
        StorageId::CONFIGMAPS => vec![
            name,
            json!(len_of(v, "data") + len_of(v, "binaryData")),
            age,
        ],
        StorageId::SECRETS => vec![
            name,
            json!(text(v, &["type"])),
            json!(len_of(v, "data")),
            age,
        ],
        StorageId::SERVICES => {
            let ip = text(v, &["spec", "clusterIP"]);
            vec![
                name,
                json!(text(v, &["spec", "type"])),
                json!(if ip.is_empty() { "<none>" } else { ip }),
                json!(external_ip(v)),
                json!(ports(v)),
                age,
                json!(map_selector(at(v, &["spec", "selector"]))),
            ]
        }
        StorageId::STATEFULSETS => {
            let cs = at(v, &["spec", "template", "spec", "containers"]).and_then(Value::as_array);
            let names: Vec<&str> = cs
                .into_iter()
                .flatten()
                .map(|c| text(c, &["name"]))
                .collect();
            let images: Vec<&str> = cs
                .into_iter()
                .flatten()
                .map(|c| text(c, &["image"]))
                .collect();
            let ready = at(v, &["status", "readyReplicas"])
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let want = at(v, &["spec", "replicas"])
                .and_then(Value::as_i64)
                .unwrap_or(0);
            vec![
                name,
                json!(format!("{ready}/{want}")),
                age,
                json!(names.join(",")),
                json!(images.join(",")),
            ]
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_cells_as_kubectl_shows_them() {
        let svc = json!({"metadata": {"name": "kubernetes"}, "spec": {"type": "ClusterIP",
            "clusterIP": "10.0.0.1", "ports": [{"port": 443, "protocol": "TCP"}]}});
        assert_eq!(ports(&svc), "443/TCP");
        assert_eq!(external_ip(&svc), "<none>");
        assert_eq!(map_selector(None), "<none>");
        let np = json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080,
            "protocol": "TCP"}], "selector": {"app": "web"}}});
        assert_eq!(ports(&np), "80:30080/TCP");
        assert_eq!(map_selector(at(&np, &["spec", "selector"])), "app=web");
        let lb = json!({"spec": {"type": "LoadBalancer"}});
        assert_eq!(external_ip(&lb), "<pending>");
    }
}
