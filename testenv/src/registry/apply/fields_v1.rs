//! The `FieldsV1` encoding of a [`Set`] (structured-merge-diff's `fieldpath/serialize.go` and
//! `serialize-pe.go`): a JSON object whose keys are path elements (`f:<name>`,
//! `k:<key fields as JSON>`, `v:<value as JSON>`, `i:<index>`) and whose values are the
//! children; `{}` marks a member, and `".": {}` marks an element that is a member and has
//! children. Encoding is byte for byte upstream's (element order, Go's JSON escaping);
//! decoding ignores element types it does not know, as upstream does.

use serde_json::Value;

use super::path::PathElement;
use super::set::Set;
use super::value::{write_json, write_json_string};

/// The element as a FieldsV1 key (`f:spec`, `k:{"name":"c"}`, `v:"a"`, `i:0`).
pub fn element_key(pe: &PathElement) -> String {
    let mut out = String::new();
    match pe {
        PathElement::Field(name) => {
            out.push_str("f:");
            out.push_str(name);
        }
        PathElement::Key(fields) => {
            out.push_str("k:{");
            for (i, (name, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(&mut out, name);
                out.push(':');
                write_json(&mut out, v);
            }
            out.push('}');
        }
        PathElement::Value(v) => {
            out.push_str("v:");
            write_json(&mut out, v);
        }
        PathElement::Index(i) => {
            out.push_str("i:");
            out.push_str(&i.to_string());
        }
    }
    out
}

/// A FieldsV1 key that is not a path element.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElementError {
    /// Shorter than `x:`.
    #[error("key must be 2 characters long: {0}")]
    TooShort(String),
    /// No `:` after the type letter.
    #[error("missing colon: {0}")]
    MissingColon(String),
    /// A `v:`, `k:` or `i:` whose content does not parse.
    #[error("parsing key as path element: {0}")]
    Content(String),
}

/// Parse a FieldsV1 key; `Ok(None)` for an element type this version does not know.
pub fn parse_element_key(s: &str) -> Result<Option<PathElement>, ElementError> {
    let b = s.as_bytes();
    if b.len() < 2 {
        return Err(ElementError::TooShort(s.to_string()));
    }
    if b[1] != b':' {
        return Err(ElementError::MissingColon(s.to_string()));
    }
    let rest = &s[2..];
    let content = |e: serde_json::Error| ElementError::Content(format!("{s}: {e}"));
    match b[0] {
        b'f' => Ok(Some(PathElement::Field(rest.to_string()))),
        b'v' => {
            let v: Value = serde_json::from_str(rest).map_err(content)?;
            Ok(Some(PathElement::Value(v)))
        }
        b'k' => {
            let v: serde_json::Map<String, Value> = serde_json::from_str(rest).map_err(content)?;
            Ok(Some(PathElement::key(v.into_iter().collect())))
        }
        b'i' => rest
            .parse::<i64>()
            .map(|i| Some(PathElement::Index(i)))
            .map_err(|e| ElementError::Content(format!("{s}: {e}"))),
        _ => Ok(None),
    }
}

/// The set as FieldsV1 JSON text, exactly as kube-apiserver writes it.
pub fn encode(set: &Set) -> String {
    let mut out = String::from("{");
    emit(set, false, &mut out);
    out.push('}');
    out
}

/// The set as a FieldsV1 JSON value (for storing in an object).
pub fn to_value(set: &Set) -> Value {
    // our own encoding of element keys, so parsing it back cannot fail
    serde_json::from_str(&encode(set)).unwrap_or(Value::Object(Default::default()))
}

fn emit_key(out: &mut String, first: &mut bool, key: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    write_json_string(out, key);
    out.push(':');
}

fn emit(set: &Set, include_self: bool, out: &mut String) {
    let mut first = true;
    let members = set.members();
    let children = set.children();
    if include_self && !(members.is_empty() && children.is_empty()) {
        emit_key(out, &mut first, ".");
        out.push_str("{}");
    }
    let (mut mi, mut ci) = (0, 0);
    while mi < members.len() || ci < children.len() {
        let ord = match (members.get(mi), children.get(ci)) {
            (Some(m), Some((c, _))) => m.cmp(c),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                emit_key(out, &mut first, &element_key(&members[mi]));
                out.push_str("{}");
                mi += 1;
            }
            std::cmp::Ordering::Greater => {
                let (pe, child) = &children[ci];
                emit_key(out, &mut first, &element_key(pe));
                out.push('{');
                emit(child, false, out);
                out.push('}');
                ci += 1;
            }
            std::cmp::Ordering::Equal => {
                let (pe, child) = &children[ci];
                emit_key(out, &mut first, &element_key(pe));
                out.push('{');
                emit(child, true, out);
                out.push('}');
                mi += 1;
                ci += 1;
            }
        }
    }
}

/// Why a FieldsV1 value is not a set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A level that is not a JSON object.
    #[error("expected an object, got {0}")]
    NotAnObject(String),
    /// A key that is not a path element.
    #[error(transparent)]
    Element(#[from] ElementError),
}

/// Parse FieldsV1 JSON text.
pub fn decode_str(s: &str) -> Result<Set, DecodeError> {
    let v: Value =
        serde_json::from_str(s).map_err(|e| DecodeError::NotAnObject(format!("{s:?}: {e}")))?;
    decode(&v)
}

/// Parse a FieldsV1 value.
pub fn decode(v: &Value) -> Result<Set, DecodeError> {
    Ok(read_level(v)?.0.unwrap_or_default())
}

/// One level: its children (if any) and whether the element holding it is a member.
fn read_level(v: &Value) -> Result<(Option<Set>, bool), DecodeError> {
    let Value::Object(m) = v else {
        return Err(DecodeError::NotAnObject(v.to_string()));
    };
    let mut members = Vec::new();
    let mut children = Vec::new();
    let mut is_member = false;
    let mut any = false;
    for (key, sub) in m {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = parse_element_key(key)? else {
            continue;
        };
        let (grandchildren, child_is_member) = read_level(sub)?;
        if child_is_member {
            members.push(pe.clone());
            any = true;
        }
        if let Some(g) = grandchildren {
            children.push((pe, g));
            any = true;
        }
    }
    if !any {
        return Ok((None, true));
    }
    members.sort();
    members.dedup();
    children.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((Some(Set::from_parts(members, children)), is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::path::Path;
    use proptest::prelude::*;
    use serde_json::json;

    fn f(n: &str) -> PathElement {
        PathElement::field(n)
    }

    fn k(n: &str, v: Value) -> PathElement {
        PathElement::key(vec![(n.to_string(), v)])
    }

    #[test]
    fn encodes_as_kube_apiserver() {
        let c = k("name", json!("nginx"));
        let paths = [
            Path(vec![f("metadata"), f("labels"), f("app")]),
            Path(vec![f("spec"), f("replicas")]),
            Path(vec![
                f("spec"),
                f("template"),
                f("spec"),
                f("containers"),
                c.clone(),
            ]),
            Path(vec![
                f("spec"),
                f("template"),
                f("spec"),
                f("containers"),
                c.clone(),
                f("image"),
            ]),
            Path(vec![
                f("spec"),
                f("template"),
                f("spec"),
                f("containers"),
                c.clone(),
                f("name"),
            ]),
            Path(vec![
                f("metadata"),
                f("finalizers"),
                PathElement::Value(json!("a<b")),
            ]),
            Path(vec![f("spec"), f("ports"), k("port", json!(443))]),
            Path(vec![f("spec"), f("ports"), k("port", json!(80))]),
        ];
        let s = Set::from_paths(&paths);
        let want = concat!(
            r#"{"f:metadata":{"f:finalizers":{"v:\"a\\u003cb\"":{}},"f:labels":{"f:app":{}}},"#,
            r#""f:spec":{"f:ports":{"k:{\"port\":80}":{},"k:{\"port\":443}":{}},"f:replicas":{},"#,
            r#""f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#
        );
        assert_eq!(encode(&s), want);
        assert_eq!(decode_str(want).expect("decodes"), s);
        assert_eq!(encode(&Set::new()), "{}");
    }

    #[test]
    fn decoding_skips_unknown_elements_and_rejects_bad_ones() {
        let s = decode(&json!({"f:a": {}, "x:future": {}, "i:2": {}})).expect("decodes");
        assert_eq!(
            s.paths().iter().map(Path::to_string).collect::<Vec<_>>(),
            vec![".a", "[2]"]
        );
        assert!(matches!(
            decode(&json!({"nocolon": {}})),
            Err(DecodeError::Element(ElementError::MissingColon(_)))
        ));
        assert!(decode(&json!({"k:{bad": {}})).is_err());
        assert!(decode(&json!({"f:a": 1})).is_err());
        // a member with a child only through an unknown element is just a member
        let s = decode(&json!({"f:a": {"x:y": {}}})).expect("decodes");
        assert_eq!(s.paths().len(), 1);
    }

    fn arb_element() -> impl Strategy<Value = PathElement> {
        prop_oneof![
            "[a-c<&\"]{1,3}".prop_map(PathElement::Field),
            (any::<i32>(), "[a-b]").prop_map(|(v, n)| PathElement::key(vec![
                ("port".into(), json!(v)),
                (n, json!("x"))
            ])),
            prop_oneof![
                any::<i64>().prop_map(|v| json!(v)),
                "[ -~]{0,4}".prop_map(|v| json!(v)),
                any::<bool>().prop_map(|v| json!(v)),
                // quarters: serde_json's default float parsing is not exact for every digit
                (-1e6f64..1e6).prop_map(|v| json!((v * 4.0).round() / 4.0)),
            ]
            .prop_map(PathElement::Value),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(paths in prop::collection::vec(prop::collection::vec(arb_element(), 1..4), 0..10)) {
            let ps: Vec<Path> = paths.into_iter().map(Path).collect();
            let s = Set::from_paths(&ps);
            let text = encode(&s);
            let back = decode_str(&text).expect("own encoding decodes");
            prop_assert_eq!(&back, &s);
            prop_assert_eq!(encode(&back), text.clone());
            // the stored value form decodes to the same set
            prop_assert_eq!(decode(&to_value(&s)).expect("value decodes"), s);
        }
    }
}
