//! The types the merge engine asks about (structured-merge-diff's `schema/elements.go`): each
//! node of an object is a scalar, a map (a struct with named fields and/or a map with one
//! element type; granular or atomic) or a list (atomic, or associative: a set when it has no
//! keys, a map list when it has), or an untyped node that is any of the three and decides by
//! the value it holds. Types are inline or named; a [`TypeResolver`] turns names into types,
//! which is all an adapter has to provide: [`crd_types`](super::crd_types) for a custom
//! resource's structural schema, [`openapi_types`](super::openapi_types) for OpenAPI
//! definitions. The two deduced types (upstream's `DeducedParseableType`) are built in.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

/// The kinds of scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// Integers and floats.
    Numeric,
    /// Strings.
    String,
    /// Booleans.
    Boolean,
    /// Any scalar.
    Untyped,
}

/// A relationship that overrides a named type's own (`x-kubernetes-map-type` on a reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relationship {
    /// The node is replaced and owned as a whole.
    Atomic,
    /// The node's parts are merged and owned one by one.
    Granular,
}

/// A reference to a type: by name, or inline.
#[derive(Debug, Clone)]
pub enum TypeRef {
    /// A named type, maybe with its relationship overridden.
    Named(Arc<str>, Option<Relationship>),
    /// A type given in place.
    Inline(Arc<Atom>),
}

impl TypeRef {
    /// A reference to a named type.
    pub fn named(name: &str) -> Self {
        TypeRef::Named(Arc::from(name), None)
    }

    /// An inline type.
    pub fn inline(atom: Atom) -> Self {
        TypeRef::Inline(Arc::new(atom))
    }
}

/// A map or struct type.
#[derive(Debug, Clone, Default)]
pub struct MapType {
    /// The named fields (a struct's properties).
    pub fields: BTreeMap<String, Field>,
    /// The type of every other key; `None` when other keys are not allowed.
    pub element: Option<TypeRef>,
    /// Whether the map is atomic (`x-kubernetes-map-type: atomic`).
    pub atomic: bool,
}

/// A named field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its type.
    pub ty: TypeRef,
    /// Its default, used for map-list keys an item leaves out.
    pub default: Option<Value>,
}

/// A list type.
#[derive(Debug, Clone)]
pub struct ListType {
    /// The type of the items.
    pub element: TypeRef,
    /// Whether the list is atomic; otherwise it is associative (a set or a map list).
    pub atomic: bool,
    /// The key fields of a map list (empty for a set).
    pub keys: Vec<String>,
}

/// What a node may be: any combination of a scalar, a list and a map (untyped nodes have all
/// three and pick by the value).
#[derive(Debug, Clone, Default)]
pub struct Atom {
    /// The node as a scalar.
    pub scalar: Option<Scalar>,
    /// The node as a list.
    pub list: Option<Arc<ListType>>,
    /// The node as a map.
    pub map: Option<Arc<MapType>>,
}

impl Atom {
    /// A scalar node.
    pub fn scalar(s: Scalar) -> Self {
        Atom {
            scalar: Some(s),
            ..Atom::default()
        }
    }

    /// A map node.
    pub fn map(m: MapType) -> Self {
        Atom {
            map: Some(Arc::new(m)),
            ..Atom::default()
        }
    }

    /// A list node.
    pub fn list(l: ListType) -> Self {
        Atom {
            list: Some(Arc::new(l)),
            ..Atom::default()
        }
    }

    /// The part of the atom that matches the value's kind (upstream's `deduceAtom`): a
    /// scalar value sees only the scalar, a list only the list, a map only the map; a missing
    /// or null value, or one of a kind the atom does not have, sees the whole atom.
    pub fn deduce(&self, v: Option<&Value>) -> Atom {
        match v {
            Some(Value::Number(_) | Value::String(_) | Value::Bool(_)) if self.scalar.is_some() => {
                Atom {
                    scalar: self.scalar,
                    ..Atom::default()
                }
            }
            Some(Value::Array(_)) if self.list.is_some() => Atom {
                list: self.list.clone(),
                ..Atom::default()
            },
            Some(Value::Object(_)) if self.map.is_some() => Atom {
                map: self.map.clone(),
                ..Atom::default()
            },
            _ => self.clone(),
        }
    }

    /// Whether two atoms deduced from the same type have the same parts.
    pub fn same_shape(&self, other: &Atom) -> bool {
        self.scalar.is_some() == other.scalar.is_some()
            && self.list.is_some() == other.list.is_some()
            && self.map.is_some() == other.map.is_some()
    }
}

/// Turns type names into types. Adapters implement only this.
pub trait TypeResolver: Send + Sync {
    /// The named type, or `None` when the name is unknown.
    fn resolve_named(&self, name: &str) -> Option<Atom>;
}

/// The name of the untyped type whose lists and maps are atomic.
pub const UNTYPED_ATOMIC: &str = "__untyped_atomic_";
/// The name of the untyped type whose maps are granular (and lists atomic): how fields are
/// tracked when no schema is known.
pub const UNTYPED_DEDUCED: &str = "__untyped_deduced_";

fn untyped(map_atomic: bool, map_element: &str) -> Atom {
    Atom {
        scalar: Some(Scalar::Untyped),
        list: Some(Arc::new(ListType {
            element: TypeRef::named(UNTYPED_ATOMIC),
            atomic: true,
            keys: Vec::new(),
        })),
        map: Some(Arc::new(MapType {
            fields: BTreeMap::new(),
            element: Some(TypeRef::named(map_element)),
            atomic: map_atomic,
        })),
    }
}

/// A resolver that knows no names (the deduced types are still known).
struct NoNames;

impl TypeResolver for NoNames {
    fn resolve_named(&self, _: &str) -> Option<Atom> {
        None
    }
}

/// A type system (a resolver) and the type of the objects it describes.
#[derive(Clone)]
pub struct TypedSchema {
    resolver: Arc<dyn TypeResolver>,
    root: TypeRef,
}

impl std::fmt::Debug for TypedSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedSchema")
            .field("root", &self.root)
            .finish()
    }
}

impl TypedSchema {
    /// Objects of type `root`, with names resolved by `resolver`.
    pub fn new(resolver: Arc<dyn TypeResolver>, root: TypeRef) -> Self {
        TypedSchema { resolver, root }
    }

    /// Objects with no known schema: maps granular, lists atomic (upstream's
    /// `DeducedParseableType`).
    pub fn deduced() -> Self {
        TypedSchema::new(Arc::new(NoNames), TypeRef::named(UNTYPED_DEDUCED))
    }

    /// The type of the objects.
    pub fn root(&self) -> &TypeRef {
        &self.root
    }

    /// What a reference stands for; `None` when a name is unknown, or when an override
    /// names a scalar.
    pub fn resolve(&self, tr: &TypeRef) -> Option<Atom> {
        match tr {
            TypeRef::Inline(a) => Some((**a).clone()),
            TypeRef::Named(name, over) => {
                let atom = match &**name {
                    UNTYPED_ATOMIC => untyped(true, UNTYPED_ATOMIC),
                    UNTYPED_DEDUCED => untyped(false, UNTYPED_DEDUCED),
                    other => self.resolver.resolve_named(other)?,
                };
                match over {
                    None => Some(atom),
                    Some(rel) => override_relationship(atom, *rel),
                }
            }
        }
    }
}

/// The atom with its map's relationship (or, without a map, its list's) overridden.
fn override_relationship(mut atom: Atom, rel: Relationship) -> Option<Atom> {
    let atomic = rel == Relationship::Atomic;
    if let Some(m) = &atom.map {
        let mut m = (**m).clone();
        m.atomic = atomic;
        atom.map = Some(Arc::new(m));
        return Some(atom);
    }
    if let Some(l) = &atom.list {
        let mut l = (**l).clone();
        l.atomic = atomic;
        atom.list = Some(Arc::new(l));
        return Some(atom);
    }
    None
}

/// Whether a map type is the deduced untyped map (reconciliation leaves it alone).
pub fn is_untyped_deduced_map(m: &MapType) -> bool {
    m.fields.is_empty()
        && match &m.element {
            Some(TypeRef::Named(n, _)) => &**n == UNTYPED_DEDUCED,
            Some(TypeRef::Inline(a)) => a.scalar == Some(Scalar::Untyped),
            None => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deduced_types_pick_by_value() {
        let s = TypedSchema::deduced();
        let a = s.resolve(s.root()).expect("deduced type resolves");
        assert!(a.scalar.is_some() && a.list.is_some() && a.map.is_some());
        let m = a.deduce(Some(&json!({"a": 1})));
        assert!(m.map.is_some() && m.scalar.is_none() && m.list.is_none());
        assert!(!m.map.as_ref().is_some_and(|m| m.atomic));
        let l = a.deduce(Some(&json!([1])));
        assert!(l.list.as_ref().is_some_and(|l| l.atomic));
        assert!(a.deduce(Some(&json!(null))).same_shape(&a));
        assert!(!m.same_shape(&l));
        // the atomic untyped type's maps are atomic too
        let atomic = s
            .resolve(&TypeRef::named(UNTYPED_ATOMIC))
            .expect("resolves");
        assert!(atomic.map.is_some_and(|m| m.atomic));
        assert!(s.resolve(&TypeRef::named("io.k8s.Unknown")).is_none());
    }
}
