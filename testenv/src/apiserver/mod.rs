//! The API server: HTTP in, JSON out. It parses requests, runs the hook, and maps each verb to
//! a handler; the handlers apply the [`registry`](crate::registry)'s per-kind rules and read and
//! write the [`storage`](crate::storage). Nothing below this layer knows about HTTP.
//!
//! - [`server`]: [`ApiServer`], the state every handler works on; [`hook`]: the request hook.
//! - [`dispatch`]: the accept loop, request parsing, verb and route to handler.
//! - [`http`]: the shared request context ([`Ctx`](http::Ctx)), body type and responses;
//!   [`routes`]: URL → resource target.
//! - The handlers, one concept each: [`handlers`] (get, create, update, patch), [`list`],
//!   [`watch`], [`delete`], [`scale`] (`/scale` and `pods/binding`), [`apply`] (server-side
//!   apply), [`table`] (server-side printing), [`discovery`]; [`protobuf`] decodes protobuf
//!   request bodies.
//! - [`crd_controller`]: the CRD controllers kube-apiserver runs in-process (names,
//!   Established, served resources, deleting a deleted CRD's objects).
//! - [`metrics`]: request and watch-event counters (`/metrics`); [`audit`]: the audit log of
//!   the writes answered.
//!
//! Within this folder, files only import files listed before them in the dependency order
//! `http`, `routes`, `metrics`, `audit`, `hook` → `server` → `list` → `table` → `handlers`, `watch`,
//! `delete` → `scale`, `apply`, `crd_controller` → `dispatch`.

pub mod apply;
pub mod audit;
pub mod crd_controller;
pub mod delete;
pub mod discovery;
pub mod dispatch;
pub mod handlers;
pub mod hook;
pub mod http;
pub mod list;
pub mod metrics;
pub mod protobuf;
pub mod routes;
pub mod scale;
pub mod server;
pub mod table;
pub mod watch;

pub use hook::{HookDecision, RequestHook, RequestInfo};
pub use server::ApiServer;
