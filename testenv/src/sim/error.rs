//! [`SimError`]: what the simulation's own API calls and its start can fail with.

use crate::env::TestEnvError;

/// Errors of the simulation's own API calls.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// An API request failed.
    #[error("{context}: {source}")]
    Api {
        /// What the simulation was doing.
        context: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The node is not one of the simulated nodes.
    #[error("unknown simulated node {0:?}")]
    UnknownNode(String),
    /// A simulation bug (an object that could not be built).
    #[error("internal simulation error: {0}")]
    Internal(String),
    /// The test API server did not start.
    #[error("starting the test API server: {0}")]
    Env(#[from] TestEnvError),
}

impl SimError {
    pub(crate) fn api(context: impl Into<String>, source: kube::Error) -> Self {
        SimError::Api {
            context: context.into(),
            source,
        }
    }
}
