//! The simulated world: a linearizable Lease store with its history, members with their own
//! clocks, Lease informers that deliver a prefix of the history late, one serial Lease writer per
//! member (renewals and acknowledgements), write fences, syncs that drain, fresh lists, and the
//! faults (pauses, crashes, joins, graceful leaves, stalled channels).
//!
//! Time: `now` is real time in ticks; member i's clock reads `now * rate_i / 1000`. Every member
//! action is atomic; the invariant is checked after each one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::num::NonZeroU32;

use super::Fault;
use super::node::{Node, Status, WriteState};
use crate::handover::{Event, Phase};
use crate::range::ShardRanges;
use crate::ring::{Ring, RingFingerprint};

/// How members judge each other live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Rule {
    /// [`Liveness`]: expiry anchored at an own write in the view.
    Anchored,
    /// `docs/sharding.md` ("Membership") as drafted: not live LD after the last observed change, by the
    /// observer's clock alone.
    ObserverClock,
}

/// The simulation's constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Params {
    pub vnodes: NonZeroU32,
    /// LD, in local ticks.
    pub lease_duration: u64,
    /// LD × (1 − margin), in local ticks.
    pub fence_window: u64,
    pub renew_period: u64,
    pub rule: Rule,
    pub fault: Option<Fault>,
    /// Joins stop at this many members alive.
    pub max_alive: usize,
}

impl Params {
    /// LD 1000 ticks, margin 15 %, renewals every 300, 3 vnodes (small rings, many boundaries).
    pub(crate) fn standard() -> Self {
        Self {
            vnodes: NonZeroU32::new(3).unwrap_or(NonZeroU32::MIN),
            lease_duration: 1000,
            fence_window: 850,
            renew_period: 300,
            rule: Rule::Anchored,
            fault: None,
            max_alive: 4,
        }
    }
}

/// One step of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Act {
    /// Real time passes; then every running member's timers run (fence check, renewal).
    Advance(u64),
    /// Member i's informer delivers the next `n` changes (`usize::MAX`: all).
    Deliver(usize, usize),
    /// The store applies (or loses) member i's in-flight Lease write.
    Commit(usize, Outcome),
    /// Member i receives the answer to its Lease write.
    Respond(usize),
    /// Member i's oldest pending drain finishes.
    Drain(usize),
    /// Member i's fresh list finishes.
    List(usize),
    Pause(usize, u64),
    Crash(usize),
    Join,
    Leave(usize),
    /// Member i's channel makes no progress for the given real ticks.
    Stall(usize, Channel, u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Outcome {
    Ok,
    /// Not applied; the client gets an error.
    Lost,
    /// Applied, but the client gets an error (a timeout).
    TimedOut,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Channel {
    View = 0,
    Write = 1,
    Drain = 2,
    List = 3,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Change {
    pub(super) version: u64,
    /// Real time of the commit.
    pub(super) at: u64,
    pub(super) name: String,
    /// `None`: deleted.
    pub(super) lease: Option<Option<RingFingerprint>>,
}

/// The whole simulated system.
#[derive(Clone, Debug)]
pub(crate) struct World {
    pub(super) now: u64,
    pub(super) params: Params,
    pub(super) version: u64,
    pub(super) history: Vec<Change>,
    pub(super) store: BTreeMap<String, Option<RingFingerprint>>,
    pub(super) nodes: Vec<Node>,
    pub(super) joined: usize,
    /// A broken rule of the shell contract (a bug, reported like a violation).
    pub(super) bug: Option<String>,
    /// The trace, when asked for.
    pub(super) log: Option<Vec<String>>,
    /// Counters for coverage (not part of the state).
    pub(super) starts: u64,
    pub(super) fence_closures: u64,
    pub(super) takeovers: u64,
}

impl World {
    /// `rates.len()` members, all just created (their Lease creates in flight).
    pub(crate) fn new(params: Params, rates: &[u64], trace: bool) -> Self {
        let mut world = Self {
            now: 0,
            params,
            version: 0,
            history: Vec::new(),
            store: BTreeMap::new(),
            nodes: Vec::new(),
            joined: 0,
            bug: None,
            log: trace.then(Vec::new),
            starts: 0,
            fence_closures: 0,
            takeovers: 0,
        };
        for &rate in rates {
            world.join(rate);
        }
        world
    }

    /// A hash of everything that matters for the future (not the trace).
    pub(crate) fn state_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (
            self.now,
            self.version,
            &self.history,
            &self.store,
            &self.nodes,
        )
            .hash(&mut h);
        h.finish()
    }

    pub(crate) fn local(&self, i: usize) -> u64 {
        self.now * self.nodes[i].rate / 1000
    }

    pub(crate) fn alive(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&i| {
            matches!(
                self.nodes[i].status,
                Status::Running | Status::Paused { .. }
            )
        })
    }

    /// Members alive and not leaving.
    pub(crate) fn staying(&self) -> usize {
        self.alive()
            .filter(|&i| {
                matches!(
                    self.nodes[i].machine.phase(),
                    Phase::Member | Phase::Rejoining
                )
            })
            .count()
    }

    fn stalled(&self, i: usize, channel: Channel) -> bool {
        self.now < self.nodes[i].stalled_until[channel as usize]
    }

    /// Whether `act` can happen now.
    pub(crate) fn enabled(&self, act: Act) -> bool {
        let running = |i: usize| self.nodes[i].status == Status::Running;
        match act {
            Act::Advance(_) => true,
            Act::Deliver(i, _) => {
                running(i)
                    && !self.stalled(i, Channel::View)
                    && self.nodes[i]
                        .burst
                        .is_none_or(|(period, window)| self.now % period < window)
                    && self
                        .history
                        .get(self.nodes[i].seen)
                        .is_some_and(|c| c.at + self.nodes[i].lag <= self.now)
            }
            Act::Commit(i, _) => {
                self.nodes[i].status != Status::Gone
                    && !self.stalled(i, Channel::Write)
                    && matches!(self.nodes[i].write, Some(w) if w.state == WriteState::Sent)
            }
            Act::Respond(i) => {
                running(i)
                    && !self.stalled(i, Channel::Write)
                    && matches!(self.nodes[i].write, Some(w) if w.state != WriteState::Sent)
            }
            Act::Drain(i) => {
                running(i) && !self.stalled(i, Channel::Drain) && !self.nodes[i].drains.is_empty()
            }
            Act::List(i) => {
                running(i) && !self.stalled(i, Channel::List) && self.nodes[i].listing.is_some()
            }
            Act::Pause(i, _) | Act::Stall(i, _, _) => running(i),
            Act::Crash(i) => self.nodes[i].status == Status::Running && self.staying() > 1,
            Act::Join => self.alive().count() < self.params.max_alive,
            Act::Leave(i) => {
                running(i)
                    && matches!(
                        self.nodes[i].machine.phase(),
                        Phase::Member | Phase::Rejoining
                    )
                    && self.staying() > 1
            }
        }
    }

    /// Performs `act` (which must be enabled).
    pub(crate) fn apply(&mut self, act: Act) {
        self.trace(|w| format!("t={} {act:?}", w.now));
        match act {
            Act::Advance(dt) => {
                self.now += dt;
                for i in 0..self.nodes.len() {
                    if let Status::Paused { until } = self.nodes[i].status
                        && until <= self.now
                    {
                        self.nodes[i].status = Status::Running;
                    }
                    if self.nodes[i].status == Status::Running {
                        self.timers(i);
                    }
                }
            }
            Act::Deliver(i, n) => self.deliver(i, n),
            Act::Commit(i, outcome) => self.commit(i, outcome),
            Act::Respond(i) => self.respond(i),
            Act::Drain(i) => {
                let ranges = self.nodes[i].drains.remove(0);
                self.feed(i, Event::Drained(ranges));
            }
            Act::List(i) => {
                if let Some(ring) = self.nodes[i].listing.take() {
                    let before = self.nodes[i].machine.active().clone();
                    self.feed(i, Event::Listed { ring });
                    let gained = self.nodes[i].machine.active().difference(&before);
                    // Taken over from a member cut off by its fence (it did not hand them over).
                    let cut_off = (0..self.nodes.len()).filter(|&k| {
                        k != i
                            && self.nodes[k].status != Status::Gone
                            && self.local(k) >= self.nodes[k].fence_until
                            && !self.nodes[k]
                                .machine
                                .active()
                                .intersection(&gained)
                                .is_empty()
                    });
                    self.takeovers += cut_off.count() as u64;
                }
            }
            Act::Pause(i, ticks) => {
                self.nodes[i].status = Status::Paused {
                    until: self.now + ticks,
                };
            }
            Act::Crash(i) => self.nodes[i].status = Status::Crashed,
            Act::Join => self.join(1000),
            Act::Leave(i) => self.feed(i, Event::Leave),
            Act::Stall(i, channel, ticks) => {
                self.nodes[i].stalled_until[channel as usize] = self.now + ticks;
            }
        }
    }

    /// What member i's write fence allows right now.
    pub(crate) fn effective_active(&self, i: usize) -> ShardRanges {
        let node = &self.nodes[i];
        if node.status == Status::Gone || self.local(i) >= node.fence_until {
            ShardRanges::new()
        } else {
            node.machine.active().clone()
        }
    }

    /// The safety claim: no hash in two members' active sets (or a shell contract broken).
    pub(crate) fn check_safety(&self) -> Result<(), String> {
        if let Some(bug) = &self.bug {
            return Err(bug.clone());
        }
        let actives: Vec<ShardRanges> = (0..self.nodes.len())
            .map(|i| self.effective_active(i))
            .collect();
        for i in 0..actives.len() {
            for j in i + 1..actives.len() {
                let both = actives[i].intersection(&actives[j]);
                if !both.is_empty() {
                    return Err(format!(
                        "{} and {} both active on {both}",
                        self.nodes[i].name, self.nodes[j].name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every member alive holds exactly its shard of the ring of the members alive, and nothing
    /// is pending (so every hash has exactly one active owner).
    pub(crate) fn converged(&self) -> bool {
        let alive: Vec<usize> = self.alive().collect();
        let ring = Ring::with_vnodes(
            alive.iter().map(|&i| self.nodes[i].name.clone()),
            self.params.vnodes,
        );
        !alive.is_empty()
            && alive.iter().all(|&i| {
                let node = &self.nodes[i];
                node.status == Status::Running
                    && node.machine.phase() == Phase::Member
                    && node.machine.waiting().is_none()
                    && self.effective_active(i) == ring.ranges(&node.name)
            })
    }

    /// One line per member, for traces and liveness failures.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let waiting = n.machine.waiting().map(|w| w.to_string());
            let _ = writeln!(
                out,
                "  {} {:?} {:?} local={} fence_until={} view=v{} active={:.3} ring={:?} acked={:?} waiting={:?}",
                n.name,
                n.status,
                n.machine.phase(),
                self.local(i),
                n.fence_until,
                n.view_version,
                self.effective_active(i).fraction(),
                n.machine.ring().map(Ring::members),
                n.machine.applied().map(Ring::fingerprint),
                waiting,
            );
        }
        out
    }

    /// Starts (barriers passed) since the last call.
    pub(crate) fn take_starts(&mut self) -> u64 {
        std::mem::take(&mut self.starts)
    }

    /// Takeovers from fenced-off members since the last call.
    pub(crate) fn take_takeovers(&mut self) -> u64 {
        std::mem::take(&mut self.takeovers)
    }

    /// Fence closures noticed since the last call.
    pub(crate) fn take_fence_closures(&mut self) -> u64 {
        std::mem::take(&mut self.fence_closures)
    }

    /// Ends the faults: paused members resume, stalled channels flow.
    pub(crate) fn calm(&mut self) {
        for node in &mut self.nodes {
            if let Status::Paused { .. } = node.status {
                node.status = Status::Running;
            }
            node.stalled_until = [0; 4];
            node.lag = 0;
            node.burst = None;
        }
    }

    /// Changes member i's informer could deliver now.
    pub(crate) fn due(&self, i: usize) -> usize {
        let node = &self.nodes[i];
        self.history[node.seen..]
            .iter()
            .take_while(|c| c.at + node.lag <= self.now)
            .count()
    }
}
