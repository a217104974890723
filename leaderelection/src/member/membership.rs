//! Membership of a ring of active-active replicas, on Leases (`docs/sharding.md`,
//! "Membership"; each Lease renewed as client-go's `tools/leaderelection/leaderelection.go`
//! renews a leader's).
//!
//! Every member holds a Lease of its own, `<ring>-<identity>` in the ring's namespace, labelled
//! [`RING_LABEL`]` = <ring>`, renewed every retry period like a leader's lease, and carrying in
//! the annotation [`APPLIED_RING_ANNOTATION`] the fingerprint of the ring the member has applied
//! (empty: none). Each renewal opens the member's [`WriteFence`] for the fence window, exactly
//! as the leader elector does, so a member that was paused or cut off stops writing before any
//! other member may judge it gone.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::{ConfigError, LeaderElectionConfig};
use crate::fence::WriteFence;

/// The label naming the ring a membership Lease belongs to.
pub const RING_LABEL: &str = "sharding.kcm.io/ring";
/// The annotation holding the fingerprint of the ring the member has applied.
pub const APPLIED_RING_ANNOTATION: &str = "sharding.kcm.io/applied-ring";

/// Who a member is and how it renews.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipConfig {
    /// The namespace of the ring's Leases.
    pub namespace: String,
    /// The ring's name (the label value; the prefix of the members' Lease names).
    pub ring: String,
    /// This member's identity (unique per process, e.g. `<hostname>_<uuid>`).
    pub identity: String,
    /// Lease duration, renew deadline, retry period and fence margin, as for leader election
    /// (`renew_deadline` and `release_on_cancel` are not used by a member).
    pub timing: LeaderElectionConfig,
}

impl MembershipConfig {
    /// A member of `ring` in `namespace` with kube-controller-manager's default timing.
    pub fn new(namespace: &str, ring: &str, identity: &str) -> Self {
        MembershipConfig {
            namespace: namespace.to_string(),
            ring: ring.to_string(),
            identity: identity.to_string(),
            timing: LeaderElectionConfig::default(),
        }
    }
}

/// Errors of a member's Lease operations.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    /// The configuration cannot work.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The ring name is not a valid label value.
    #[error("ring name {0:?} must be a valid label value and Lease name prefix")]
    RingName(String),
    /// An API call failed.
    #[error("membership lease {lease}: {source}")]
    Api {
        /// namespace/name of the Lease.
        lease: String,
        /// What the client reported.
        #[source]
        source: kube::Error,
    },
}

/// One member as an observer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberState {
    /// The member's identity (`spec.holderIdentity`).
    pub identity: String,
    /// Whether the observer judges it live (its Lease changed within the lease duration, by the
    /// observer's clock; for the observer itself: its fence is open).
    pub live: bool,
    /// The ring fingerprint it has acknowledged, if any.
    pub applied_ring: Option<String>,
    /// The Lease's resourceVersion.
    pub resource_version: String,
}

/// The ring's members as one list showed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MembershipView {
    /// The list's resourceVersion: views of later lists have later versions.
    pub version: String,
    /// Every member with a Lease, by identity.
    pub members: BTreeMap<String, MemberState>,
}

impl MembershipView {
    /// The members judged live, in identity order.
    pub fn live(&self) -> impl Iterator<Item = &MemberState> {
        self.members.values().filter(|m| m.live)
    }
}

/// A Lease version and when this process first saw it.
#[derive(Debug)]
struct Seen {
    resource_version: String,
    at: Instant,
    duration: Duration,
}

/// One member of a ring: its own Lease, its fence, and its judgement of the others.
///
/// A member learns the others from a list of the ring's Leases ([`Membership::observe`]).
/// Liveness is judged as client-go judges a leader's lease: by the observer's own monotonic
/// clock, a member is live until the lease duration after the instant the observer saw its
/// Lease *change* (a new resourceVersion); `renewTime` is never compared with the local clock,
/// so clock skew between machines cannot make a live member look gone. Which namespaces a
/// member owns, and the handover when the live set changes, are decided elsewhere (the ring and
/// the handover of `kcm-sharding`); this module only says who is there and what each has
/// acknowledged.
///
/// The `live` flag is that leader-election rule and nothing more. It is **not** enough to hand
/// a member's namespaces to another: an observer whose Lease watch stalls can judge a live
/// member gone by time alone (`docs/sharding.md`, "Membership", found by the handover's model checker).
/// The handover expires a member only once the observer's own later write is in its view:
/// feed the Leases to `kcm_sharding::Liveness` for that decision.
///
/// ```no_run
/// use kcm_leaderelection::{Membership, MembershipConfig};
///
/// # async fn demo(client: kube::Client) -> anyhow::Result<()> {
/// let member = Membership::new(client, MembershipConfig::new("kube-system", "kcm", "node-a_1234"))?;
/// member.renew().await?; // creates or renews this member's Lease; opens its fence
/// let view = member.observe().await?;
/// for m in view.live() {
///     println!("{} (applied ring {:?})", m.identity, m.applied_ring);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Membership {
    api: Api<Lease>,
    config: MembershipConfig,
    lease_name: String,
    fence: WriteFence,
    own: Mutex<Option<Lease>>,
    applied: Mutex<Option<String>>,
    seen: Mutex<HashMap<String, Seen>>,
}

/// A Lease name for `identity` in `ring`: DNS-1123 (lowercase alphanumerics and `-`), at most
/// 253 characters.
pub(crate) fn lease_name(ring: &str, identity: &str) -> String {
    let cleaned: String = identity
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() { c } else { '-' }
        })
        .collect();
    let mut name = format!("{ring}-{}", cleaned.trim_matches('-'));
    name.truncate(253);
    name.trim_end_matches('-').to_string()
}

fn valid_ring(ring: &str) -> bool {
    !ring.is_empty()
        && ring.len() <= 63
        && ring
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !ring.starts_with('-')
        && !ring.ends_with('-')
}

impl Membership {
    /// A member; fails on unusable timing, an empty identity or a ring name that cannot be a
    /// label value and a Lease name prefix.
    pub fn new(client: kube::Client, config: MembershipConfig) -> Result<Self, MembershipError> {
        config.timing.validate()?;
        if config.identity.is_empty() {
            return Err(ConfigError::EmptyIdentity.into());
        }
        if !valid_ring(&config.ring) {
            return Err(MembershipError::RingName(config.ring.clone()));
        }
        let lease_name = lease_name(&config.ring, &config.identity);
        let fence = WriteFence::new(format!("{}/{lease_name}", config.namespace));
        Ok(Membership {
            api: Api::namespaced(client, &config.namespace),
            config,
            lease_name,
            fence,
            own: Mutex::new(None),
            applied: Mutex::new(None),
            seen: Mutex::new(HashMap::new()),
        })
    }

    /// This member's fence: open while its Lease is renewed in time.
    pub fn fence(&self) -> WriteFence {
        self.fence.clone()
    }

    /// This member's Lease name.
    pub fn lease_name(&self) -> &str {
        &self.lease_name
    }

    /// The lease timing (duration, renew deadline, retry period, fence margin).
    pub fn timing(&self) -> &LeaderElectionConfig {
        &self.config.timing
    }

    /// This member's identity.
    pub fn identity(&self) -> &str {
        &self.config.identity
    }

    /// Records the ring this member has applied; written by the next [`renew`](Self::renew).
    pub fn set_applied_ring(&self, fingerprint: Option<String>) {
        *self.applied.lock() = fingerprint;
    }

    fn error(&self, source: kube::Error) -> MembershipError {
        MembershipError::Api {
            lease: format!("{}/{}", self.config.namespace, self.lease_name),
            source,
        }
    }

    fn desired(&self, base: Option<Lease>) -> Lease {
        let now = MicroTime(jiff::Timestamp::now());
        let mut lease = base.unwrap_or_else(|| Lease {
            metadata: ObjectMeta {
                name: Some(self.lease_name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: None,
        });
        lease
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(RING_LABEL.to_string(), self.config.ring.clone());
        lease
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                APPLIED_RING_ANNOTATION.to_string(),
                self.applied.lock().clone().unwrap_or_default(),
            );
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            spec.acquire_time = Some(now.clone());
        }
        spec.holder_identity = Some(self.config.identity.clone());
        spec.lease_duration_seconds = Some(self.config.timing.lease_duration.as_secs() as i32);
        spec.renew_time = Some(now);
        lease
    }

    /// Creates or renews this member's Lease (with the applied ring), and on success opens the
    /// fence for the window from the start of this call and returns the Lease's new
    /// `resourceVersion`. A conflict (somebody else wrote the Lease) re-reads it; the next call
    /// writes on top.
    pub async fn renew(&self) -> Result<String, MembershipError> {
        let started = Instant::now();
        let base = self.own.lock().clone();
        let result = match base {
            Some(lease) => {
                let desired = self.desired(Some(lease));
                self.api
                    .replace(&self.lease_name, &PostParams::default(), &desired)
                    .await
            }
            None => match self.api.get_opt(&self.lease_name).await {
                Ok(Some(existing)) => {
                    let desired = self.desired(Some(existing));
                    self.api
                        .replace(&self.lease_name, &PostParams::default(), &desired)
                        .await
                }
                Ok(None) => {
                    self.api
                        .create(&PostParams::default(), &self.desired(None))
                        .await
                }
                Err(e) => Err(e),
            },
        };
        tracing::trace!(lease = %self.lease_name, ok = result.is_ok(), "API write: renew membership lease");
        match result {
            Ok(written) => {
                let version = written
                    .metadata
                    .resource_version
                    .clone()
                    .unwrap_or_default();
                *self.own.lock() = Some(written);
                self.fence
                    .open_until(started + self.config.timing.fence_window());
                Ok(version)
            }
            Err(e) => {
                // Read it afresh next time (a 409: somebody wrote it; a 404: it was deleted).
                *self.own.lock() = None;
                Err(self.error(e))
            }
        }
    }

    /// Lists the ring's Leases and judges each member's liveness by this process's clock.
    pub async fn observe(&self) -> Result<MembershipView, MembershipError> {
        let selector = format!("{RING_LABEL}={}", self.config.ring);
        let list = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| self.error(e))?;
        let now = Instant::now();
        let mut seen = self.seen.lock();
        let mut members = BTreeMap::new();
        for lease in list.items {
            let Some(spec) = lease.spec.as_ref() else {
                continue;
            };
            let identity = spec.holder_identity.clone().unwrap_or_default();
            if identity.is_empty() {
                continue;
            }
            let resource_version = lease.metadata.resource_version.clone().unwrap_or_default();
            let duration =
                Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64);
            let entry = seen.entry(identity.clone()).or_insert_with(|| Seen {
                resource_version: resource_version.clone(),
                at: now,
                duration,
            });
            if entry.resource_version != resource_version {
                *entry = Seen {
                    resource_version: resource_version.clone(),
                    at: now,
                    duration,
                };
            }
            let live = if identity == self.config.identity {
                self.fence.is_open()
            } else {
                now < entry.at + entry.duration
            };
            let applied_ring = lease
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(APPLIED_RING_ANNOTATION))
                .filter(|f| !f.is_empty())
                .cloned();
            members.insert(
                identity.clone(),
                MemberState {
                    identity,
                    live,
                    applied_ring,
                    resource_version,
                },
            );
        }
        seen.retain(|identity, _| members.contains_key(identity));
        Ok(MembershipView {
            version: list.metadata.resource_version.unwrap_or_default(),
            members,
        })
    }

    /// Leaves the ring: the fence closed first, then this member's Lease deleted. Call it only
    /// once every write of the member has finished.
    pub async fn leave(&self) -> Result<(), MembershipError> {
        self.fence.close();
        *self.own.lock() = None;
        match self
            .api
            .delete(&self.lease_name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(self.error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_names_are_dns_labels_of_ring_and_identity() {
        assert_eq!(
            lease_name("kcm", "vm_0c6972fe-A3D1"),
            "kcm-vm-0c6972fe-a3d1"
        );
        assert_eq!(lease_name("kcm", "__x__"), "kcm-x");
        let long = "a".repeat(400);
        assert_eq!(lease_name("kcm", &long).len(), 253);
        assert!(valid_ring("kcm-shards"));
        for bad in ["", "-kcm", "kcm-", "Kcm", "kcm.io", &"k".repeat(64)] {
            assert!(!valid_ring(bad), "{bad:?}");
        }
    }
}
