//! [`Obj`]: a stored object, its serialized bytes plus the labels and field values selectors
//! match on.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::registry::StorageId;
use crate::registry::field_selector;

/// A stored object: the serialized bytes (produced once per write and shared by every
/// reader) plus the few values selectors need. The full JSON value is parsed on demand,
/// which keeps a stored pod near its serialized size instead of a `serde_json::Value` tree.
#[derive(Debug)]
pub struct Obj {
    /// `serde_json` serialization of the object (with `metadata.resourceVersion` set).
    pub json: Bytes,
    /// The revision that wrote it.
    pub rv: u64,
    /// `metadata.labels`.
    labels: Vec<(Box<str>, Box<str>)>,
    /// Values of the bucket's field labels (`metadata.name`, `spec.nodeName`, ...).
    fields: Vec<(&'static str, Box<str>)>,
}

/// Shared handle on a stored object.
pub type ObjRef = Arc<Obj>;

impl Obj {
    /// Build an object of bucket `id` at a revision: sets `metadata.resourceVersion`,
    /// serializes, and extracts labels and field-selector values.
    pub fn at(id: StorageId, mut value: Value, rv: u64) -> Obj {
        if let Some(m) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let json = Bytes::from(crate::registry::go_json::to_vec(&value).unwrap_or_default());
        let labels = value
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|l| {
                l.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
                    .collect()
            })
            .unwrap_or_default();
        let fields = ["metadata.name", "metadata.namespace"]
            .iter()
            .chain(field_selector::extra_fields(id))
            .map(|f| (*f, field_selector::field_value(&value, f).into_boxed_str()))
            .collect();
        Obj {
            json,
            rv,
            labels,
            fields,
        }
    }

    /// The object as a JSON value (parsed from the stored bytes).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// A label value.
    pub fn label(&self, k: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(lk, _)| &**lk == k)
            .map(|(_, v)| &**v)
    }

    /// The value of a field label of this bucket (`None` if the bucket does not support it).
    pub fn field(&self, f: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(fk, _)| *fk == f)
            .map(|(_, v)| &**v)
    }
}

/// Label selectors (`kcm_store::Selector`) match the extracted labels without parsing the JSON.
impl kcm_store::selector::Labels for Obj {
    fn get(&self, key: &str) -> Option<&str> {
        self.label(key)
    }
}
