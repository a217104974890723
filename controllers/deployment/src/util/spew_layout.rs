//! The Go type layout the go-spew replay of [`spew`](super::spew) walks: the types of the
//! generated `spew_table`.

/// One Go type of the table.
#[derive(Debug)]
pub(crate) struct GoType {
    /// The name `reflect.Type.String()` gives, for example `*v1.SecurityContext`.
    pub(crate) name: &'static str,
    /// How the type's JSON form maps to its Go value.
    pub(crate) json: Json,
    /// The Go kind, with the table indexes of element, key and field types.
    pub(crate) kind: Kind,
}

/// The JSON form of a Go type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Json {
    /// The JSON mirrors the Go layout (struct fields under their JSON keys).
    Plain,
    /// A quantity string (`"500m"`), parsed as `resource.ParseQuantity` does.
    Quantity,
    /// A JSON number or string.
    IntOrString,
    /// An RFC 3339 timestamp or null.
    Time,
    /// Any JSON value, kept by Go as its raw bytes.
    FieldsV1,
}

/// A Go kind with its component types (indexes into the table).
#[derive(Debug)]
pub(crate) enum Kind {
    /// `bool`.
    Bool,
    /// Any signed integer type.
    Int,
    /// Any unsigned integer type.
    Uint,
    /// `string` and named string types.
    String,
    /// A pointer to the element type.
    Ptr(usize),
    /// A slice of the element type.
    Slice(usize),
    /// A map from the key type to the value type. The key is always of kind string, so the
    /// replay never reads its type; the generated table records it all the same.
    Map(#[allow(dead_code)] usize, usize),
    /// A struct with its fields in declaration order.
    Struct(&'static [Field]),
}

/// One struct field.
#[derive(Debug)]
pub(crate) struct Field {
    /// The Go field name spew prints.
    pub(crate) name: &'static str,
    /// The JSON key; `""` for an embedded struct whose fields are inlined in the parent object,
    /// `"-"` for a field JSON never carries.
    pub(crate) key: &'static str,
    /// The field's type.
    pub(crate) ty: usize,
}
