//! The collector's REST mapper: an owner reference's `apiVersion` and `kind` to a resource, from
//! discovery (upstream's deferred discovery REST mapper as `garbagecollector.go` and
//! `operations.go` use it): reset when discovery changes, and read again once on a miss, so
//! that the kind of a new CustomResourceDefinition maps as soon as it is served.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;

use super::super::discovery::{Discovery, Resource};

/// How long after a read a miss does not read discovery again.
const FRESH_FOR: Duration = Duration::from_millis(500);

/// No resource serves this `apiVersion` and `kind` (upstream `restMappingError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to get REST mapping for {api_version}/{kind}.")]
pub(crate) struct RestMappingError {
    pub api_version: String,
    pub kind: String,
}

/// Discovery as last read, shared by the collector's workers.
pub(crate) struct RestMapper {
    client: kube::Client,
    discovery: RwLock<Arc<Discovery>>,
    read_at: Mutex<Option<Instant>>,
}

impl RestMapper {
    pub(crate) fn new(client: kube::Client) -> Self {
        RestMapper {
            client,
            discovery: RwLock::new(Arc::new(Discovery::default())),
            read_at: Mutex::new(None),
        }
    }

    /// Replace the discovery the mapper uses (upstream `restMapper.Reset`).
    pub(crate) fn reset(&self, discovery: Arc<Discovery>) {
        *self.discovery.write() = discovery;
        *self.read_at.lock() = Some(Instant::now());
    }

    /// The resource of `kind` in `api_version`, reading discovery again once if it is not known.
    pub(crate) async fn mapping(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Resource, RestMappingError> {
        if let Some(r) = self.discovery.read().mapping(api_version, kind) {
            return Ok(r);
        }
        let stale = self.read_at.lock().is_none_or(|t| t.elapsed() >= FRESH_FOR);
        if stale {
            match Discovery::fetch(&self.client).await {
                Ok(d) => self.reset(Arc::new(d)),
                Err(e) => tracing::debug!(error = %e, "sim gc: discovery failed"),
            }
        }
        self.discovery
            .read()
            .mapping(api_version, kind)
            .ok_or_else(|| RestMappingError {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
            })
    }
}
