//! Pure helpers of upstream `pkg/controller/deployment/util` (`deployment_util.go`, the hash of
//! `controller_utils.go`/`pod_util.go`) and the ReplicaSet sort orders of `controller_utils.go`.
//!
//! Everything here is a free function over k8s-openapi types; nothing performs I/O.

pub mod annotations;
pub mod fields;
pub mod hash;
pub mod intstr;
pub mod predicates;
pub mod replica_sets;
pub mod sizing;
pub mod spew;
mod spew_layout;
mod spew_table;
mod spew_values;
pub mod strategy;
pub mod template_equality;

pub use annotations::*;
pub use hash::{
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, compute_hash, compute_hash_json, safe_encode_string,
};
pub use intstr::scaled_value_from_int_or_percent;
pub use predicates::*;
pub use replica_sets::*;
pub use sizing::*;
pub use strategy::*;
pub use template_equality::{TemplateMatcher, equal_ignore_hash};
