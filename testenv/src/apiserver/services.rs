//! Services' allocated values (upstream `pkg/registry/core/service/storage/alloc.go` and the
//! IP and port allocators): a cluster IP from the service CIDR `cargo xtask cluster up
//! --upstream` gives kube-apiserver (`10.0.0.0/24`; `10.0.0.1` is the `kubernetes` Service's),
//! `None` for a headless Service, nothing for `ExternalName`; node ports from 30000–32767 for
//! `NodePort` and `LoadBalancer` Services. An update keeps what was allocated, and may not
//! change a cluster IP.

use std::collections::HashSet;

use rand::Rng;
use serde_json::{Value, json};

use crate::registry::StorageId;
use crate::registry::api_status::{ApiError, ApiResult, FieldError, go_quote};
use crate::registry::meta::{self, at};
use crate::registry::resources::ResourceInfo;
use crate::storage::Txn;

/// The service CIDR's network part (`10.0.0.0/24`).
const NETWORK: [u8; 3] = [10, 0, 0];
/// The cluster IP of `default/kubernetes` (the range's first address).
pub const KUBERNETES_IP: &str = "10.0.0.1";
/// The node port range.
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

fn in_range(ip: &str) -> Option<u8> {
    let parts: Vec<u8> = ip.split('.').filter_map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [a, b, c, d] if [*a, *b, *c] == NETWORK && (1..=254).contains(d) => Some(*d),
        _ => None,
    }
}

/// What the other Services hold.
fn taken(txn: &Txn<'_>, except: &str) -> (HashSet<String>, HashSet<i64>) {
    let mut ips = HashSet::new();
    let mut ports = HashSet::new();
    for s in txn.list_prefix(StorageId::SERVICES, "") {
        let v = s.value();
        if meta::uid_of(&v) == except {
            continue;
        }
        for ip in at(&v, &["spec", "clusterIPs"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            ips.insert(ip.to_string());
        }
        for p in at(&v, &["spec", "ports"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = p.get("nodePort").and_then(Value::as_i64) {
                ports.insert(n);
            }
        }
    }
    (ips, ports)
}

fn invalid(res: &ResourceInfo, obj: &Value, errs: &[FieldError]) -> ApiError {
    ApiError::invalid_object(res, meta::name_of(obj), errs)
}

/// Allocate a new Service's cluster IP and node ports (inside the write transaction).
pub fn allocate(txn: &Txn<'_>, res: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    let (ips, ports) = taken(txn, meta::uid_of(obj));
    let named = json!({"metadata": {"name": meta::name_of(obj)}});
    let ty = at(obj, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if ty == "ExternalName" {
        return Ok(());
    }
    let asked = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            spec.get("clusterIPs")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
        })
        .map(str::to_string);
    let ip = match asked.as_deref() {
        Some("None") => "None".to_string(),
        Some(ip) => {
            let err = |why: String| {
                let e = FieldError::invalid("spec.clusterIPs", format!("[{}]", go_quote(ip)), why);
                invalid(res, &named, &[e])
            };
            if in_range(ip).is_none() {
                return Err(err(format!(
                    "failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. The range of valid IPs is 10.0.0.0/24"
                )));
            }
            if ips.contains(ip) {
                return Err(err(format!(
                    "failed to allocate IP {ip}: provided IP is already allocated"
                )));
            }
            ip.to_string()
        }
        None => {
            let free: Vec<u8> = (2..=254)
                .filter(|d| !ips.contains(&format!("10.0.0.{d}")))
                .collect();
            if free.is_empty() {
                return Err(ApiError::internal(
                    "failed to allocate a serviceIP: range is full",
                ));
            }
            let d = free[rand::rng().random_range(0..free.len())];
            format!("10.0.0.{d}")
        }
    };
    spec.insert("clusterIP".into(), json!(ip));
    spec.insert("clusterIPs".into(), json!([ip]));
    spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
    spec.entry("ipFamilyPolicy")
        .or_insert_with(|| json!("SingleStack"));
    if ty == "NodePort" || ty == "LoadBalancer" {
        let mut used = ports;
        for (i, p) in spec
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .enumerate()
        {
            match p
                .get("nodePort")
                .and_then(Value::as_i64)
                .filter(|n| *n != 0)
            {
                Some(n) if !NODE_PORTS.contains(&n) => {
                    let e = FieldError::invalid(
                        format!("spec.ports[{i}].nodePort"),
                        n.to_string(),
                        format!(
                            "provided port is not in the valid range. The range of valid ports is {}-{}",
                            NODE_PORTS.start(),
                            NODE_PORTS.end()
                        ),
                    );
                    return Err(invalid(res, &named, &[e]));
                }
                Some(n) if used.contains(&n) => {
                    let e = FieldError::invalid(
                        format!("spec.ports[{i}].nodePort"),
                        n.to_string(),
                        "provided port is already allocated",
                    );
                    return Err(invalid(res, &named, &[e]));
                }
                Some(n) => {
                    used.insert(n);
                }
                None => {
                    let free: Vec<i64> = NODE_PORTS.filter(|n| !used.contains(n)).collect();
                    let Some(&n) = free.get(rand::rng().random_range(0..free.len().max(1))) else {
                        return Err(ApiError::internal(
                            "failed to allocate a nodePort: range is full",
                        ));
                    };
                    used.insert(n);
                    p["nodePort"] = json!(n);
                }
            }
        }
    }
    Ok(())
}

/// An update keeps the allocated values the client left out; a different cluster IP is refused.
pub fn keep_allocated(res: &ResourceInfo, old: &Value, new: &mut Value) -> ApiResult<()> {
    let old_ips = at(old, &["spec", "clusterIPs"]).cloned();
    let old_ip = at(old, &["spec", "clusterIP"]).cloned();
    let new_ty = at(new, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if new_ty == "ExternalName" {
        return Ok(());
    }
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let given = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    match (given, old_ip.as_ref().and_then(Value::as_str)) {
        (Some(g), Some(o)) if g != o => {
            let ips = spec.get("clusterIPs").cloned().unwrap_or(json!([g]));
            let e = FieldError::invalid(
                "spec.clusterIPs[0]",
                ips.to_string(),
                "may not change once set",
            );
            return Err(ApiError::invalid_object(res, meta::name_of(old), &[e]));
        }
        (None, Some(_)) => {
            if let Some(ip) = old_ip {
                spec.insert("clusterIP".into(), ip);
            }
            if let Some(ips) = old_ips {
                spec.insert("clusterIPs".into(), ips);
            }
        }
        _ => {}
    }
    for k in ["ipFamilies", "ipFamilyPolicy"] {
        if spec.get(k).is_none()
            && let Some(v) = at(old, &["spec", k])
        {
            spec.insert(k.into(), v.clone());
        }
    }
    // node ports of the same port and protocol stay
    let old_ports: Vec<Value> = at(old, &["spec", "ports"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
            continue;
        }
        let same = old_ports
            .iter()
            .find(|o| o.get("port") == p.get("port") && o.get("protocol") == p.get("protocol"));
        if let Some(n) = same.and_then(|o| o.get("nodePort")) {
            p["nodePort"] = n.clone();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_cidr_range() {
        assert_eq!(in_range("10.0.0.7"), Some(7));
        assert_eq!(in_range("10.0.0.0"), None);
        assert_eq!(in_range("10.0.0.255"), None);
        assert_eq!(in_range("10.0.1.2"), None);
        assert_eq!(in_range("nope"), None);
    }
}
