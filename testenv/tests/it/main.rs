//! kcm-testenv's integration tests: the spec checks (also run against kube-apiserver with `KCM_SPEC_SERVER`, see the README), kube-rs and kubectl as clients, the simulation, faults and property tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod apply_controller;
mod audit_log;
mod common;
mod crd_kube_client;
mod extras;
mod faults_conflict;
mod faults_hook;
mod faults_metrics;
mod faults_spec;
mod kube_client;
mod kube_discovery;
mod kube_metadata;
mod kubectl;
mod kubectl_protobuf;
mod layers;
mod loud_failures;
mod openapi_without_module;
mod protobuf_fuzz;
mod sim_common;
mod sim_gc;
mod sim_gc_custom;
mod sim_images;
mod sim_namespace;
mod sim_nodes;
mod sim_pods;
mod spec_apply;
mod spec_apply_builtin;
mod spec_apply_subresources;
mod spec_crd_lifecycle;
mod spec_crd_objects;
mod spec_crd_reads;
mod spec_create;
mod spec_delete;
mod spec_discovery;
mod spec_gc;
mod spec_kinds;
mod spec_kinds_behaviour;
mod spec_list;
mod spec_metadata;
mod spec_openapi;
mod spec_patch;
mod spec_unserved;
mod spec_update;
mod spec_watch;
mod storage_props;
mod strategic_patch_fuzz;
