//! The API server: HTTP in, JSON out. It parses requests, runs the hook, and maps each verb to
//! a handler; the handlers apply the [`registry`](crate::registry)'s per-kind rules and read and
//! write the [`storage`](crate::storage). Nothing below this layer knows about HTTP.
//!
//! - [`server`]: [`ApiServer`], the state every handler works on; [`hook`]: the request hook.
//! - [`dispatch`]: the accept loop, request parsing, verb and route to handler.
//! - [`http`]: the shared request context ([`Ctx`](http::Ctx)), body type and responses;
//!   [`routes`]: URL → resource target.
//! - What a client asked for and gets: [`negotiate`] (the `Accept` header: media type and
//!   conversion), [`restful`] (go-restful's route-level 405/406), [`output`] (answers in the
//!   negotiated form), [`metadata_view`] (`PartialObjectMetadata(List)`), [`unserved`] (the
//!   warning logged for every request kcm-testenv does not serve).
//! - The handlers, one concept each: [`handlers`] (get, create, update, patch), [`list`],
//!   [`watch`], [`delete`], [`scale`] (`/scale` and `pods/binding`), [`apply`] (server-side
//!   apply), [`table`] (server-side printing), [`discovery`] (legacy),
//!   [`aggregated_discovery`], [`openapi`] (`/openapi/v2` and `/openapi/v3`); [`protobuf`]
//!   decodes protobuf request bodies.
//! - [`crd_controller`]: the CRD controllers kube-apiserver runs in-process (names,
//!   Established, served resources, deleting a deleted CRD's objects).
//! - [`metrics`]: request and watch-event counters (`/metrics`); [`audit`]: the audit log of
//!   the writes answered.
//!
//! Within this folder, files only import files listed before them in the dependency order
//! `negotiate`, `restful`, `unserved`, `metadata_view` → `http`, `routes`, `metrics`, `audit`,
//! `hook` → `output`, `aggregated_discovery` → `server` → `openapi`, `list` → `table` →
//! `handlers`, `watch`, `delete` → `scale`, `apply`, `crd_controller` → `dispatch`.

pub mod aggregated_discovery;
pub mod apply;
pub mod audit;
pub mod cluster_objects;
pub mod crd_controller;
pub mod delete;
pub mod discovery;
pub mod dispatch;
pub mod eviction;
pub mod handlers;
pub mod hook;
pub mod http;
pub mod list;
pub mod metadata_view;
pub mod metrics;
pub mod negotiate;
pub mod openapi;
pub mod output;
pub mod protobuf;
pub mod restful;
pub mod reviews;
pub mod routes;
pub mod scale;
pub mod server;
pub mod services;
pub mod table;
pub mod tokens;
pub mod unserved;
pub mod watch;

pub use hook::{HookDecision, RequestHook, RequestInfo};
pub use server::ApiServer;
