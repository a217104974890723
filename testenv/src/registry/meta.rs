//! Object metadata helpers: timestamps, generated names, field access on JSON objects, and the
//! string form of a metav1 LabelSelector (`status.selector` of `/scale`, the SELECTOR column).

use rand::Rng;
use serde_json::{Map, Value};

/// The alphabet of generated name suffixes (upstream `names.SimpleNameGenerator`).
pub const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Bases longer than this are cut before the suffix is added.
pub const MAX_GENERATED_BASE: usize = 58;

/// `base` + 5 random characters from [`NAME_ALPHABET`], the base cut to 58 characters.
pub fn generate_name(base: &str) -> String {
    let mut base: String = base.to_string();
    if base.len() > MAX_GENERATED_BASE {
        let mut cut = MAX_GENERATED_BASE;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base.truncate(cut);
    }
    let mut rng = rand::rng();
    for _ in 0..5 {
        let i = rng.random_range(0..NAME_ALPHABET.len());
        base.push(NAME_ALPHABET[i] as char);
    }
    base
}

/// Now, RFC 3339 UTC at second precision (`metav1.Time`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `now + secs`, RFC 3339 UTC at second precision.
pub fn rfc3339_in(secs: i64) -> String {
    let t = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Parse an RFC 3339 time.
pub fn parse_time(s: &str) -> Option<jiff::Timestamp> {
    s.parse::<jiff::Timestamp>().ok()
}

/// A fresh uid.
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `obj.metadata` as a mutable map (created if missing).
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let o = obj.as_object_mut().expect("object ensured above");
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut().expect("object ensured above")
}

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.name`.
pub fn name_of(obj: &Value) -> &str {
    meta_str(obj, "name")
}

/// `metadata.namespace`.
pub fn namespace_of(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

/// `metadata.resourceVersion`.
pub fn rv_of(obj: &Value) -> &str {
    meta_str(obj, "resourceVersion")
}

/// `metadata.uid`.
pub fn uid_of(obj: &Value) -> &str {
    meta_str(obj, "uid")
}

/// The strings of a JSON list (none when it is missing or not a list).
pub fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    strings(obj.get("metadata").and_then(|m| m.get("finalizers")))
}

/// Set `metadata.finalizers` (removed when empty).
pub fn set_finalizers(obj: &mut Value, f: &[String]) {
    let m = meta_mut(obj);
    if f.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert("finalizers".into(), Value::from(f.to_vec()));
    }
}

/// `metadata.generation` (0 when absent).
pub fn generation(obj: &Value) -> i64 {
    obj.get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// A value at a path of object keys.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

/// Whether a JSON value is "empty" in Go terms (null, empty map, empty list).
pub fn is_empty_value(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Semantic equality: nil and empty maps and slices are equal, recursively.
pub fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (x, y) if is_empty_value(x) && is_empty_value(y) => true,
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().all(|k| semantic_eq(x.get(k), y.get(k)))
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(Some(p), Some(q)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The string form of a metav1 LabelSelector (`a=b,c in (d,e)`), requirements sorted by key.
pub fn selector_string(sel: Option<&Value>) -> String {
    let Some(sel) = sel else { return String::new() };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = e
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut vals: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        vals.sort_unstable();
        let s = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{k} in ({})", vals.join(",")),
            "NotIn" => format!("{k} notin ({})", vals.join(",")),
            "Exists" => k.clone(),
            "DoesNotExist" => format!("!{k}"),
            _ => continue,
        };
        reqs.push((k, s));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generated_names() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert!(n[4..].bytes().all(|b| NAME_ALPHABET.contains(&b)));
        let long = "a".repeat(70);
        assert_eq!(generate_name(&long).len(), 63);
    }

    #[test]
    fn timestamp_format() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z'));
    }

    #[test]
    fn semantic_equality() {
        assert!(semantic_eq(Some(&json!({"a": []})), Some(&json!({}))));
        assert!(semantic_eq(None, Some(&json!({}))));
        assert!(!semantic_eq(Some(&json!({"a": [1]})), Some(&json!({}))));
        assert!(!semantic_eq(Some(&json!([1, 2])), Some(&json!([2, 1]))));
    }

    #[test]
    fn selector_strings() {
        assert_eq!(
            selector_string(Some(&json!({"matchLabels": {"b": "2", "a": "1"}}))),
            "a=1,b=2"
        );
        let s = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["y", "x"]}, {"key": "gone", "operator": "DoesNotExist"}]});
        assert_eq!(selector_string(Some(&s)), "app=web,!gone,tier in (x,y)");
        assert_eq!(selector_string(None), "");
    }
}
