//! A reader for the protobuf wire format (varint, 64-bit, length-delimited, 32-bit).
//!
//! Every read is bounds-checked: malformed or truncated input yields a [`ProtoError`],
//! never a panic. [`ProtoError`] is defined here, at the bottom, for the decoder above too.

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The body does not start with `k8s\0`.
    #[error("protobuf body does not start with the Kubernetes magic bytes \"k8s\\x00\"")]
    BadMagic,
    /// The data ends inside a field.
    #[error("truncated protobuf data at byte {offset}")]
    Truncated {
        /// Byte offset within the message being read.
        offset: usize,
    },
    /// A varint longer than ten bytes or overflowing 64 bits.
    #[error("malformed varint at byte {offset}")]
    BadVarint {
        /// Byte offset within the message being read.
        offset: usize,
    },
    /// A wire type that does not exist or is a (deprecated) group marker.
    #[error("unsupported protobuf wire type {wire_type} at byte {offset}")]
    BadWireType {
        /// The wire type bits.
        wire_type: u8,
        /// Byte offset within the message being read.
        offset: usize,
    },
    /// A field key with field number 0 or above 2^32.
    #[error("invalid protobuf field number at byte {offset}")]
    BadFieldNumber {
        /// Byte offset within the message being read.
        offset: usize,
    },
    /// A known field arrived with a wire type its kind cannot have.
    #[error("{message}.{field}: unexpected protobuf wire type {wire_type:?}")]
    WrongWireType {
        /// The message name.
        message: &'static str,
        /// The JSON field name.
        field: &'static str,
        /// The wire type that arrived.
        wire_type: WireType,
    },
    /// A string field holding invalid UTF-8.
    #[error("{message}.{field}: string is not valid UTF-8")]
    InvalidUtf8 {
        /// The message name.
        message: &'static str,
        /// The JSON field name.
        field: &'static str,
    },
    /// A value out of range (a timestamp outside what RFC 3339 can express).
    #[error("{message}.{field}: {detail}")]
    InvalidValue {
        /// The message name.
        message: &'static str,
        /// The JSON field name.
        field: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// Valid protobuf that this decoder does not understand (a kind, field or message type
    /// without a table). The text names what is unsupported.
    #[error("unsupported protobuf content: {0}")]
    Unsupported(String),
}

/// The wire type of a field, from the low three bits of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    /// 0: a base-128 varint (int32, int64, bool, enum).
    Varint,
    /// 1: eight little-endian bytes (fixed64, double).
    Fixed64,
    /// 2: a varint length followed by that many bytes (string, bytes, message, packed).
    Len,
    /// 5: four little-endian bytes (fixed32, float).
    Fixed32,
}

impl WireType {
    fn from_bits(bits: u64, offset: usize) -> Result<Self, ProtoError> {
        match bits {
            0 => Ok(WireType::Varint),
            1 => Ok(WireType::Fixed64),
            2 => Ok(WireType::Len),
            5 => Ok(WireType::Fixed32),
            // 3 and 4 are the deprecated group markers, 6 and 7 do not exist.
            other => Err(ProtoError::BadWireType {
                wire_type: other as u8,
                offset,
            }),
        }
    }
}

/// One decoded field: its number and its still-encoded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// A varint, as the raw unsigned 64-bit value.
    Varint(u64),
    /// A fixed 64-bit value.
    Fixed64(u64),
    /// The payload of a length-delimited field.
    Len(&'a [u8]),
    /// A fixed 32-bit value.
    Fixed32(u32),
}

impl Value<'_> {
    /// The wire type this value was read with.
    pub fn wire_type(&self) -> WireType {
        match self {
            Value::Varint(_) => WireType::Varint,
            Value::Fixed64(_) => WireType::Fixed64,
            Value::Len(_) => WireType::Len,
            Value::Fixed32(_) => WireType::Fixed32,
        }
    }
}

/// Iterates the fields of one encoded message.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader over one message's bytes.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// True once every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads a base-128 varint (at most ten bytes).
    pub fn varint(&mut self) -> Result<u64, ProtoError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..10 {
            let byte = *self
                .buf
                .get(self.pos)
                .ok_or(ProtoError::Truncated { offset: self.pos })?;
            self.pos += 1;
            // The tenth byte may only contribute the top bit of a u64.
            if i == 9 && byte > 1 {
                return Err(ProtoError::BadVarint { offset: start });
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::BadVarint { offset: start })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|end| *end <= self.buf.len())
            .ok_or(ProtoError::Truncated { offset: self.pos })?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// Reads the next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, ProtoError> {
        if self.is_empty() {
            return Ok(None);
        }
        let key_offset = self.pos;
        let key = self.varint()?;
        let wire_type = WireType::from_bits(key & 7, key_offset)?;
        let number = u32::try_from(key >> 3)
            .ok()
            .filter(|n| *n != 0)
            .ok_or(ProtoError::BadFieldNumber { offset: key_offset })?;
        let value = match wire_type {
            WireType::Varint => Value::Varint(self.varint()?),
            WireType::Fixed64 => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Value::Fixed64(u64::from_le_bytes(a))
            }
            WireType::Fixed32 => {
                let b = self.take(4)?;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                Value::Fixed32(u32::from_le_bytes(a))
            }
            WireType::Len => {
                let len_offset = self.pos;
                let len = usize::try_from(self.varint()?)
                    .map_err(|_| ProtoError::Truncated { offset: len_offset })?;
                Value::Len(self.take(len)?)
            }
        };
        Ok(Some((number, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_table() {
        let cases: &[(&[u8], Result<u64, ProtoError>)] = &[
            (&[0x00], Ok(0)),
            (&[0x01], Ok(1)),
            (&[0xac, 0x02], Ok(300)),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                Ok(u64::MAX),
            ),
            (&[0x80], Err(ProtoError::Truncated { offset: 1 })),
            (&[], Err(ProtoError::Truncated { offset: 0 })),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                Err(ProtoError::BadVarint { offset: 0 }),
            ),
            (
                &[
                    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
                ],
                Err(ProtoError::BadVarint { offset: 0 }),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(&Reader::new(bytes).varint(), want, "{bytes:?}");
        }
    }

    #[test]
    fn fields_of_every_wire_type() {
        // field 1 varint 150, field 2 fixed64, field 3 len "hi", field 4 fixed32
        let bytes = [
            0x08, 0x96, 0x01, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x02, b'h', b'i', 0x25, 2, 0, 0,
            0,
        ];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.next_field(), Ok(Some((1, Value::Varint(150)))));
        assert_eq!(r.next_field(), Ok(Some((2, Value::Fixed64(1)))));
        assert_eq!(r.next_field(), Ok(Some((3, Value::Len(b"hi")))));
        assert_eq!(r.next_field(), Ok(Some((4, Value::Fixed32(2)))));
        assert_eq!(r.next_field(), Ok(None));
    }

    #[test]
    fn malformed_fields_are_errors() {
        let cases: &[(&str, &[u8], ProtoError)] = &[
            (
                "group start",
                &[0x0b],
                ProtoError::BadWireType {
                    wire_type: 3,
                    offset: 0,
                },
            ),
            (
                "wire type 7",
                &[0x0f],
                ProtoError::BadWireType {
                    wire_type: 7,
                    offset: 0,
                },
            ),
            (
                "field number 0",
                &[0x02, 0x00],
                ProtoError::BadFieldNumber { offset: 0 },
            ),
            (
                "length past end",
                &[0x0a, 0x05, b'a'],
                ProtoError::Truncated { offset: 2 },
            ),
            (
                "huge length",
                &[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f],
                ProtoError::Truncated { offset: 6 },
            ),
            (
                "short fixed64",
                &[0x09, 1, 2],
                ProtoError::Truncated { offset: 1 },
            ),
            (
                "short fixed32",
                &[0x0d, 1],
                ProtoError::Truncated { offset: 1 },
            ),
            (
                "missing value",
                &[0x08],
                ProtoError::Truncated { offset: 1 },
            ),
        ];
        for (name, bytes, want) in cases {
            assert_eq!(
                Reader::new(bytes).next_field().as_ref(),
                Err(want),
                "{name}"
            );
        }
    }
}
