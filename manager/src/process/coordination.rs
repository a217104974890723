//! Who runs the controllers, and when: alone (`--leader-elect=false`), the elected leader of
//! `--leader-elect-resource-name` (client-go's `tools/leaderelection`, as
//! kube-controller-manager elects), or a member of the `--sharding=namespace` ring on its shard
//! of the namespaces ([`crate::sharding`]). Each puts its write fence on the controllers'
//! clients before they are built; at exit a member leaves the ring, and a leader with
//! `ControllerManagerReleaseLeaderElectionLockOnExit` gives its Lease up, each only once the
//! controllers have stopped writing.

use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use kcm_controller::NamespaceGate;
use kcm_informer::{InformerFactory, ReflectorConfig};
use kcm_leaderelection::{
    FenceLayer, KubeLeaseLock, LeaderElectionConfig, LeaderElector, MAX_TOLERABLE_EXPIRED_LEASE,
};

use super::Exit;
use crate::client::ClientFactory;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::serving::{Endpoints, Probe};
use crate::sharding::Sharding;

/// How this process and its replicas divide the work.
pub(super) enum Coordination {
    /// No leader election: this process runs every controller.
    Alone,
    /// The leader of a Lease runs every controller.
    Leader {
        /// The elector, renewing the Lease.
        elector: Arc<LeaderElector<KubeLeaseLock>>,
        /// The Lease's name (the `name` label of the leader metrics).
        lease: String,
    },
    /// A member of the ring runs the controllers on its shard.
    Member(Sharding),
}

/// The member's renewals, running until the controllers have stopped.
pub(super) struct MemberTask {
    task: JoinHandle<()>,
    stop: CancellationToken,
}

/// What becomes of the Lease when the process ends.
#[derive(Debug, PartialEq, Eq)]
enum LeaseAtExit {
    /// It stays as it is (the gate is off, or the lease was lost: nothing to give up).
    Kept,
    /// Given up now: every write has finished.
    Released,
    /// It stays, with a warning: controllers that did not stop in time may still write.
    KeptWhileWriting,
}

/// A unique candidate identity: `<hostname>_<uuid>`, as kube-controller-manager's.
fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "kcm".to_string());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// The exit once leadership ended: `lost` when the lease was lost rather than the process
/// stopped. Upstream exits 1 on a lost lease, or 0 with the release gate on.
fn exit_after_leading(lost: bool, release_on_exit: bool) -> Exit {
    if lost && !release_on_exit {
        Exit::LeaderElectionLost
    } else {
        Exit::Stopped
    }
}

/// What becomes of the Lease: given up only with the gate on, when the process was stopped (not
/// when the lease was lost) and once the controllers stopped.
fn lease_at_exit(release_on_exit: bool, stopped: bool, controllers_stopped: bool) -> LeaseAtExit {
    match (release_on_exit && stopped, controllers_stopped) {
        (false, _) => LeaseAtExit::Kept,
        (true, true) => LeaseAtExit::Released,
        (true, false) => LeaseAtExit::KeptWhileWriting,
    }
}

impl Coordination {
    /// Sets up this process's part from the flags: a member of the ring, or a candidate for
    /// the lease (with its liveness check), whose fence every controller client's writes pass
    /// and whose refusals `/metrics` counts. Nothing is awaited yet.
    pub(super) fn join(
        options: &Options,
        clients: &mut ClientFactory,
        metrics: &Metrics,
        endpoints: &Endpoints,
    ) -> anyhow::Result<Self> {
        if options.sharded() {
            let id = identity();
            let sharding = Sharding::new(options, clients.client("leader-election")?, &id)?;
            if options.leader_elect {
                tracing::info!(
                    "--sharding=namespace: every replica is active on its shard; no leader election"
                );
            }
            clients.set_fence(sharding.fence_layer());
            clients.set_agent_suffix(format!("shard-member/{id}"));
            metrics.watch_fence(sharding.member().identity(), sharding.member().fence());
            return Ok(Coordination::Member(sharding));
        }
        if !options.leader_elect {
            return Ok(Coordination::Alone);
        }
        let lease = options.leader_elect_resource_name.clone();
        let lock = KubeLeaseLock::new(
            clients.client("leader-election")?,
            &options.leader_elect_resource_namespace,
            &lease,
            &identity(),
        );
        let config = LeaderElectionConfig {
            lease_duration: options.leader_elect_lease_duration,
            renew_deadline: options.leader_elect_renew_deadline,
            retry_period: options.leader_elect_retry_period,
            release_on_cancel: false,
            ..LeaderElectionConfig::default()
        };
        let elector = Arc::new(LeaderElector::new(lock, config)?);
        // Every write of the controllers passes the leader's fence.
        clients.set_fence(FenceLayer::new(elector.fence()));
        metrics.watch_fence(&lease, elector.fence());
        let check = elector.clone();
        endpoints.add_check(
            "leaderElection",
            Probe::Live,
            Arc::new(move || check.check(MAX_TOLERABLE_EXPIRED_LEASE)),
        );
        Ok(Coordination::Leader { elector, lease })
    }

    /// Waits until this process may run its controllers: a leader until it holds the lease
    /// (`false` when `stop` fired first); the others at once.
    pub(super) async fn lead(&self, metrics: &Metrics, stop: &CancellationToken) -> bool {
        let Coordination::Leader { elector, lease } = self else {
            return true;
        };
        if !elector.acquire(stop).await {
            return false;
        }
        metrics.set_leader(lease, true);
        true
    }

    /// How the informers list and watch: a member only its shard.
    pub(super) fn reflector(&self) -> ReflectorConfig {
        match self {
            Coordination::Member(sharding) => {
                ReflectorConfig::default().dynamic_shard(sharding.member().shard())
            }
            Coordination::Alone | Coordination::Leader { .. } => ReflectorConfig::default(),
        }
    }

    /// The namespaces the controllers may sync: a member's active shard, or all of them (`None`).
    pub(super) fn namespace_gate(&self) -> Option<NamespaceGate> {
        match self {
            Coordination::Member(sharding) => Some(sharding.namespace_gate()),
            Coordination::Alone | Coordination::Leader { .. } => None,
        }
    }

    /// A member's renewals and handovers, once the informers are started (the objects of
    /// namespaces that become active are delivered again from `factory`), with the sharding
    /// series at `/metrics`.
    pub(super) fn run_member(
        &self,
        factory: &InformerFactory,
        endpoints: &Endpoints,
    ) -> Option<MemberTask> {
        let Coordination::Member(sharding) = self else {
            return None;
        };
        endpoints
            .registry()
            .write()
            .register_collector(sharding.collector(factory.clone()));
        let member = sharding.member().clone();
        let on_activate = Sharding::on_activate(factory.clone());
        // The member keeps renewing (its fence open) until the controllers have stopped.
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let stop = stop.clone();
            async move { member.run(on_activate, stop).await }
        });
        Some(MemberTask { task, stop })
    }

    /// Waits until `stop` fires or, for a leader, the lease is lost; how the process exits.
    pub(super) async fn wait(
        &self,
        metrics: &Metrics,
        release_on_exit: bool,
        stop: &CancellationToken,
    ) -> Exit {
        let Coordination::Leader { elector, lease } = self else {
            stop.cancelled().await;
            return Exit::Stopped;
        };
        let lost = elector.renew(stop).await;
        if lost {
            metrics.set_leader(lease, false);
            tracing::error!("leaderelection lost/stopped");
        }
        exit_after_leading(lost, release_on_exit)
    }

    /// Once the controllers were stopped (`controllers_stopped`: all of them within the grace
    /// period): a member stops renewing and leaves the ring, a leader with the release gate
    /// gives its Lease up; either only when no controller may still write.
    pub(super) async fn finish(
        &self,
        member: Option<MemberTask>,
        controllers_stopped: bool,
        release_on_exit: bool,
        metrics: &Metrics,
        factory: &InformerFactory,
        stop: &CancellationToken,
    ) {
        match self {
            Coordination::Member(sharding) => {
                if let Some(member) = member {
                    member.stop.cancel();
                    let _ = member.task.await;
                }
                for (informer, objects) in factory.cached_objects() {
                    tracing::info!(informer = %informer, objects, "cached objects of this replica's shard at exit");
                }
                if controllers_stopped {
                    // Every write has finished: hand the shard over now rather than at expiry.
                    if let Err(e) = sharding.member().leave().await {
                        tracing::warn!(error = %e, "could not delete the membership Lease; it expires instead");
                    }
                } else {
                    tracing::warn!(
                        "not leaving the ring: controllers may still write; the membership Lease expires instead"
                    );
                }
            }
            Coordination::Leader { elector, lease } => {
                match lease_at_exit(release_on_exit, stop.is_cancelled(), controllers_stopped) {
                    LeaseAtExit::Kept => {}
                    LeaseAtExit::Released => {
                        tracing::error!("leaderelection lost/stopped");
                        metrics.set_leader(lease, false);
                        if elector.release().await {
                            tracing::info!(lease = %lease, "released the leader lease");
                        }
                    }
                    LeaseAtExit::KeptWhileWriting => tracing::warn!(
                        lease = %lease,
                        "not releasing the leader lease: controllers may still write; it expires instead"
                    ),
                }
            }
            Coordination::Alone => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_lease_exits_1_unless_the_release_gate_is_on() {
        // (lost, release gate, exit)
        let cases = [
            (true, false, Exit::LeaderElectionLost),
            (true, true, Exit::Stopped),
            (false, false, Exit::Stopped),
            (false, true, Exit::Stopped),
        ];
        for (lost, gate, want) in cases {
            assert_eq!(
                exit_after_leading(lost, gate),
                want,
                "lost {lost}, gate {gate}"
            );
        }
    }

    #[test]
    fn the_lease_is_given_up_only_by_a_stopped_leader_whose_controllers_stopped() {
        // (release gate, stopped by a signal, controllers stopped, the Lease)
        let cases = [
            (false, true, true, LeaseAtExit::Kept),
            (false, true, false, LeaseAtExit::Kept),
            (true, false, true, LeaseAtExit::Kept),
            (true, false, false, LeaseAtExit::Kept),
            (true, true, true, LeaseAtExit::Released),
            (true, true, false, LeaseAtExit::KeptWhileWriting),
        ];
        for (gate, stopped, controllers, want) in cases {
            assert_eq!(
                lease_at_exit(gate, stopped, controllers),
                want,
                "gate {gate}, stopped {stopped}, controllers stopped {controllers}"
            );
        }
    }

    #[test]
    fn identities_are_unique_and_name_the_host() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        let (host, uuid) = a.rsplit_once('_').expect("host_uuid");
        assert!(!host.is_empty());
        assert_eq!(uuid.len(), 36, "{a}");
    }
}
