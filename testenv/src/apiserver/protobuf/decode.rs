//! Table-driven decoding of one object message into a JSON object.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::schema::{Field, Kind, Msg};
use super::wire::{ProtoError, Reader, Value as WireValue};

/// Nesting limit; the real schemas are far shallower, this only bounds hostile input.
const MAX_DEPTH: usize = 32;

/// Decodes `bytes` as message `msg`, inserting its fields into `out`.
pub(super) fn message_into(
    msg: Msg,
    bytes: &[u8],
    out: &mut Map<String, Value>,
    depth: usize,
) -> Result<(), ProtoError> {
    if depth > MAX_DEPTH {
        return Err(ProtoError::Unsupported(format!(
            "nesting deeper than {MAX_DEPTH} in message {}",
            msg.name()
        )));
    }
    let mut reader = Reader::new(bytes);
    while let Some((number, value)) = reader.next_field()? {
        let field = msg.field(number).ok_or_else(|| {
            ProtoError::Unsupported(format!(
                "field {number} (wire type {:?}) of message {}",
                value.wire_type(),
                msg.name()
            ))
        })?;
        field_into(msg, field, value, out, depth)?;
    }
    Ok(())
}

fn field_into(
    msg: Msg,
    field: &Field,
    value: WireValue<'_>,
    out: &mut Map<String, Value>,
    depth: usize,
) -> Result<(), ProtoError> {
    let ctx = Ctx { msg, field };
    match field.kind {
        Kind::Skip => return Ok(()),
        Kind::Inline(inner) => return message_into(inner, ctx.len(value)?, out, depth + 1),
        Kind::MapString | Kind::MapQuantity => {
            let (key, val) = map_entry(&ctx, ctx.len(value)?)?;
            let entry = out
                .entry(field.json)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = entry {
                map.insert(key, val);
            }
            return Ok(());
        }
        _ => {}
    }
    if field.repeated {
        // Repeated varints may arrive packed (proto3 style) in one length-delimited field.
        let values = match (value, field.kind) {
            (WireValue::Len(packed), Kind::Int32 | Kind::Int64 | Kind::Bool) => {
                let mut r = Reader::new(packed);
                let mut vals = Vec::new();
                while !r.is_empty() {
                    vals.push(scalar(&ctx, WireValue::Varint(r.varint()?), depth)?);
                }
                vals
            }
            _ => vec![scalar(&ctx, value, depth)?],
        };
        let entry = out
            .entry(field.json)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = entry {
            items.extend(values);
        }
        return Ok(());
    }
    let decoded = scalar(&ctx, value, depth)?;
    let scalar_kind = matches!(
        field.kind,
        Kind::String | Kind::Bytes | Kind::Int32 | Kind::Int64 | Kind::Bool
    );
    if field.pointer || !scalar_kind || !is_zero(&decoded) {
        out.insert(field.json.to_owned(), decoded);
    } else {
        // A value-typed Go field is always encoded; its zero value is what `omitempty`
        // leaves out of the JSON form.
        out.remove(field.json);
    }
    Ok(())
}

/// Zero values of value-typed Go scalars (`""`, `0`, `false`). Only consulted for the
/// scalar kinds: message-encoded values (objects, `IntOrString`, `Quantity`, a zero
/// `Time` as null) are kept, as Go's JSON emits them.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

struct Ctx<'a> {
    msg: Msg,
    field: &'a Field,
}

impl Ctx<'_> {
    fn wrong(&self, value: WireValue<'_>) -> ProtoError {
        ProtoError::WrongWireType {
            message: self.msg.name(),
            field: self.field.json,
            wire_type: value.wire_type(),
        }
    }

    fn len<'b>(&self, value: WireValue<'b>) -> Result<&'b [u8], ProtoError> {
        match value {
            WireValue::Len(b) => Ok(b),
            other => Err(self.wrong(other)),
        }
    }

    fn varint(&self, value: WireValue<'_>) -> Result<u64, ProtoError> {
        match value {
            WireValue::Varint(v) => Ok(v),
            other => Err(self.wrong(other)),
        }
    }

    fn string(&self, bytes: &[u8]) -> Result<String, ProtoError> {
        String::from_utf8(bytes.to_vec()).map_err(|_| ProtoError::InvalidUtf8 {
            message: self.msg.name(),
            field: self.field.json,
        })
    }

    fn invalid(&self, detail: String) -> ProtoError {
        ProtoError::InvalidValue {
            message: self.msg.name(),
            field: self.field.json,
            detail,
        }
    }
}

/// Decodes one (non-map) value of `ctx.field`.
fn scalar(ctx: &Ctx<'_>, value: WireValue<'_>, depth: usize) -> Result<Value, ProtoError> {
    Ok(match ctx.field.kind {
        Kind::String => Value::String(ctx.string(ctx.len(value)?)?),
        Kind::Bytes => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(ctx.len(value)?))
        }
        // int32 is sign-extended to 64 bits on the wire; truncation recovers it.
        Kind::Int32 => Value::from(ctx.varint(value)? as u32 as i32),
        Kind::Int64 => Value::from(ctx.varint(value)? as i64),
        Kind::Bool => Value::Bool(ctx.varint(value)? != 0),
        Kind::Message(inner) => {
            let mut obj = Map::new();
            message_into(inner, ctx.len(value)?, &mut obj, depth + 1)?;
            Value::Object(obj)
        }
        Kind::Quantity => quantity(ctx, ctx.len(value)?)?,
        Kind::IntOrString => int_or_string(ctx, ctx.len(value)?)?,
        Kind::Time => time(ctx, ctx.len(value)?, false)?,
        Kind::MicroTime => time(ctx, ctx.len(value)?, true)?,
        Kind::Unsupported(type_name) => {
            if !ctx.len(value)?.is_empty() {
                return Err(ProtoError::Unsupported(format!(
                    "field {} ({}) of message {}: no table for message type {type_name}",
                    ctx.field.number,
                    ctx.field.json,
                    ctx.msg.name()
                )));
            }
            // An empty message carries no data: the Go JSON form is `{}`.
            Value::Object(Map::new())
        }
        Kind::Inline(_) | Kind::MapString | Kind::MapQuantity | Kind::Skip => {
            return Err(ProtoError::Unsupported(format!(
                "{} of message {} cannot be repeated",
                ctx.field.json,
                ctx.msg.name()
            )));
        }
    })
}

/// A map entry message: key = 1 (string), value = 2 (string or Quantity).
fn map_entry(ctx: &Ctx<'_>, bytes: &[u8]) -> Result<(String, Value), ProtoError> {
    let mut key = String::new();
    let mut val = match ctx.field.kind {
        Kind::MapQuantity => Value::String("0".into()),
        _ => Value::String(String::new()),
    };
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => key = ctx.string(ctx.len(v)?)?,
            2 if ctx.field.kind == Kind::MapQuantity => val = quantity(ctx, ctx.len(v)?)?,
            2 => val = Value::String(ctx.string(ctx.len(v)?)?),
            other => return Err(entry_field(ctx, other, "map entry")),
        }
    }
    Ok((key, val))
}

fn entry_field(ctx: &Ctx<'_>, number: u32, what: &str) -> ProtoError {
    ProtoError::Unsupported(format!(
        "field {number} of the {what} in {}.{}",
        ctx.msg.name(),
        ctx.field.json
    ))
}

/// `resource.Quantity { string = 1 }`; Go marshals the zero quantity as "0".
fn quantity(ctx: &Ctx<'_>, bytes: &[u8]) -> Result<Value, ProtoError> {
    let mut s = String::from("0");
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => s = ctx.string(ctx.len(v)?)?,
            other => return Err(entry_field(ctx, other, "Quantity")),
        }
    }
    Ok(Value::String(s))
}

/// `intstr.IntOrString { type = 1, intVal = 2, strVal = 3 }`.
fn int_or_string(ctx: &Ctx<'_>, bytes: &[u8]) -> Result<Value, ProtoError> {
    let (mut kind, mut int_val, mut str_val) = (0u64, 0i32, String::new());
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => kind = ctx.varint(v)?,
            2 => int_val = ctx.varint(v)? as u32 as i32,
            3 => str_val = ctx.string(ctx.len(v)?)?,
            other => return Err(entry_field(ctx, other, "IntOrString")),
        }
    }
    match kind {
        0 => Ok(Value::Number(Number::from(int_val))),
        1 => Ok(Value::String(str_val)),
        other => Err(ctx.invalid(format!(
            "IntOrString type {other} is neither 0 (int) nor 1 (string)"
        ))),
    }
}

/// `metav1.Time` / `MicroTime { seconds = 1, nanos = 2 }`. An empty message is the zero
/// time, which Go's JSON writes as `null`.
fn time(ctx: &Ctx<'_>, bytes: &[u8], micro: bool) -> Result<Value, ProtoError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    let (mut seconds, mut nanos) = (0i64, 0i32);
    let mut r = Reader::new(bytes);
    while let Some((n, v)) = r.next_field()? {
        match n {
            1 => seconds = ctx.varint(v)? as i64,
            2 => nanos = ctx.varint(v)? as u32 as i32,
            other => return Err(entry_field(ctx, other, "Time")),
        }
    }
    if !(0..1_000_000_000).contains(&nanos) {
        return Err(ctx.invalid(format!("nanos {nanos} out of range")));
    }
    let ts = jiff::Timestamp::new(seconds, 0)
        .map_err(|e| ctx.invalid(format!("timestamp {seconds}s: {e}")))?;
    let whole = ts.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Value::String(if micro {
        format!("{whole}.{:06}Z", nanos / 1000)
    } else {
        format!("{whole}Z")
    }))
}
