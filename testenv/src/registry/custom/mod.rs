//! Custom resources: what kube-apiserver's apiextensions-apiserver knows, as data and pure
//! decisions. A CustomResourceDefinition is validated ([`crd_validation`],
//! [`schema_validation`]) and prepared ([`crd_strategy`]); the controllers' status updates are
//! [`naming`]'s decisions; its served versions become [`ResourceInfo`] entries
//! ([`definition`]) in the server's [`ServedResources`] ([`served`]), with discovery order from
//! [`version_order`].
//!
//! A custom resource's write path, in the order it runs: [`strategy::decode`] ([`prune`],
//! [`defaulting`] with its version's [`schema`]), the strategy's prepare, then
//! [`validate`] (kube-openapi's checks, [`formats`], [`list_type`]); [`scale`] maps the
//! `scale` subresource; [`go_format`] prints values as Go does in messages.
//!
//! [`ResourceInfo`]: crate::registry::ResourceInfo

pub mod crd_strategy;
pub mod crd_validation;
pub mod defaulting;
pub mod definition;
pub mod formats;
pub mod go_format;
pub mod list_type;
pub mod naming;
pub mod prune;
pub mod scale;
pub mod schema;
pub mod schema_validation;
pub mod served;
pub mod strategy;
pub mod validate;
pub mod version;
pub mod version_order;

pub use served::{GroupVersions, ServedResources};
pub use version::{CustomVersion, PrinterColumn, ScalePaths};
