//! The resource lock behind leader election: a coordination.k8s.io/v1 Lease.
//!
//! Like client-go's `LeaseLock` (`tools/leaderelection/resourcelock/leaselock.go`), it remembers
//! the last Lease it read or wrote and updates *that* object, so every update carries the
//! resourceVersion it was based on and a concurrent writer is answered with 409 Conflict by the
//! API server.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};

/// The leader election record, as stored in a Lease's spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// Identity of the holder; empty when nobody holds the lock.
    pub holder_identity: String,
    /// How long a holder may go without renewing before others may take over, in seconds.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lock.
    pub acquire_time: Option<jiff::Timestamp>,
    /// When the current holder last renewed the lock.
    pub renew_time: Option<jiff::Timestamp>,
    /// How many times the lock changed hands.
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    /// Reads the record out of a Lease spec (missing fields read as empty, as upstream).
    pub fn from_spec(spec: &LeaseSpec) -> Self {
        LeaderElectionRecord {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// Writes the record into a Lease spec, keeping the spec's other fields.
    pub fn apply_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder_identity.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.leader_transitions);
    }
}

/// Errors from the lock; `NotFound` is told apart because it means "create the Lease".
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The Lease does not exist.
    #[error("lease {0} not found")]
    NotFound(String),
    /// Any other failure (conflict, network, server error).
    #[error("lease {name}: {source}")]
    Api {
        /// namespace/name of the Lease.
        name: String,
        /// What the client reported.
        #[source]
        source: kube::Error,
    },
    /// `update` was called before the Lease was read or created.
    #[error("lease {0} has not been read yet; get or create it first")]
    NotInitialized(String),
}

/// What leader election needs from a lock. Implemented by [`KubeLeaseLock`]; tests use a fake.
pub trait LeaseLock: Send + Sync {
    /// Reads the current record.
    fn get(&self) -> impl Future<Output = Result<LeaderElectionRecord, LockError>> + Send;
    /// Creates the lock object holding `record`.
    fn create(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// Replaces the record of the last object read or written (optimistic concurrency).
    fn update(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// This candidate's identity.
    fn identity(&self) -> &str;
    /// `namespace/name` of the lock, for logs.
    fn describe(&self) -> String;
}

/// A [`LeaseLock`] on a real coordination.k8s.io/v1 Lease.
#[derive(Debug)]
pub struct KubeLeaseLock {
    api: Api<Lease>,
    namespace: String,
    name: String,
    identity: String,
    last: parking_lot::Mutex<Option<Lease>>,
}

impl KubeLeaseLock {
    /// A lock on Lease `namespace/name` for the candidate `identity`.
    pub fn new(client: kube::Client, namespace: &str, name: &str, identity: &str) -> Self {
        KubeLeaseLock {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
            last: parking_lot::Mutex::new(None),
        }
    }

    fn api_error(&self, source: kube::Error) -> LockError {
        match &source {
            kube::Error::Api(status) if status.code == 404 => LockError::NotFound(self.describe()),
            _ => LockError::Api {
                name: self.describe(),
                source,
            },
        }
    }
}

impl LeaseLock for KubeLeaseLock {
    async fn get(&self) -> Result<LeaderElectionRecord, LockError> {
        let lease = self
            .api
            .get(&self.name)
            .await
            .map_err(|e| self.api_error(e))?;
        let record = LeaderElectionRecord::from_spec(&lease.spec.clone().unwrap_or_default());
        *self.last.lock() = Some(lease);
        Ok(record)
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        let result = self.api.create(&PostParams::default(), &lease).await;
        // Lease writes repeat every retry period: logged at -v=5 (trace), as client-go does.
        tracing::trace!(
            verb = "create", resource = "leases", object = %self.describe(),
            reason = "acquire the leader lease", ok = result.is_ok(), "API write"
        );
        let created = result.map_err(|e| self.api_error(e))?;
        *self.last.lock() = Some(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let Some(mut lease) = self.last.lock().clone() else {
            return Err(LockError::NotInitialized(self.describe()));
        };
        let mut spec = lease.spec.take().unwrap_or_default();
        record.apply_to(&mut spec);
        lease.spec = Some(spec);
        let result = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await;
        tracing::trace!(
            verb = "update", resource = "leases", object = %self.describe(),
            reason = "acquire or renew the leader lease", ok = result.is_ok(), "API write"
        );
        let updated = result.map_err(|e| self.api_error(e))?;
        *self.last.lock() = Some(updated);
        Ok(())
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}
