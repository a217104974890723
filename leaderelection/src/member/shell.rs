//! One replica of a namespace-sharded controller: the I/O shell around the handover protocol
//! (`docs/sharding.md`, "Handover protocol" and "The shell").

use std::num::NonZeroU32;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_reflector::{DynamicShard, ShardChange, ShardScope, ShardSelection};
use kcm_sharding::{
    Action, Event, Handover, LeaseRecord, Liveness, RingFingerprint, ShardRanges, hash_field,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::fence::WriteFence;
use crate::member::gate::ShardGate;
use crate::member::membership::{Membership, MembershipConfig, MembershipError};

/// Called with the ranges that just became active (after their fresh list).
pub type OnActivate = Arc<dyn Fn(&ShardRanges) + Send + Sync>;

/// What a member is doing, for metrics, logs and health checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemberStatus {
    /// The members of the ring being applied (the live ones in the latest view).
    pub ring_members: Vec<String>,
    /// That ring's fingerprint.
    pub ring: Option<RingFingerprint>,
    /// The fraction of the hash space the member processes now.
    pub active_fraction: f64,
    /// The fraction the ring gives it.
    pub shard_fraction: f64,
    /// What keeps it from holding its whole shard, if anything.
    pub waiting: Option<String>,
    /// How many times the ring changed.
    pub ring_changes: u64,
    /// Renewals of its Lease that failed.
    pub renew_failures: u64,
}

/// One replica of a namespace-sharded controller.
///
/// A [`ShardMember`] owns the replica's membership Lease ([`Membership`]), judges the other
/// members' liveness ([`Liveness`]), feeds both to the [`Handover`] state machine, and carries
/// out what it asks:
///
/// | handover action | what the shell does |
/// | --- | --- |
/// | `StopTaking` | the [`ShardGate`] refuses the ranges' writes at once; controllers gate their workers with [`ShardMember::gate`] |
/// | `WaitDrain` | waits until no write of the ranges is in flight ([`ShardGate::drained`]) |
/// | `Forget`, `Relist` | the informers following [`ShardMember::shard`] list and watch the new shard; objects that left it vanish from the caches as deletes |
/// | `Acknowledge` | the next Lease renewal, sent at once, carries the ring's fingerprint |
/// | `Start` | every informer lists afresh (a consistent read issued now); when all have, the ranges become active and their objects are delivered to the controllers again (`on_activate`) |
///
/// Every `retry_period` the member renews its Lease (opening its write fence for
/// `lease_duration` × (1 − margin) from the renewal's start) and lists the ring's Leases; a
/// closed fence is reported to the handover as `FenceClosed`, also when a renewal answered
/// after the fence had closed (the contract of `docs/sharding.md`, "Membership"). Leaving ([`ShardMember::leave`]) empties
/// the shard and deletes the Lease once the caller's controllers have stopped.
///
/// ```no_run
/// use std::sync::Arc;
/// use kcm_leaderelection::{MembershipConfig, ShardMember};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn demo(client: kube::Client) -> anyhow::Result<()> {
/// let config = MembershipConfig::new("kube-system", "my-controller", "pod-0_1234");
/// let member = ShardMember::new(client, config, kcm_sharding::DEFAULT_VNODES)?;
/// // Informers: ReflectorConfig::default().dynamic_shard(member.shard())
/// // Client:    FenceLayer::new(member.fence()).with_shard(member.gate())
/// // Workers:   pool.gate(move |key| gate.allows(&key.namespace))
/// let stop = CancellationToken::new();
/// let on_activate = Arc::new(|ranges: &kcm_sharding::ShardRanges| {
///     println!("now active: {ranges}"); // e.g. factory.redeliver_where(...)
/// });
/// member.run(on_activate, stop.clone()).await;
/// // ... stop the controllers, then:
/// member.leave().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ShardMember {
    membership: Membership,
    gate: ShardGate,
    shard: DynamicShard,
    vnodes: NonZeroU32,
    status: watch::Sender<MemberStatus>,
}

impl ShardMember {
    /// A member of `config.ring` with `vnodes` points per member; it owns nothing until it
    /// runs and a handover gives it a shard.
    pub fn new(
        client: kube::Client,
        config: MembershipConfig,
        vnodes: NonZeroU32,
    ) -> Result<Self, MembershipError> {
        Ok(ShardMember {
            membership: Membership::new(client, config)?,
            gate: ShardGate::new(),
            shard: DynamicShard::new(ShardSelection::Nothing),
            vnodes,
            status: watch::channel(MemberStatus::default()).0,
        })
    }

    /// The member's name on the ring.
    pub fn identity(&self) -> &str {
        self.membership.identity()
    }

    /// The fence every write of the member's controllers passes: open while its Lease is
    /// renewed in time (use with [`gate`](Self::gate) in a [`FenceLayer`](crate::FenceLayer)).
    pub fn fence(&self) -> WriteFence {
        self.membership.fence()
    }

    /// The namespaces the member's controllers may sync and write now.
    pub fn gate(&self) -> ShardGate {
        self.gate.clone()
    }

    /// The shard its informers list and watch.
    pub fn shard(&self) -> DynamicShard {
        self.shard.clone()
    }

    /// What it is doing.
    pub fn status(&self) -> watch::Receiver<MemberStatus> {
        self.status.subscribe()
    }

    /// Runs the membership and the handover until `stop` fires.
    pub async fn run(&self, on_activate: OnActivate, stop: CancellationToken) {
        let timing = self.membership.timing().clone();
        let origin = Instant::now();
        let mut shell = Shell {
            member: self,
            handover: Handover::new(self.identity(), self.vnodes),
            liveness: Liveness::new(self.identity(), timing.lease_duration),
            on_activate,
            pending_ack: None,
            listed: ShardRanges::new(),
            events: mpsc::unbounded_channel(),
            status: MemberStatus::default(),
        };
        tracing::info!(member = %self.identity(), lease = %self.membership.lease_name(), "joining the ring");
        let mut next_renewal = Instant::now();
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                Some(event) = shell.events.1.recv() => shell.handle(event),
                () = tokio::time::sleep_until(next_renewal) => {
                    shell.renew(origin).await;
                    shell.observe(origin).await;
                    next_renewal = if shell.pending_ack.is_some() {
                        Instant::now()
                    } else {
                        Instant::now() + timing.retry_period
                    };
                }
            }
            if shell.pending_ack.is_some() {
                next_renewal = Instant::now();
            }
        }
    }

    /// Leaves the ring: nothing is active any more, the informers stop listing, the fence is
    /// closed and the Lease deleted (the others take its shard over without waiting for it to
    /// expire). Call it only once the member's controllers have stopped.
    pub async fn leave(&self) -> Result<(), MembershipError> {
        self.gate.set_active(ShardRanges::new());
        self.shard.set(ShardSelection::Nothing);
        self.membership.leave().await?;
        tracing::info!(member = %self.identity(), "left the ring; Lease deleted");
        Ok(())
    }
}

/// The run loop's state.
struct Shell<'a> {
    member: &'a ShardMember,
    handover: Handover,
    liveness: Liveness,
    on_activate: OnActivate,
    /// The acknowledgement the next renewal writes, if one was asked for.
    pending_ack: Option<Option<RingFingerprint>>,
    /// What the informers list and watch (the last `Relist`).
    listed: ShardRanges,
    events: (mpsc::UnboundedSender<Event>, mpsc::UnboundedReceiver<Event>),
    status: MemberStatus,
}

impl Shell<'_> {
    /// Renews the Lease (with a pending acknowledgement) and reports the answer.
    async fn renew(&mut self, origin: Instant) {
        let fence = self.member.membership.fence();
        if !fence.is_open() {
            self.handle(Event::FenceClosed);
        }
        let ack = self.pending_ack.take();
        if let Some(ack) = &ack {
            self.member
                .membership
                .set_applied_ring(ack.map(|f| f.to_string()));
        }
        let closes_at = fence.deadline();
        let sent_at = Instant::now();
        let result = self.member.membership.renew().await;
        // The fence closed at some moment since the previous answer: say so before this answer.
        if closes_at.is_none_or(|d| Instant::now() >= d) {
            self.handle(Event::FenceClosed);
        }
        match result.map(|v| v.parse::<u64>()) {
            Ok(Ok(version)) => {
                self.liveness
                    .own_write(version, sent_at.saturating_duration_since(origin));
                if let Some(applied) = ack {
                    self.handle(Event::LeaseWritten { applied, version });
                }
            }
            failed => {
                match failed {
                    Err(e) => {
                        tracing::warn!(member = %self.member.identity(), error = %e, "membership Lease renewal failed")
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(member = %self.member.identity(), error = %e, "membership Lease has a non-numeric resourceVersion")
                    }
                    Ok(Ok(_)) => {}
                }
                self.status.renew_failures += 1;
                if ack.is_some() {
                    self.handle(Event::LeaseWriteFailed);
                }
            }
        }
    }

    /// Lists the ring's Leases and hands the view to the handover.
    async fn observe(&mut self, origin: Instant) {
        let view = match self.member.membership.observe().await {
            Ok(view) => view,
            Err(e) => {
                tracing::warn!(member = %self.member.identity(), error = %e, "cannot list the ring's Leases");
                return;
            }
        };
        let Ok(version) = view.version.parse::<u64>() else {
            tracing::warn!(version = %view.version, "the Lease list has a non-numeric resourceVersion");
            return;
        };
        let records: Vec<LeaseRecord> = view
            .members
            .into_values()
            .filter_map(|m| {
                Some(LeaseRecord {
                    resource_version: m.resource_version.parse().ok()?,
                    applied: m.applied_ring.and_then(|a| a.parse().ok()),
                    name: m.identity,
                })
            })
            .collect();
        self.liveness.observe(
            version,
            records,
            Instant::now().saturating_duration_since(origin),
        );
        self.handle(Event::View(self.liveness.view()));
    }

    /// Feeds one event to the handover, updates the gate, performs the actions.
    fn handle(&mut self, event: Event) {
        let before = self.handover.active().clone();
        let actions = self.handover.handle(event);
        let after = self.handover.active().clone();
        let gained = after.difference(&before);
        // Logged before the gate opens: the line's time is a bound no write of the gained
        // namespaces precedes (the chaos checks read ownership from it).
        if !gained.is_empty() {
            tracing::info!(member = %self.member.identity(), ranges = gained.len(), gained = gained.fraction(), active = after.fraction(), "namespaces became active");
            tracing::debug!(member = %self.member.identity(), gained = %gained, "ranges that became active");
        }
        // The gate first: a stop takes effect before anything else happens.
        self.member.gate.set_active(after.clone());
        for action in actions {
            self.perform(action);
        }
        if !gained.is_empty() {
            (self.on_activate)(&gained);
        }
        self.publish();
    }

    fn perform(&mut self, action: Action) {
        let me = self.member.identity().to_owned();
        match action {
            Action::StopTaking(ranges) => {
                tracing::info!(member = %me, ranges = ranges.len(), fraction = ranges.fraction(), "stopped taking namespaces");
                tracing::debug!(member = %me, stopped = %ranges, "ranges stopped");
            }
            Action::WaitDrain(ranges) => {
                let gate = self.member.gate.clone();
                let tx = self.events.0.clone();
                tokio::spawn(async move {
                    gate.drained(&ranges).await;
                    let _ = tx.send(Event::Drained(ranges));
                });
            }
            Action::Forget(ranges) => {
                tracing::info!(member = %me, ranges = ranges.len(), fraction = ranges.fraction(), "dropping the caches of namespaces no longer owned");
            }
            Action::Relist(ranges) => {
                // Only what changed: the gained ranges are listed alone while the kept ones
                // are watched on, the lost ones dropped from the caches without a list.
                let before = std::mem::replace(&mut self.listed, ranges.clone());
                let gained = ranges.difference(&before);
                let lost = before.difference(&ranges);
                let mut change = ShardChange::new();
                if !gained.is_empty() {
                    change = change.listing(ShardScope::namespaces(&gained));
                }
                if !lost.is_empty() {
                    change = change.dropping(ShardScope::namespaces(&lost));
                }
                self.member
                    .shard
                    .change(Some(ShardSelection::namespaces(&ranges)), change);
            }
            Action::Acknowledge(ring) => {
                tracing::info!(member = %me, ring = %ring.map_or_else(|| "none".to_string(), |r| r.to_string()), "acknowledging the ring");
                self.pending_ack = Some(ring);
            }
            Action::Start { ring, ranges } => {
                tracing::info!(member = %me, ring = %ring, ranges = ranges.len(), fraction = ranges.fraction(), "barrier passed; listing the gained namespaces afresh");
                // A consistent list of the gained ranges alone, issued now; the rest of the
                // shard is watched on.
                let generation = self.member.shard.change(
                    None,
                    ShardChange::new().listing(ShardScope::namespaces(&ranges)),
                );
                let shard = self.member.shard.clone();
                let tx = self.events.0.clone();
                tokio::spawn(async move {
                    shard.listed(generation).await;
                    let _ = tx.send(Event::Listed { ring });
                });
            }
            Action::DeleteLease => {
                // Leaving is `ShardMember::leave`, after the controllers stopped.
            }
        }
    }

    fn publish(&mut self) {
        let ring = self.handover.ring();
        let members: Vec<String> = ring.map(|r| r.members().to_vec()).unwrap_or_default();
        if members != self.status.ring_members {
            self.status.ring_changes += 1;
            tracing::info!(member = %self.member.identity(), members = %members.join(","), ring = %ring.map_or_else(|| "none".to_string(), |r| r.fingerprint().to_string()), "ring changed");
        }
        let waiting = self.handover.waiting().map(|w| w.to_string());
        if waiting != self.status.waiting {
            tracing::debug!(member = %self.member.identity(), waiting = %waiting.as_deref().unwrap_or("nothing"), "handover progress");
        }
        self.status = MemberStatus {
            ring_members: members,
            ring: ring.map(|r| r.fingerprint()),
            active_fraction: self.handover.active().fraction(),
            shard_fraction: ring
                .map(|r| r.ranges(self.member.identity()).fraction())
                .unwrap_or(0.0),
            waiting,
            ring_changes: self.status.ring_changes,
            renew_failures: self.status.renew_failures,
        };
        self.member.status.send_replace(self.status.clone());
    }
}

/// Whether an object with this metadata is in `ranges` (by its namespace).
pub fn in_ranges(ranges: &ShardRanges, meta: &ObjectMeta) -> bool {
    ranges.contains(hash_field(meta.namespace.as_deref().unwrap_or_default()))
}
