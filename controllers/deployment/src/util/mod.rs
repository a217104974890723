//! Pure helpers of upstream `pkg/controller/deployment/util` (`deployment_util.go`, the hash of
//! `pkg/controller/controller_utils.go`, `ComputeHash`) and the ReplicaSet sort orders of `controller_utils.go`.
//!
//! Everything here is a free function over k8s-openapi types; nothing performs I/O.

pub(crate) mod annotations;
pub(crate) mod conditions;
pub(crate) mod fields;
pub(crate) mod hash;
pub(crate) mod intstr;
pub(crate) mod predicates;
pub(crate) mod replica_sets;
pub(crate) mod sizing;
pub(crate) mod spew;
mod spew_layout;
mod spew_table;
mod spew_values;
pub(crate) mod strategy;
pub(crate) mod template_equality;
