//! What the crate's unit tests of its clients and serving share: a fake API server over plain
//! HTTP that records what it is sent, and an HTTPS client to talk to the served endpoints.

pub(crate) mod fake_apiserver;
pub(crate) mod https;
