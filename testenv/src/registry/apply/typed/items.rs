//! The path element of a list item (structured-merge-diff's `typed/helpers.go`): in a map
//! list, its key fields (a key it leaves out takes the field's default); in a set, its value.
//! Atomic lists have no per-item elements.

use serde_json::Value;

use crate::registry::apply::path::PathElement;
use crate::registry::apply::schema::{ListType, TypedSchema};

/// The element naming `item` in an associative list, or why there is none.
pub fn item_element(
    schema: &TypedSchema,
    list: &ListType,
    item: &Value,
) -> Result<PathElement, String> {
    if list.atomic {
        return Err("invalid indexing of non-associative list".into());
    }
    if list.keys.is_empty() {
        return match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        };
    }
    let m = match item {
        Value::Null => return Err("associative list with keys may not have a null element".into()),
        Value::Object(m) => m,
        _ => return Err("associative list with keys may not have non-map elements".into()),
    };
    let mut fields = Vec::new();
    for key in &list.keys {
        if let Some(v) = m.get(key) {
            fields.push((key.clone(), v.clone()));
        } else if let Some(d) = key_default(schema, list, key)? {
            fields.push((key.clone(), d));
        }
    }
    if fields.is_empty() {
        let quoted: Vec<String> = list.keys.iter().map(|k| format!("{k:?}")).collect();
        return Err(format!(
            "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
            quoted.join(" ")
        ));
    }
    Ok(PathElement::key(fields))
}

/// The default of a key field, from the item type's field of that name.
fn key_default(schema: &TypedSchema, list: &ListType, key: &str) -> Result<Option<Value>, String> {
    let err = |why: &str| format!("couldn't find default value for {key}: {why}");
    let atom = schema
        .resolve(&list.element)
        .ok_or_else(|| err("invalid elementType for list"))?;
    let map = atom
        .map
        .ok_or_else(|| err("associative list may not have non-map types"))?;
    Ok(map.fields.get(key).and_then(|f| f.default.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::schema::{Atom, Field, MapType, Scalar, TypeRef};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn ports() -> ListType {
        let mut fields = BTreeMap::new();
        fields.insert(
            "containerPort".to_string(),
            Field {
                ty: TypeRef::inline(Atom::scalar(Scalar::Numeric)),
                default: None,
            },
        );
        fields.insert(
            "protocol".to_string(),
            Field {
                ty: TypeRef::inline(Atom::scalar(Scalar::String)),
                default: Some(json!("TCP")),
            },
        );
        ListType {
            element: TypeRef::inline(Atom::map(MapType {
                fields,
                element: None,
                atomic: false,
            })),
            atomic: false,
            keys: vec!["containerPort".into(), "protocol".into()],
        }
    }

    #[test]
    fn keys_take_defaults() {
        let s = TypedSchema::deduced();
        let pe = item_element(&s, &ports(), &json!({"containerPort": 80})).expect("keyed");
        assert_eq!(pe.to_string(), "[containerPort=80,protocol=\"TCP\"]");
        let err = item_element(&s, &ports(), &json!({"name": "x"}));
        // protocol's default still makes a key
        assert_eq!(
            err.map(|p| p.to_string()).as_deref(),
            Ok("[protocol=\"TCP\"]")
        );
        let mut no_default = ports();
        no_default.keys = vec!["containerPort".into()];
        assert_eq!(
            item_element(&s, &no_default, &json!({"name": "x"})),
            Err("associative list with keys has an element that omits all key fields [\"containerPort\"] (and doesn't have default values for any key fields)".into())
        );
        assert!(item_element(&s, &ports(), &json!(null)).is_err());
    }

    #[test]
    fn sets_take_scalar_values() {
        let s = TypedSchema::deduced();
        let set = ListType {
            element: TypeRef::inline(Atom::scalar(Scalar::String)),
            atomic: false,
            keys: Vec::new(),
        };
        assert_eq!(
            item_element(&s, &set, &json!("a")).map(|p| p.to_string()),
            Ok("[=\"a\"]".into())
        );
        assert!(item_element(&s, &set, &json!({"a": 1})).is_err());
        assert!(item_element(&s, &set, &json!([1])).is_err());
    }
}
