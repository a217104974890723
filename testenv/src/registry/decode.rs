//! Decoding a request body into a built-in kind without special code, driven by the kind's
//! schema ([`schema`](super::schema)): what kube-apiserver's JSON decoding into the Go type and
//! encoding back does (`k8s.io/apimachinery/pkg/runtime/serializer/json`, which decodes with
//! `sigs.k8s.io/json`, Go's `encoding/json` made case-sensitive).
//!
//! - Unknown fields are dropped and reported (the caller applies `fieldValidation`).
//! - `null` reads as absent; a field the Go type always writes gets the zero value or `+default`
//!   upstream's OpenAPI gives it (`{}` for a struct that is not a pointer, `0`, `""`, `"TCP"`).
//! - A value of the wrong type fails with Go's text (`json: cannot unmarshal string into Go
//!   struct field ContainerPort.spec.ports.containerPort of type int32`); like Go, decoding goes
//!   on and the first such error is the answer, while the types that decode themselves
//!   (`Quantity`, `IntOrString`, `Time`) stop at theirs.
//! - Values come out in the form Go writes them: quantities canonical, times in UTC, bytes in
//!   padded base64.

use base64::Engine;
use serde_json::{Map, Value};

use super::quantity;
use super::schema::{GoKind, Node, Omit, Path, Shape, Step, Type};

/// Go's `resource.ErrFormatWrong`.
const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A decoded object and the fields decoding dropped (paths as Go's strict decoder prints them:
/// `spec.template.spec.containers[0].foo`).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The object as the Go type writes it.
    pub value: Value,
    /// Unknown fields, in document order.
    pub unknown: Vec<String>,
}

/// Why a body does not decode: Go's error text (kube-apiserver's handlers put
/// `<Kind> in version "<v>" cannot be handled as a <Kind>: ` before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

#[derive(Default)]
struct State {
    /// The first type error (Go's `savedError`).
    saved: Option<String>,
    /// An error that stops decoding at once (from a type's own `UnmarshalJSON`).
    fatal: Option<String>,
    unknown: Vec<String>,
}

impl State {
    fn save(&mut self, e: String) {
        if self.saved.is_none() {
            self.saved = Some(e);
        }
    }
}

/// Go's error context: the innermost struct whose field is being decoded, and the Go types of
/// the value (and of its items or values) when the struct's Go declaration names them.
#[derive(Clone, Copy)]
struct Context<'a> {
    struct_name: Option<&'a str>,
    go_ty: Option<&'a str>,
    elem: Option<&'a str>,
}

impl<'a> Context<'a> {
    /// The context of an item or value of this list or map.
    fn element(self) -> Context<'a> {
        Context {
            go_ty: self.elem.filter(|e| !e.is_empty()),
            elem: None,
            ..self
        }
    }
}

/// Decode `v` as the type at `root` (a kind's definition).
pub fn decode(root: Node<'_>, v: Value) -> Result<Decoded, DecodeError> {
    let mut st = State::default();
    let ctx = Context {
        struct_name: None,
        go_ty: None,
        elem: None,
    };
    let value = decode_value(root, v, &Path::root(), ctx, &mut st);
    if let Some(e) = st.fatal.or(st.saved) {
        return Err(DecodeError(e));
    }
    Ok(Decoded {
        value,
        unknown: st.unknown,
    })
}

/// The path as Go's strict decoder prints it: fields and map keys after dots, indices in
/// brackets.
fn strict_path(p: &Path) -> String {
    let mut out = String::new();
    for s in &p.0 {
        match s {
            Step::Field(f) | Step::Key(f) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(f);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The Go type name of a node as `reflect.Type.String()` prints it.
pub fn go_type(node: Node<'_>) -> String {
    if let Some(d) = node.definition() {
        let mut parts = d.rsplit('.');
        let name = parts.next().unwrap_or(d);
        let pkg = parts.next().unwrap_or("");
        return format!("{pkg}.{name}");
    }
    match node.shape() {
        Shape::List => format!("[]{}", node.items().map(go_type).unwrap_or_default()),
        Shape::Map => format!(
            "map[string]{}",
            node.values().map(go_type).unwrap_or_default()
        ),
        Shape::Scalar(Type::String) if node.format() == Some("byte") => "[]uint8".into(),
        Shape::Scalar(Type::String) => "string".into(),
        Shape::Scalar(Type::Integer) => match node.format() {
            Some("int32") => "int32".into(),
            Some("int64") => "int64".into(),
            _ => "int".into(),
        },
        Shape::Scalar(Type::Number) => "float64".into(),
        Shape::Scalar(Type::Boolean) => "bool".into(),
        Shape::IntOrString => "intstr.IntOrString".into(),
        Shape::Quantity => "resource.Quantity".into(),
        _ => "interface {}".into(),
    }
}

/// How Go's decoder names a JSON value in its errors.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(what: &str, node: Node<'_>, path: &Path, ctx: Context<'_>) -> String {
    let ty = ctx.go_ty.map_or_else(|| go_type(node), str::to_string);
    type_error_as(what, &ty, path, ctx)
}

/// Go's `UnmarshalTypeError` text for a value decoded into `ty`.
fn type_error_as(what: &str, ty: &str, path: &Path, ctx: Context<'_>) -> String {
    match ctx.struct_name {
        Some(s) => format!(
            "json: cannot unmarshal {what} into Go struct field {s}.{} of type {ty}",
            path.json_fields()
        ),
        None => format!("json: cannot unmarshal {what} into Go value of type {ty}"),
    }
}

fn decode_value<'a>(
    node: Node<'a>,
    v: Value,
    path: &Path,
    ctx: Context<'a>,
    st: &mut State,
) -> Value {
    if st.fatal.is_some() {
        return Value::Null;
    }
    match node.shape() {
        Shape::Struct => match v {
            Value::Object(o) => decode_struct(node, o, path, st),
            other => {
                st.save(type_error(json_kind(&other), node, path, ctx));
                Value::Null
            }
        },
        Shape::Map => match v {
            Value::Object(o) => {
                let Some(values) = node.values() else {
                    return Value::Object(o);
                };
                let mut out = Map::new();
                for (k, x) in o {
                    let p = path.key(&k);
                    let x = if x.is_null() { zero(values) } else { x };
                    out.insert(k, decode_value(values, x, &p, ctx.element(), st));
                }
                Value::Object(out)
            }
            other => {
                st.save(type_error(json_kind(&other), node, path, ctx));
                Value::Null
            }
        },
        Shape::List => match v {
            Value::Array(a) => {
                let Some(items) = node.items() else {
                    return Value::Array(a);
                };
                let out = a
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let x = if x.is_null() { zero(items) } else { x };
                        decode_value(items, x, &path.index(i), ctx.element(), st)
                    })
                    .collect();
                Value::Array(out)
            }
            other => {
                st.save(type_error(json_kind(&other), node, path, ctx));
                Value::Null
            }
        },
        Shape::Scalar(t) => scalar(node, t, v, path, ctx, st),
        // IntOrString decodes a string or its IntVal (int32)
        Shape::IntOrString => match v {
            Value::String(_) => v,
            Value::Number(ref n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => v,
            Value::Number(n) => {
                st.save(type_error_as(&format!("number {n}"), "int32", path, ctx));
                Value::Null
            }
            other => {
                st.save(type_error_as(json_kind(&other), "int32", path, ctx));
                Value::Null
            }
        },
        Shape::Quantity => {
            let text = match &v {
                Value::String(s) => s.trim().to_string(),
                Value::Number(n) => n.to_string(),
                other => other.to_string(),
            };
            match quantity::canonical(&text) {
                Some(c) => Value::String(c),
                None => {
                    st.fatal = Some(QUANTITY_FORMAT.to_string());
                    Value::Null
                }
            }
        }
        Shape::Free => v,
    }
}

fn decode_struct<'a>(node: Node<'a>, o: Map<String, Value>, path: &Path, st: &mut State) -> Value {
    let ctx_of = |k: &str| {
        let go = node.go_field(k);
        Context {
            struct_name: node.type_name(),
            go_ty: go.map(|g| g.ty.as_str()),
            elem: go.map(|g| g.elem.as_str()),
        }
    };
    let mut out = Map::new();
    for (k, x) in o {
        let p = path.child(&k);
        let Some(child) = node.property(&k) else {
            if !x.is_null() {
                st.unknown.push(strict_path(&p));
            }
            continue;
        };
        if x.is_null() {
            continue;
        }
        let x = decode_value(child, x, &p, ctx_of(&k), st);
        // what Go leaves out when it writes the object (omitempty, omitzero)
        if x.is_null() || node.go_field(&k).is_some_and(|g| g.omits(&x)) {
            continue;
        }
        out.insert(k, x);
    }
    // what the Go type always writes: zero values of fields that are not pointers or omitted
    // when empty, and +default markers (upstream's OpenAPI `default`), which also replace a
    // zero value the client wrote into a field that is not a pointer
    for (k, s) in &node.schema().properties {
        let child = Node::new(node.catalog(), s);
        let Some(d) = child.default() else {
            // a nil slice or map Go writes as null (no omitempty)
            let nil = node.go_field(k).is_some_and(|g| {
                g.omit == Omit::Never && !g.pointer && matches!(g.kind, GoKind::Slice | GoKind::Map)
            });
            if nil && !out.contains_key(k) {
                out.insert(k.clone(), Value::Null);
            }
            continue;
        };
        let replaces_zero = out.get(k).is_some_and(|x| {
            is_zero_scalar(x) && !is_zero_scalar(d) && node.go_field(k).is_some_and(|g| !g.pointer)
        });
        if out.contains_key(k) && !replaces_zero {
            continue;
        }
        let x = decode_value(child, d.clone(), &path.child(k), ctx_of(k), st);
        if !x.is_null() && !node.go_field(k).is_some_and(|g| g.omits(&x)) {
            out.insert(k.clone(), x);
        }
    }
    Value::Object(out)
}

/// `""`, `0` or `false`.
fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

/// The zero value a `null` list item or map value decodes to.
fn zero(node: Node<'_>) -> Value {
    match node.shape() {
        Shape::Struct | Shape::Map => Value::Object(Map::new()),
        Shape::Scalar(Type::String) => Value::String(String::new()),
        Shape::Scalar(Type::Integer | Type::Number) => Value::from(0),
        Shape::Scalar(Type::Boolean) => Value::Bool(false),
        _ => Value::Null,
    }
}

fn scalar<'a>(
    node: Node<'a>,
    t: Type,
    v: Value,
    path: &Path,
    ctx: Context<'a>,
    st: &mut State,
) -> Value {
    let time = node.format() == Some("date-time");
    match (t, v) {
        (Type::String, Value::String(s)) if time => match super::meta::parse_time(&s) {
            Some(ts) => Value::String(format_time(node, ts)),
            None => {
                st.fatal = Some(format!(
                    "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {s:?} as \"2006\""
                ));
                Value::Null
            }
        },
        // Time decodes a string first
        (Type::String, other) if time => {
            st.fatal = Some(type_error_as(json_kind(&other), "string", path, ctx));
            Value::Null
        }
        (Type::String, Value::String(s)) if node.format() == Some("byte") => {
            let cleaned: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            let engine = base64::engine::general_purpose::STANDARD;
            match engine.decode(&cleaned) {
                Ok(bytes) => Value::String(engine.encode(bytes)),
                Err(e) => {
                    let at = match e {
                        base64::DecodeError::InvalidByte(i, _)
                        | base64::DecodeError::InvalidLastSymbol(i, _) => i,
                        _ => cleaned.len(),
                    };
                    st.save(format!("illegal base64 data at input byte {at}"));
                    Value::Null
                }
            }
        }
        (Type::String, v @ Value::String(_)) | (Type::Boolean, v @ Value::Bool(_)) => v,
        (Type::Integer, Value::Number(n)) => {
            let fits = match node.format() {
                Some("int32") => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                _ => n.as_i64().is_some(),
            };
            if fits {
                Value::Number(n)
            } else {
                st.save(type_error(&format!("number {n}"), node, path, ctx));
                Value::Null
            }
        }
        (Type::Number, v @ Value::Number(_)) => v,
        (_, other) => {
            st.save(type_error(json_kind(&other), node, path, ctx));
            Value::Null
        }
    }
}

/// A time as Go writes `metav1.Time` (RFC 3339 seconds, UTC) or `metav1.MicroTime`
/// (microseconds).
fn format_time(node: Node<'_>, ts: jiff::Timestamp) -> String {
    let micro = node.definition().is_some_and(|d| d.ends_with(".MicroTime"));
    if micro {
        ts.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    } else {
        ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

#[cfg(test)]
#[path = "decode/tests.rs"]
mod tests;
