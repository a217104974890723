//! Server-side apply and field ownership: upstream's structured-merge-diff
//! (`sigs.k8s.io/structured-merge-diff/v6`) and the field manager kube-apiserver builds on it
//! (`k8s.io/apimachinery/pkg/util/managedfields`), as pure functions over JSON values.
//!
//! Bottom up:
//!
//! - [`value`], [`path`], [`set`]: values as the engine orders them, field paths, and sets of
//!   paths with their algebra; [`fields_v1`]: the `FieldsV1` encoding of a set.
//! - [`schema`]: the types the engine asks about (scalar, map, list; atomic or granular;
//!   sets and map lists), resolved through a [`TypeResolver`]; [`convert`] turns OpenAPI
//!   schemas into them, for OpenAPI definitions ([`openapi_types`]; [`meta_types`] has
//!   ObjectMeta and Scale) and custom resources' structural schemas ([`crd_types`]).
//! - [`typed`]: the walks over an object and its type (validate, field set, merge, compare,
//!   remove, reconcile).
//! - [`updater`]: ownership through updates and applies, with [`conflict`]s.
//! - [`managed_fields`]: `metadata.managedFields` read and written; [`field_manager`]: the
//!   chain kube-apiserver runs per write (`before-first-apply`, the cap on update managers,
//!   times, stripped metadata, [`last_applied`] for kubectl); [`endpoint`]: what it needs
//!   from the registry per resource (types, reset fields) and the tracking of a write;
//!   [`scale`]: managers through the `scale` subresource.
//!
//! [`TypeResolver`]: schema::TypeResolver

pub mod conflict;
pub mod convert;
pub mod crd_types;
pub mod endpoint;
pub mod field_manager;
pub mod fields_v1;
pub mod last_applied;
pub mod managed_fields;
pub mod meta_types;
pub mod openapi_types;
pub mod path;
pub mod scale;
pub mod schema;
pub mod set;
pub mod typed;
pub mod updater;
pub mod value;

#[cfg(test)]
mod test_types;

pub use field_manager::{ApplyError, FieldManager};
pub use schema::{TypeResolver, TypedSchema};
pub use set::Set;
#[cfg(test)]
mod field_manager_cases;
#[cfg(test)]
mod updater_cases;
#[cfg(test)]
mod updater_cases_owners;
