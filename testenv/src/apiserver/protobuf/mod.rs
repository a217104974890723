//! Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`)
//! into the JSON object the same request would have carried as JSON.
//!
//! The body is the Kubernetes envelope: the four magic bytes `k8s\0`, then a
//! `runtime.Unknown` message (`typeMeta = 1 {apiVersion = 1, kind = 2}`, `raw = 2`,
//! `contentEncoding = 3`, `contentType = 4`) whose `raw` bytes are the object message.
//! The object is decoded with the tables in [`schema`] for the kinds with special code, and
//! every other built-in kind by its schema and the protobuf tags of its Go declarations;
//! anything neither covers is reported as [`ProtoError::Unsupported`] rather than dropped.
//!
//! ```
//! use kcm_testenv::apiserver::protobuf::decode_body;
//!
//! // k8s\0 + Unknown{typeMeta{apiVersion "v1", kind "Namespace"}, raw Namespace{metadata{name "demo"}}}
//! let body = b"k8s\0\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x08\x0a\x06\x0a\x04demo";
//! let object = decode_body(body)?;
//! assert_eq!(
//!     object,
//!     serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
//! );
//! # Ok::<(), kcm_testenv::apiserver::protobuf::ProtoError>(())
//! ```

mod decode;
mod generic;
pub mod schema;
pub mod wire;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::registry::schema::catalog;
use schema::Msg;
pub use wire::ProtoError;
use wire::{Reader, Value as WireValue};

/// The media type of Kubernetes protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Decodes a Kubernetes protobuf request body into the equivalent JSON object, with
/// `apiVersion` and `kind` taken from the envelope's `typeMeta`.
pub fn decode_body(bytes: &[u8]) -> Result<Value, ProtoError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(ProtoError::BadMagic)?;
    let envelope = Envelope::decode(rest)?;
    if !envelope.content_encoding.is_empty() {
        return Err(ProtoError::Unsupported(format!(
            "runtime.Unknown contentEncoding {:?}",
            envelope.content_encoding
        )));
    }
    if !envelope.content_type.is_empty() && !envelope.content_type.starts_with(CONTENT_TYPE) {
        return Err(ProtoError::Unsupported(format!(
            "runtime.Unknown contentType {:?}",
            envelope.content_type
        )));
    }
    let (group, version) = envelope
        .api_version
        .split_once('/')
        .unwrap_or(("", &envelope.api_version));
    let root = catalog().kind(group, version, &envelope.kind);
    let tabled = Msg::for_kind(&envelope.api_version, &envelope.kind).map(|msg| {
        let mut object = Map::new();
        decode::message_into(msg, envelope.raw, &mut object, 0).map(|()| object)
    });
    let mut object = match (tabled, root) {
        (Some(Ok(object)), _) => object,
        // a table that lacks a message type (a pod's volumes): the schema covers every field
        (Some(Err(ProtoError::Unsupported(_))), Some(root)) | (None, Some(root)) => {
            match generic::message(root, envelope.raw, 0)? {
                Value::Object(fields) => fields,
                _ => Map::new(),
            }
        }
        (Some(Err(e)), _) => return Err(e),
        (None, None) => {
            return Err(ProtoError::Unsupported(format!(
                "kind {:?} in apiVersion {:?}",
                envelope.kind, envelope.api_version
            )));
        }
    };
    object.insert("apiVersion".into(), Value::String(envelope.api_version));
    object.insert("kind".into(), Value::String(envelope.kind));
    Ok(Value::Object(object))
}

/// The decoded `runtime.Unknown` envelope.
#[derive(Debug, Default)]
struct Envelope<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
    content_type: String,
}

impl<'a> Envelope<'a> {
    fn decode(bytes: &'a [u8]) -> Result<Self, ProtoError> {
        let mut out = Envelope::default();
        let mut reader = Reader::new(bytes);
        while let Some((number, value)) = reader.next_field()? {
            match (number, value) {
                (1, WireValue::Len(type_meta)) => {
                    let mut tm = Reader::new(type_meta);
                    while let Some((n, v)) = tm.next_field()? {
                        match (n, v) {
                            (1, WireValue::Len(s)) => {
                                out.api_version = envelope_str(s, "apiVersion")?
                            }
                            (2, WireValue::Len(s)) => out.kind = envelope_str(s, "kind")?,
                            (n, v) => return Err(envelope_field("runtime.TypeMeta", n, v)),
                        }
                    }
                }
                (2, WireValue::Len(raw)) => out.raw = raw,
                (3, WireValue::Len(s)) => {
                    out.content_encoding = envelope_str(s, "contentEncoding")?
                }
                (4, WireValue::Len(s)) => out.content_type = envelope_str(s, "contentType")?,
                (n, v) => return Err(envelope_field("runtime.Unknown", n, v)),
            }
        }
        Ok(out)
    }
}

fn envelope_str(bytes: &[u8], field: &'static str) -> Result<String, ProtoError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtoError::InvalidUtf8 {
        message: "runtime.Unknown",
        field,
    })
}

fn envelope_field(message: &str, number: u32, value: WireValue<'_>) -> ProtoError {
    ProtoError::Unsupported(format!(
        "field {number} (wire type {:?}) of message {message}",
        value.wire_type()
    ))
}
