//! Objects written as kube-apiserver writes them: Go's `encoding/json` emits a struct's fields
//! in declaration order, and every API type embeds `TypeMeta` (`kind`, then `apiVersion`)
//! first (`staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go`). kcm-testenv's values
//! keep their keys sorted, so `apiVersion` would come before `kind`; clients can see the
//! difference (a decode error's column, a byte comparison). [`to_vec`] writes `kind` and
//! `apiVersion` first in every object that has both, the rest as stored.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// `v` as JSON bytes, `kind` and `apiVersion` first in every object that has both.
pub fn to_vec(v: &Value) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&TypeMetaFirst(v))
}

/// A value serialized with `kind` and `apiVersion` leading its objects.
struct TypeMetaFirst<'a>(&'a Value);

impl Serialize for TypeMetaFirst<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(m) => {
                let typed = m.contains_key("kind") && m.contains_key("apiVersion");
                let mut map = s.serialize_map(Some(m.len()))?;
                if typed {
                    for key in ["kind", "apiVersion"] {
                        if let Some(v) = m.get(key) {
                            map.serialize_entry(key, &TypeMetaFirst(v))?;
                        }
                    }
                }
                for (key, v) in m {
                    if typed && (key == "kind" || key == "apiVersion") {
                        continue;
                    }
                    map.serialize_entry(key, &TypeMetaFirst(v))?;
                }
                map.end()
            }
            Value::Array(items) => s.collect_seq(items.iter().map(TypeMetaFirst)),
            other => other.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::to_vec;

    #[test]
    fn type_meta_leads_every_typed_object() {
        let list = json!({
            "apiVersion": "v1", "kind": "ServiceList", "metadata": {"resourceVersion": "7"},
            "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}],
        });
        let text = String::from_utf8(to_vec(&list).expect("json")).expect("utf-8");
        assert_eq!(
            text,
            r#"{"kind":"ServiceList","apiVersion":"v1","items":[{"kind":"Service","apiVersion":"v1","metadata":{"name":"a"}}],"metadata":{"resourceVersion":"7"}}"#
        );
        // a Status's details have a kind and no apiVersion: left as they are
        let details = json!({"details": {"name": "x", "kind": "pods"}});
        assert_eq!(
            String::from_utf8(to_vec(&details).expect("json")).expect("utf-8"),
            r#"{"details":{"kind":"pods","name":"x"}}"#
        );
        // the same value as serde_json writes it, whatever the order
        let back: serde_json::Value =
            serde_json::from_slice(&to_vec(&list).expect("json")).expect("parse");
        assert_eq!(back, list);
    }
}
