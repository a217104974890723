//! [`GoField`]: what upstream's Go type says about a struct field and the OpenAPI does not (the
//! generated `go_fields.rs`, parsed on first use): the type `reflect` names in decode errors,
//! pointer or not, and whether Go leaves the field out when it is empty.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::go_fields::GO_FIELDS;

/// When Go's JSON encoder leaves a field out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Omit {
    /// Never (no option): zero values are written.
    Never,
    /// `omitempty`: `false`, `0`, `""`, empty maps and slices, nil pointers.
    Empty,
    /// `omitzero`: the type's zero value (a struct whose fields are all zero).
    Zero,
}

/// What a field's Go type is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoKind {
    /// A struct.
    Struct,
    /// A map (also through a named type such as `v1.ResourceList`).
    Map,
    /// A slice.
    Slice,
    /// Anything else (strings, numbers, booleans, named scalars).
    Other,
    /// An embedded struct Go's JSON inlines and the protobuf form nests in a field of its own
    /// (`VolumeSource` in `Volume`); its [`GoField::ty`] is its definition name, under which its
    /// own fields are found.
    Inline,
}

/// One field of a Go struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// The type without a leading `*`, as `reflect` prints it (`v1.Protocol`, `[]v1.Container`).
    pub ty: String,
    /// The type of a slice's items or a map's values (`""` for other kinds).
    pub elem: String,
    /// When Go leaves the field out.
    pub omit: Omit,
    /// Whether the field is a pointer (a zero value is then written, an absent one is not).
    pub pointer: bool,
    /// The kind of the type.
    pub kind: GoKind,
    /// The field's number in the protobuf encoding (0: none).
    pub proto: u32,
}

impl GoField {
    fn from_json(v: &Value) -> Option<GoField> {
        let a = v.as_array()?;
        let s = |i: usize| a.get(i).and_then(Value::as_str).unwrap_or("");
        Some(GoField {
            ty: s(0).to_string(),
            elem: s(1).to_string(),
            omit: match s(2) {
                "e" => Omit::Empty,
                "z" => Omit::Zero,
                _ => Omit::Never,
            },
            pointer: a.get(3).and_then(Value::as_bool).unwrap_or(false),
            kind: match s(4) {
                "s" => GoKind::Struct,
                "m" => GoKind::Map,
                "l" => GoKind::Slice,
                "i" => GoKind::Inline,
                _ => GoKind::Other,
            },
            proto: a
                .get(5)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
        })
    }

    /// Whether Go leaves this field out when its decoded value is `v`.
    pub fn omits(&self, v: &Value) -> bool {
        let empty = match v {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
        };
        match (self.omit, self.pointer) {
            (_, true) => v.is_null(),
            (Omit::Never, false) => false,
            // a struct is never empty to omitempty
            (Omit::Empty, false) => empty && self.kind != GoKind::Struct,
            (Omit::Zero, false) => empty,
        }
    }
}

type Fields = HashMap<String, HashMap<String, GoField>>;

fn fields() -> &'static Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let Ok(Value::Object(defs)) = serde_json::from_str::<Value>(GO_FIELDS) else {
            tracing::error!("the generated Go field data is not a JSON object");
            return Fields::new();
        };
        defs.iter()
            .map(|(def, fs)| {
                let fs = fs
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), GoField::from_json(v)?)))
                    .collect();
                (def.clone(), fs)
            })
            .collect()
    })
}

/// The Go field behind the JSON field `field` of the struct definition `definition` (`None`
/// for definitions without Go source, such as custom resources').
pub fn go_field(definition: &str, field: &str) -> Option<&'static GoField> {
    fields().get(definition)?.get(field)
}

/// The JSON field of `definition` whose protobuf field number is `number`, or the inline
/// embed with that number ([`GoKind::Inline`], its JSON name empty).
pub fn go_field_by_proto(
    definition: &str,
    number: u32,
) -> Option<(&'static str, &'static GoField)> {
    fields()
        .get(definition)?
        .iter()
        .find(|(_, f)| f.proto == number)
        .map(|(k, f)| {
            let json = if f.kind == GoKind::Inline {
                ""
            } else {
                k.as_str()
            };
            (json, f)
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_of_upstream_types() {
        let p = go_field("io.k8s.api.core.v1.ServicePort", "protocol").expect("protocol");
        assert_eq!(
            (p.ty.as_str(), p.omit, p.pointer),
            ("v1.Protocol", Omit::Empty, false)
        );
        assert_eq!(p.proto, 2);
        let limits = go_field("io.k8s.api.core.v1.ResourceRequirements", "limits").expect("limits");
        assert_eq!(
            (limits.ty.as_str(), limits.elem.as_str(), limits.kind),
            ("v1.ResourceList", "resource.Quantity", GoKind::Map)
        );
        let immutable = go_field("io.k8s.api.core.v1.ConfigMap", "immutable").expect("immutable");
        assert!(immutable.pointer);
        let created = go_field(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "creationTimestamp",
        )
        .expect("creationTimestamp");
        assert_eq!(created.omit, Omit::Zero);
        assert!(go_field("io.k8s.api.core.v1.ServicePort", "nope").is_none());
    }

    #[test]
    fn what_go_leaves_out() {
        let f = |omit, pointer, kind| GoField {
            ty: String::new(),
            elem: String::new(),
            omit,
            pointer,
            kind,
            proto: 0,
        };
        let empty = f(Omit::Empty, false, GoKind::Map);
        assert!(empty.omits(&json!({})));
        assert!(!empty.omits(&json!({"a": "b"})));
        assert!(f(Omit::Empty, false, GoKind::Other).omits(&json!(false)));
        assert!(!f(Omit::Empty, true, GoKind::Other).omits(&json!(false)));
        assert!(!f(Omit::Empty, false, GoKind::Struct).omits(&json!({})));
        assert!(f(Omit::Zero, false, GoKind::Struct).omits(&json!({})));
        assert!(!f(Omit::Never, false, GoKind::Other).omits(&json!(0)));
    }
}
