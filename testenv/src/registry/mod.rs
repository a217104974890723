//! What the API server knows about each kind, independent of HTTP and of storage: the table of
//! served resources, and the per-kind rules every write goes through (upstream's
//! `pkg/registry/<group>/<kind>/strategy.go` plus the API types' defaulting and validation).
//!
//! - [`resources`]: the served resources and their storage buckets ([`StorageId`]); the
//!   built-in table is generated from kube-apiserver's discovery (`builtin.rs`).
//! - [`schema`]: the built-in types' schemas, from upstream's OpenAPI; [`decode`]: request
//!   bodies of kinds without special code decoded with them.
//! - The write path, in the order it runs: [`defaults`] (with [`quantity`] canonical forms),
//!   [`strategy`] (system fields, generation, status separation), [`validation`].
//! - [`patch`]: JSON, merge and strategic merge patches; [`events_v1`]: the events.k8s.io/v1
//!   view of core Events; [`field_selector`]: the field labels each kind serves.
//! - [`custom`]: custom resources (CRD validation, served versions, schema pruning,
//!   defaulting and validation); [`view`]: objects as seen through the requested resource.
//! - [`apply`]: server-side apply and field ownership (structured-merge-diff and the field
//!   manager).
//! - [`api_status`]: errors as metav1 `Status` objects with upstream's reasons and texts;
//!   [`meta`]: object metadata accessors.
//!
//! This is the bottom layer: it imports neither [`storage`](crate::storage) nor
//! [`apiserver`](crate::apiserver).

pub mod api_status;
pub mod apply;
pub mod bootstrap;
#[rustfmt::skip]
mod bootstrap_objects;
pub mod convert;
#[rustfmt::skip]
mod builtin;
pub mod custom;
pub mod decode;
pub mod defaults;
pub mod events_v1;
pub mod field_selector;
pub mod go_json;
pub mod kind_strategy;
pub mod label_selector;
pub mod meta;
pub mod patch;
pub mod quantity;
mod resource_info;
pub mod resources;
pub mod schema;
pub mod strategy;
pub mod validation;
pub mod view;

pub use custom::{CustomVersion, GroupVersions, ServedResources};
pub use resources::{
    GROUPS, GroupInfo, RESOURCES, ResourceInfo, STORAGE_COUNT, StorageId, SubresourceInfo, find,
    for_storage, namespaced_buckets,
};
