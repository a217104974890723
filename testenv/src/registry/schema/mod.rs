//! The schemas of Kubernetes' built-in types, from upstream's own API definitions: every
//! definition of k8s.io/kubernetes v1.37's OpenAPI v3 documents (`api/openapi-spec/v3`),
//! descriptions left out, generated into `definitions.rs` by `cargo xtask upstream gen-testenv`
//! and parsed on first use (starting a server parses nothing).
//!
//! - [`catalog()`]: the built-in [`Catalog`]. Look a kind up by group-version-kind
//!   ([`Catalog::kind`]) or a definition by name ([`Catalog::definition`]); both give a
//!   [`Node`]. [`Catalog::raw`] is a definition's JSON as upstream writes it (for serving
//!   OpenAPI documents), [`Catalog::closure`] the definitions a set of types references.
//! - [`Node`]: a place in a type, with `$ref`s followed. Go down with
//!   [`property`](Node::property), [`items`](Node::items), [`values`](Node::values) (or
//!   [`child`](Node::child) by key); [`shape`](Node::shape) says what a value there is
//!   (struct, map, list, scalar, `IntOrString`, `Quantity`, free-form); the use-site keywords
//!   come first in [`default`](Node::default), [`list_type`](Node::list_type),
//!   [`list_map_keys`](Node::list_map_keys), [`map_type`](Node::map_type),
//!   [`patch_strategy`](Node::patch_strategy) and [`patch_merge_key`](Node::patch_merge_key)
//!   (server-side apply and strategic merge read these);
//!   [`definition`](Node::definition) / [`type_name`](Node::type_name) name the Go type a value
//!   has (defaulters are chosen by it).
//! - [`visit_mut`]: walk a value with its schema, parents first, each value with its node and
//!   [`Path`] (printed as upstream's `field.Path`).
//! - [`GoField`] ([`Node::go_field`]): what upstream's Go type says of a struct field beyond the
//!   OpenAPI (its type as decode errors name it, pointer or not, `omitempty`), from the Go
//!   declarations in `go_fields.rs`.
//! - [`Schema`]: one parsed node, every keyword and `x-kubernetes-*` extension;
//!   [`Schema::from_json`] also reads a CustomResourceDefinition's `openAPIV3Schema`, and
//!   [`Catalog::from_definitions`] any `components.schemas` map.
//!
//! ```
//! use kcm_testenv::registry::schema::{ListType, Shape, catalog};
//!
//! let deployment = catalog().kind("apps", "v1", "Deployment").unwrap();
//! let containers = deployment
//!     .property("spec")
//!     .and_then(|s| s.property("template"))
//!     .and_then(|t| t.property("spec"))
//!     .and_then(|s| s.property("containers"))
//!     .unwrap();
//! assert_eq!(containers.shape(), Shape::List);
//! assert_eq!(containers.list_type(), Some(ListType::Map));
//! assert_eq!(containers.list_map_keys(), ["name"]);
//! assert_eq!(containers.items().unwrap().type_name(), Some("Container"));
//! ```

mod catalog;
mod definitions;
mod go_field;
mod go_fields;
mod model;
mod node;
mod walk;

pub use catalog::{Catalog, catalog};
pub use go_field::{GoField, GoKind, Omit, go_field, go_field_by_proto};
pub use model::{Gvk, ListType, MapType, REF_PREFIX, Schema, Type};
pub use node::{Node, QUANTITY, Shape};
pub use walk::{Path, Step, visit_mut};
