//! [`Field`]: one field of a message table, and the [`Kind`] of JSON its payload becomes.

use super::msg::Msg;

/// How one field's payload is turned into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A UTF-8 string.
    String,
    /// Raw bytes, emitted base64-encoded like Go's `encoding/json` does for `[]byte`.
    Bytes,
    /// A varint read as a signed 32-bit number.
    Int32,
    /// A varint read as a signed 64-bit number.
    Int64,
    /// A varint read as a boolean.
    Bool,
    /// A nested message, emitted as a JSON object.
    Message(Msg),
    /// A nested message whose Go struct is embedded with `json:",inline"`: its fields
    /// are merged into the parent object.
    Inline(Msg),
    /// `map<string, string>`: repeated entries with key = 1, value = 2.
    MapString,
    /// `map<string, Quantity>`: repeated entries with key = 1, value = 2 (a `Quantity`).
    MapQuantity,
    /// `resource.Quantity`: `string = 1`, emitted as a JSON string.
    Quantity,
    /// `intstr.IntOrString`: `type = 1` (0 int, 1 string), `intVal = 2`, `strVal = 3`.
    IntOrString,
    /// `metav1.Time`: `seconds = 1`, `nanos = 2`, emitted as RFC 3339 with seconds precision.
    Time,
    /// `metav1.MicroTime`: like `Time`, emitted with six fractional digits.
    MicroTime,
    /// A message type this decoder has no table for (named here). Accepted only when empty.
    Unsupported(&'static str),
    /// A field that is deliberately dropped (only `ObjectMeta.managedFields`, which the
    /// server maintains itself and clients do not send on create).
    Skip,
}

/// One field of a message table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The protobuf field number.
    pub number: u32,
    /// The JSON field name (the Go `json` tag).
    pub json: &'static str,
    /// How to decode the payload.
    pub kind: Kind,
    /// `repeated` in the proto: a JSON array.
    pub repeated: bool,
    /// The Go field is a pointer, so a present zero value (`0`, `false`, `""`) is
    /// meaningful and emitted. Value-typed Go fields are always encoded by the Go
    /// marshaller, so their zero values are omitted here like `omitempty` does.
    pub pointer: bool,
}

impl Field {
    pub(super) const fn new(number: u32, json: &'static str, kind: Kind) -> Self {
        Field {
            number,
            json,
            kind,
            repeated: false,
            pointer: false,
        }
    }

    pub(super) const fn repeated(mut self) -> Self {
        self.repeated = true;
        self
    }

    pub(super) const fn pointer(mut self) -> Self {
        self.pointer = true;
        self
    }
}
