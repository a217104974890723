//! `--sharding=namespace`: this replica as one member of a ring of active replicas, each
//! running the controllers on its shard of the namespaces (`docs/sharding.md`).
//!
//! The member ([`ShardMember`]) renews its own Lease `<ring>-<identity>` in
//! `--leader-elect-resource-namespace` (the ring is `--leader-elect-resource-name`, timed by
//! the `--leader-elect-*` durations), judges the other members, and carries out the handover.
//! The process wires it in three places: the controllers' clients pass its fence and shard
//! gate (a write outside the active shard, or with the member's Lease not renewed in time, is
//! refused before it is sent); the informers list and watch its shard (server-side with
//! kube-apiserver's `ShardedListAndWatch`, always filtered on the client); the controllers'
//! workers drop keys of namespaces outside the active shard, and the objects of namespaces that
//! become active are delivered to them again.
//!
//! Metrics (hot shards are visible as objects per replica): `kcm_sharding_ring_members`,
//! `kcm_sharding_active_fraction`, `kcm_sharding_shard_fraction`,
//! `kcm_sharding_ring_changes_total`, `kcm_sharding_lease_renew_failures_total`,
//! `kcm_sharding_writes_in_flight`, `kcm_sharding_cached_objects{informer}`.

use std::fmt;
use std::sync::Arc;

use kcm_controller::NamespaceGate;
use kcm_informer::InformerFactory;
use kcm_leaderelection::{
    FenceLayer, LeaderElectionConfig, MemberStatus, MembershipConfig, OnActivate, ShardMember,
    in_ranges,
};
use kcm_sharding::{DEFAULT_VNODES, ShardRanges};
use kcm_util::prometheus::encode_family;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use tokio::sync::watch;

use crate::options::Options;

/// This replica's membership, as the process uses it.
#[derive(Clone, Debug)]
pub struct Sharding {
    member: Arc<ShardMember>,
}

impl Sharding {
    /// The member for `identity`, from the flags; fails on a ring name that cannot be a label
    /// value or on unusable durations.
    pub fn new(options: &Options, client: kube::Client, identity: &str) -> anyhow::Result<Self> {
        let config = MembershipConfig {
            timing: LeaderElectionConfig {
                lease_duration: options.leader_elect_lease_duration,
                renew_deadline: options.leader_elect_renew_deadline,
                retry_period: options.leader_elect_retry_period,
                ..LeaderElectionConfig::default()
            },
            ..MembershipConfig::new(
                &options.leader_elect_resource_namespace,
                &options.leader_elect_resource_name,
                identity,
            )
        };
        let member = ShardMember::new(client, config, DEFAULT_VNODES)
            .map_err(|e| anyhow::anyhow!("--sharding=namespace: {e}"))?;
        Ok(Sharding {
            member: Arc::new(member),
        })
    }

    /// The member.
    pub fn member(&self) -> &Arc<ShardMember> {
        &self.member
    }

    /// The layer every controller client's writes pass.
    pub fn fence_layer(&self) -> FenceLayer {
        FenceLayer::new(self.member.fence()).with_shard(self.member.gate())
    }

    /// The gate for the controllers' workers.
    pub fn namespace_gate(&self) -> NamespaceGate {
        let gate = self.member.gate();
        NamespaceGate::new(move |ns| gate.allows(ns))
    }

    /// What to do when ranges become active: deliver their cached objects to the controllers.
    pub fn on_activate(factory: InformerFactory) -> OnActivate {
        Arc::new(move |ranges: &ShardRanges| {
            let delivered = factory.redeliver_where(&|meta| in_ranges(ranges, meta));
            tracing::info!(
                objects = delivered,
                "delivered the objects of the newly active namespaces to the controllers"
            );
        })
    }

    /// The metrics of the member and of the factory's caches.
    pub fn collector(&self, factory: InformerFactory) -> Box<dyn Collector> {
        Box::new(ShardingCollector {
            status: self.member.status(),
            member: self.member.clone(),
            factory,
        })
    }
}

struct ShardingCollector {
    status: watch::Receiver<MemberStatus>,
    member: Arc<ShardMember>,
    factory: InformerFactory,
}

impl fmt::Debug for ShardingCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardingCollector").finish_non_exhaustive()
    }
}

impl Collector for ShardingCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let status = self.status.borrow().clone();
        encode_family(
            &mut encoder,
            "kcm_sharding_ring_members",
            "Members of the ring this replica applies (the live ones it sees).",
            &ConstGauge::new(status.ring_members.len() as f64),
        )?;
        encode_family(
            &mut encoder,
            "kcm_sharding_active_fraction",
            "Fraction of the namespace hash space this replica's controllers process now.",
            &ConstGauge::new(status.active_fraction),
        )?;
        encode_family(
            &mut encoder,
            "kcm_sharding_shard_fraction",
            "Fraction of the namespace hash space the ring gives this replica.",
            &ConstGauge::new(status.shard_fraction),
        )?;
        encode_family(
            &mut encoder,
            "kcm_sharding_ring_changes",
            "Times the ring this replica applies changed.",
            &ConstCounter::new(status.ring_changes),
        )?;
        encode_family(
            &mut encoder,
            "kcm_sharding_lease_renew_failures",
            "Failed renewals of this replica's membership Lease.",
            &ConstCounter::new(status.renew_failures),
        )?;
        encode_family(
            &mut encoder,
            "kcm_sharding_writes_in_flight",
            "Controller writes sent and not yet answered.",
            &ConstGauge::new(self.member.gate().in_flight() as f64),
        )?;
        let mut family = encoder.encode_descriptor(
            "kcm_sharding_cached_objects",
            "Objects in this replica's informer caches (its shard), per informer: hot shards show here.",
            None,
            MetricType::Gauge,
        )?;
        for (informer, objects) in self.factory.cached_objects() {
            let labels = [("informer", informer)];
            let metric = family.encode_family(&labels)?;
            ConstGauge::new(objects as f64).encode(metric)?;
        }
        Ok(())
    }
}
