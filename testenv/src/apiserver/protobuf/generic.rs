//! Decoding the protobuf message of any built-in kind without a table of its own, driven by the
//! kind's schema ([`schema`](crate::registry::schema)) and the protobuf field numbers of its Go
//! declarations (the `protobuf` struct tags, in the generated `go_fields.rs`). The wire form of
//! each field follows from its schema: strings and bytes length-delimited, integers and booleans
//! varints, numbers 64-bit floats, structs nested messages, maps repeated key/value entries,
//! lists repeated fields (packed varints accepted), and upstream's own message types for
//! `Time`, `MicroTime`, `Quantity`, `IntOrString` and raw JSON (`RawExtension`, `FieldsV1`).
//!
//! Every field present on the wire is written: Go's protobuf encoder writes a value-typed
//! field even when it is zero, and the JSON decode that follows leaves out what `omitempty`
//! leaves out, as it does for a JSON body.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::wire::{ProtoError, Reader, Value as WireValue};
use crate::registry::schema::{GoKind, Node, Shape, Type, go_field_by_proto};

/// Nesting limit; the real schemas are far shallower, this only bounds hostile input.
const MAX_DEPTH: usize = 48;

fn unsupported(what: String) -> ProtoError {
    ProtoError::Unsupported(what)
}

fn len<'b>(v: WireValue<'b>, at: &str) -> Result<&'b [u8], ProtoError> {
    match v {
        WireValue::Len(b) => Ok(b),
        other => Err(unsupported(format!(
            "{at}: wire type {:?} where a length-delimited value belongs",
            other.wire_type()
        ))),
    }
}

fn varint(v: WireValue<'_>, at: &str) -> Result<u64, ProtoError> {
    match v {
        WireValue::Varint(n) => Ok(n),
        other => Err(unsupported(format!(
            "{at}: wire type {:?} where a varint belongs",
            other.wire_type()
        ))),
    }
}

fn utf8(b: &[u8], at: &str) -> Result<String, ProtoError> {
    String::from_utf8(b.to_vec()).map_err(|_| unsupported(format!("{at}: invalid UTF-8")))
}

/// Decode the message `bytes` of the struct at `node` into a JSON object.
pub fn message(node: Node<'_>, bytes: &[u8], depth: usize) -> Result<Value, ProtoError> {
    let mut out = Map::new();
    let go = node.definition().unwrap_or("message");
    message_into(node, go, bytes, depth, &mut out)?;
    Ok(Value::Object(out))
}

/// Decode `bytes` as the Go struct `go` (the definition at `node`, or a struct it inlines),
/// writing the JSON fields into `out`.
fn message_into(
    node: Node<'_>,
    go: &str,
    bytes: &[u8],
    depth: usize,
    out: &mut Map<String, Value>,
) -> Result<(), ProtoError> {
    if depth > MAX_DEPTH {
        return Err(unsupported(format!(
            "nesting deeper than {MAX_DEPTH} at {go}"
        )));
    }
    let name = go;
    let mut reader = Reader::new(bytes);
    while let Some((number, value)) = reader.next_field()? {
        let (json, gf) = go_field_by_proto(go, number).ok_or_else(|| {
            unsupported(format!(
                "field {number} (wire type {:?}) of message {go}",
                value.wire_type()
            ))
        })?;
        if gf.kind == GoKind::Inline {
            message_into(node, &gf.ty, len(value, go)?, depth + 1, out)?;
            continue;
        }
        let prop = json.to_string();
        let Some(child) = node.property(&prop) else {
            continue;
        };
        let at = format!("{name}.{prop}");
        match child.shape() {
            Shape::List => {
                let Some(items) = child.items() else {
                    continue;
                };
                let values = list_values(items, value, &at, depth)?;
                let entry = out.entry(prop).or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = entry {
                    a.extend(values);
                }
            }
            Shape::Map => {
                let Some(values) = child.values() else {
                    continue;
                };
                let (k, v) = map_entry(values, len(value, &at)?, &at, depth)?;
                let entry = out.entry(prop).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(m) = entry {
                    m.insert(k, v);
                }
            }
            _ => {
                let v = field(child, value, &at, depth)?;
                out.insert(prop, v);
            }
        }
    }
    Ok(())
}

/// The items one occurrence of a repeated field holds: one, or several when varints come
/// packed in one length-delimited field.
fn list_values(
    items: Node<'_>,
    value: WireValue<'_>,
    at: &str,
    depth: usize,
) -> Result<Vec<Value>, ProtoError> {
    match (value, items.shape()) {
        (WireValue::Len(packed), Shape::Scalar(Type::Integer | Type::Boolean)) => {
            let mut values = Vec::new();
            let mut r = Reader::new(packed);
            while !r.is_empty() {
                values.push(field(items, WireValue::Varint(r.varint()?), at, depth)?);
            }
            Ok(values)
        }
        (value, _) => Ok(vec![field(items, value, at, depth)?]),
    }
}

/// A list that is the value of a map (`map[string]ExtraValue`): protobuf cannot nest a
/// repeated field in a map, so the list is a message of its own, its items `items = 1`.
fn wrapped_list(list: Node<'_>, bytes: &[u8], at: &str, depth: usize) -> Result<Value, ProtoError> {
    let Some(items) = list.items() else {
        return Err(unsupported(format!("{at}: a list without an item type")));
    };
    let mut out = Vec::new();
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => out.extend(list_values(items, v, at, depth)?),
            other => {
                return Err(unsupported(format!(
                    "field {other} of a list value in {at}"
                )));
            }
        }
    }
    Ok(Value::Array(out))
}

/// A map entry: key = 1 (a string), value = 2.
fn map_entry(
    values: Node<'_>,
    bytes: &[u8],
    at: &str,
    depth: usize,
) -> Result<(String, Value), ProtoError> {
    let mut key = String::new();
    let mut val = None;
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => key = utf8(len(v, at)?, at)?,
            2 => {
                val = Some(match values.shape() {
                    Shape::List => wrapped_list(values, len(v, at)?, at, depth + 1)?,
                    _ => field(values, v, at, depth)?,
                });
            }
            other => return Err(unsupported(format!("field {other} of a map entry in {at}"))),
        }
    }
    let val = match val {
        Some(v) => v,
        // an absent value is the zero value of its type
        None => match values.shape() {
            // Go's JSON writes the nil slice of an absent list value as null
            Shape::List => Value::Null,
            Shape::Struct | Shape::Map => Value::Object(Map::new()),
            Shape::Quantity => Value::String("0".into()),
            Shape::Scalar(Type::Integer | Type::Number) => Value::from(0),
            Shape::Scalar(Type::Boolean) => Value::Bool(false),
            _ => Value::String(String::new()),
        },
    };
    Ok((key, val))
}

/// One value of the type at `node`.
fn field(
    node: Node<'_>,
    value: WireValue<'_>,
    at: &str,
    depth: usize,
) -> Result<Value, ProtoError> {
    let def = node.definition().unwrap_or("");
    Ok(match node.shape() {
        Shape::Struct => message(node, len(value, at)?, depth + 1)?,
        Shape::Quantity => {
            let mut s = String::from("0");
            let mut r = Reader::new(len(value, at)?);
            while let Some((n, v)) = r.next_field()? {
                if n == 1 {
                    s = utf8(len(v, at)?, at)?;
                }
            }
            Value::String(s)
        }
        Shape::IntOrString => {
            let (mut kind, mut int_val, mut str_val) = (0u64, 0i32, String::new());
            let mut r = Reader::new(len(value, at)?);
            while let Some((n, v)) = r.next_field()? {
                match n {
                    1 => kind = varint(v, at)?,
                    2 => int_val = varint(v, at)? as u32 as i32,
                    3 => str_val = utf8(len(v, at)?, at)?,
                    other => {
                        return Err(unsupported(format!("field {other} of IntOrString in {at}")));
                    }
                }
            }
            if kind == 1 {
                Value::String(str_val)
            } else {
                Value::Number(Number::from(int_val))
            }
        }
        Shape::Scalar(Type::String) if node.format() == Some("date-time") => {
            time(len(value, at)?, def.ends_with(".MicroTime"), at)?
        }
        Shape::Scalar(Type::String) if node.format() == Some("byte") => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(len(value, at)?))
        }
        Shape::Scalar(Type::String) => Value::String(utf8(len(value, at)?, at)?),
        Shape::Scalar(Type::Integer) => {
            let n = varint(value, at)?;
            if node.format() == Some("int32") {
                Value::from(n as u32 as i32)
            } else {
                Value::from(n as i64)
            }
        }
        Shape::Scalar(Type::Boolean) => Value::Bool(varint(value, at)? != 0),
        Shape::Scalar(Type::Number) => match value {
            WireValue::Fixed64(bits) => {
                Number::from_f64(f64::from_bits(bits)).map_or(Value::Null, Value::Number)
            }
            other => {
                return Err(unsupported(format!(
                    "{at}: wire type {:?} where a double belongs",
                    other.wire_type()
                )));
            }
        },
        // RawExtension, FieldsV1, JSON: `raw = 1` holding JSON
        Shape::Free => {
            let mut raw: &[u8] = &[];
            let mut r = Reader::new(len(value, at)?);
            while let Some((n, v)) = r.next_field()? {
                if n == 1 {
                    raw = len(v, at)?;
                }
            }
            if raw.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(raw)
                    .map_err(|e| unsupported(format!("{at}: raw value is not JSON: {e}")))?
            }
        }
        Shape::List | Shape::Map | Shape::Scalar(Type::Unset | Type::Object | Type::Array) => {
            return Err(unsupported(format!("{at}: nested collection on the wire")));
        }
    })
}

/// `metav1.Time` / `MicroTime { seconds = 1, nanos = 2 }`; an empty message is the zero time.
fn time(bytes: &[u8], micro: bool, at: &str) -> Result<Value, ProtoError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    let (mut seconds, mut nanos) = (0i64, 0i64);
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => seconds = varint(v, at)? as i64,
            2 => nanos = i64::from(varint(v, at)? as u32 as i32),
            other => return Err(unsupported(format!("field {other} of Time in {at}"))),
        }
    }
    let ts = jiff::Timestamp::new(seconds, 0)
        .map_err(|e| unsupported(format!("{at}: timestamp {seconds}s: {e}")))?;
    let whole = ts.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Value::String(if micro {
        format!("{whole}.{:06}Z", nanos / 1000)
    } else {
        format!("{whole}Z")
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::schema::catalog;

    fn varint_bytes(mut n: u64, out: &mut Vec<u8>) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn len_field(number: u32, payload: &[u8], out: &mut Vec<u8>) {
        varint_bytes(u64::from(number << 3 | 2), out);
        varint_bytes(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    fn varint_field(number: u32, n: u64, out: &mut Vec<u8>) {
        varint_bytes(u64::from(number << 3), out);
        varint_bytes(n, out);
    }

    #[test]
    fn decodes_a_config_map_and_a_service() {
        // ConfigMap{metadata{name "c"}, data{"a": "b"}, immutable true}
        let mut meta = Vec::new();
        len_field(1, b"c", &mut meta);
        let mut entry = Vec::new();
        len_field(1, b"a", &mut entry);
        len_field(2, b"b", &mut entry);
        let mut cm = Vec::new();
        len_field(1, &meta, &mut cm);
        len_field(2, &entry, &mut cm);
        varint_field(4, 1, &mut cm);
        let root = catalog().kind("", "v1", "ConfigMap").expect("ConfigMap");
        assert_eq!(
            message(root, &cm, 0).expect("decodes"),
            json!({"metadata": {"name": "c"}, "data": {"a": "b"}, "immutable": true})
        );
        // Service{spec{ports[{port 80, targetPort{type 1, strVal "http"}}]}}
        let mut target = Vec::new();
        varint_field(1, 1, &mut target);
        len_field(3, b"http", &mut target);
        let mut port = Vec::new();
        varint_field(3, 80, &mut port);
        len_field(4, &target, &mut port);
        let mut spec = Vec::new();
        len_field(1, &port, &mut spec);
        let mut svc = Vec::new();
        len_field(2, &spec, &mut svc);
        let root = catalog().kind("", "v1", "Service").expect("Service");
        assert_eq!(
            message(root, &svc, 0).expect("decodes"),
            json!({"spec": {"ports": [{"port": 80, "targetPort": "http"}]}})
        );
    }

    #[test]
    fn inline_embeds_are_nested_messages() {
        // IngressRule{host "a.com", IngressRuleValue(2){http(1){paths[{path "/"}]}}}
        let mut path = Vec::new();
        len_field(1, b"/", &mut path);
        let mut http = Vec::new();
        len_field(1, &path, &mut http);
        let mut value = Vec::new();
        len_field(1, &http, &mut value);
        let mut rule = Vec::new();
        len_field(1, b"a.com", &mut rule);
        len_field(2, &value, &mut rule);
        let node = catalog()
            .definition("io.k8s.api.networking.v1.IngressRule")
            .expect("IngressRule");
        assert_eq!(
            message(node, &rule, 0).expect("decodes"),
            json!({"host": "a.com", "http": {"paths": [{"path": "/"}]}})
        );
    }

    #[test]
    fn decodes_a_job_as_kubectl_create_job_sends_it() {
        // Job{metadata{name "j", creationTimestamp{0}, labels{"a": "b"}},
        //     spec{parallelism -1, backoffLimit 0, suspend false,
        //          template{spec{containers[{name "c", image "busybox", command ["sh", "-c"]}],
        //                        restartPolicy "Never"}}}}
        let mut meta = Vec::new();
        len_field(1, b"j", &mut meta);
        len_field(8, &[], &mut meta);
        let mut label = Vec::new();
        len_field(1, b"a", &mut label);
        len_field(2, b"b", &mut label);
        len_field(11, &label, &mut meta);
        let mut container = Vec::new();
        len_field(1, b"c", &mut container);
        len_field(2, b"busybox", &mut container);
        len_field(3, b"sh", &mut container);
        len_field(3, b"-c", &mut container);
        let mut pod_spec = Vec::new();
        len_field(2, &container, &mut pod_spec);
        len_field(3, b"Never", &mut pod_spec);
        let mut template = Vec::new();
        len_field(2, &pod_spec, &mut template);
        let mut spec = Vec::new();
        varint_field(1, u64::MAX, &mut spec); // int32 -1, sign-extended to ten bytes
        varint_field(7, 0, &mut spec);
        varint_field(10, 0, &mut spec);
        len_field(6, &template, &mut spec);
        let mut job = Vec::new();
        len_field(1, &meta, &mut job);
        len_field(2, &spec, &mut job);
        let root = catalog().kind("batch", "v1", "Job").expect("Job");
        assert_eq!(
            message(root, &job, 0).expect("decodes"),
            json!({
                "metadata": {"name": "j", "creationTimestamp": null, "labels": {"a": "b"}},
                "spec": {
                    "parallelism": -1,
                    "backoffLimit": 0,
                    "suspend": false,
                    "template": {"spec": {
                        "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c"]}],
                        "restartPolicy": "Never"
                    }}
                }
            })
        );
    }

    #[test]
    fn scalars_times_and_wrapped_lists() {
        let root = |kind: &str| catalog().kind("", "v1", kind).expect("kind");
        let cases: Vec<(&str, Node<'_>, Vec<u8>, Value)> = vec![
            (
                "a Time is seconds since the epoch",
                root("ConfigMap"),
                {
                    let mut t = Vec::new();
                    varint_field(1, 1_700_000_000, &mut t);
                    varint_field(2, 5, &mut t);
                    let mut meta = Vec::new();
                    len_field(8, &t, &mut meta);
                    let mut cm = Vec::new();
                    len_field(1, &meta, &mut cm);
                    cm
                },
                json!({"metadata": {"creationTimestamp": "2023-11-14T22:13:20Z"}}),
            ),
            (
                "bytes are base64 in JSON",
                root("Secret"),
                {
                    let mut entry = Vec::new();
                    len_field(1, b"k", &mut entry);
                    len_field(2, &[0xff, 0x00], &mut entry);
                    let mut secret = Vec::new();
                    len_field(2, &entry, &mut secret);
                    len_field(3, b"Opaque", &mut secret);
                    secret
                },
                json!({"data": {"k": "/wA="}, "type": "Opaque"}),
            ),
            (
                "a quantity is its string",
                root("ResourceQuota"),
                {
                    let mut q = Vec::new();
                    len_field(1, b"10Gi", &mut q);
                    let mut entry = Vec::new();
                    len_field(1, b"storage", &mut entry);
                    len_field(2, &q, &mut entry);
                    let mut spec = Vec::new();
                    len_field(1, &entry, &mut spec);
                    let mut rq = Vec::new();
                    len_field(2, &spec, &mut rq);
                    rq
                },
                json!({"spec": {"hard": {"storage": "10Gi"}}}),
            ),
            (
                "a list in a map is a message of its own (ExtraValue)",
                catalog()
                    .kind("authorization.k8s.io", "v1", "SubjectAccessReview")
                    .expect("SubjectAccessReview"),
                {
                    let mut extra = Vec::new();
                    len_field(1, b"x", &mut extra);
                    len_field(1, b"y", &mut extra);
                    let mut entry = Vec::new();
                    len_field(1, b"scopes", &mut entry);
                    len_field(2, &extra, &mut entry);
                    let mut spec = Vec::new();
                    len_field(3, b"alice", &mut spec);
                    len_field(4, b"g", &mut spec);
                    len_field(5, &entry, &mut spec);
                    let mut sar = Vec::new();
                    len_field(2, &spec, &mut sar);
                    sar
                },
                json!({"spec": {"user": "alice", "groups": ["g"], "extra": {"scopes": ["x", "y"]}}}),
            ),
        ];
        for (name, node, bytes, want) in cases {
            assert_eq!(message(node, &bytes, 0).expect(name), want, "{name}");
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let mut cm = Vec::new();
        varint_field(99, 1, &mut cm);
        let root = catalog().kind("", "v1", "ConfigMap").expect("ConfigMap");
        assert!(message(root, &cm, 0).is_err());
    }
}
