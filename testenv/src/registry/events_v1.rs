//! The events.k8s.io/v1 view of core/v1 Events: one stored object, two schemas
//! (`pkg/registry/core/event/strategy.go`, `pkg/apis/events/v1/conversion.go`).

use serde_json::{Map, Value};

/// `(events.k8s.io/v1 name, core/v1 name)` pairs of renamed fields.
const RENAMES: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

/// Convert a stored core/v1 Event to events.k8s.io/v1. An empty `eventTime` is taken from
/// `firstTimestamp` (at microsecond precision) so the object passes the stricter schema.
pub fn to_v1(core: &Value) -> Value {
    let mut out = Map::new();
    let Some(o) = core.as_object() else {
        return core.clone();
    };
    for (k, v) in o {
        let nk = RENAMES
            .iter()
            .find(|(_, c)| c == k)
            .map(|(n, _)| *n)
            .unwrap_or(k.as_str());
        out.insert(nk.to_string(), v.clone());
    }
    out.insert(
        "apiVersion".into(),
        Value::String("events.k8s.io/v1".into()),
    );
    out.insert("kind".into(), Value::String("Event".into()));
    let empty_time = out.get("eventTime").is_none_or(Value::is_null);
    if empty_time && let Some(ft) = out.get("deprecatedFirstTimestamp").and_then(Value::as_str) {
        let micro = ft
            .strip_suffix('Z')
            .map(|s| format!("{s}.000000Z"))
            .unwrap_or_else(|| ft.to_string());
        out.insert("eventTime".into(), Value::String(micro));
    }
    Value::Object(out)
}

/// Convert an events.k8s.io/v1 Event body to the stored core/v1 form.
pub fn to_core(v1: Value) -> Value {
    let Value::Object(o) = v1 else { return v1 };
    let mut out = Map::new();
    for (k, v) in o {
        let nk = RENAMES
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, c)| c.to_string())
            .unwrap_or(k);
        out.insert(nk, v);
    }
    out.insert("apiVersion".into(), Value::String("v1".into()));
    out.insert("kind".into(), Value::String("Event".into()));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_mapping() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {"name": "web"}, "message": "m", "count": 2, "firstTimestamp": "2025-01-01T00:00:00Z", "reason": "R"});
        let v1 = to_v1(&core);
        assert_eq!(v1["regarding"]["name"], "web");
        assert_eq!(v1["note"], "m");
        assert_eq!(v1["deprecatedCount"], 2);
        assert_eq!(v1["eventTime"], "2025-01-01T00:00:00.000000Z");
        assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
        let back = to_core(v1);
        assert_eq!(back["involvedObject"]["name"], "web");
        assert_eq!(back["message"], "m");
        assert_eq!(back["apiVersion"], "v1");
    }
}
