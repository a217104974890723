//! One member's I/O shell in the simulation: its Lease informer (a prefix of the history,
//! delivered late), its serial Lease writer (renewals and acknowledgements, answers that come
//! late or not at all), its write fence, and the glue that feeds its [`Handover`] and performs
//! the actions. This is the contract a real shell must keep (the fence rule in particular).

use std::collections::BTreeMap;
use std::time::Duration;

use super::node::{Node, Status, Write, WriteState};
use super::world::{Change, Outcome, Rule, World};
use crate::handover::{Action, Event, Handover, MemberLease, Phase, View};
use crate::liveness::{LeaseRecord, Liveness};

impl World {
    pub(super) fn join(&mut self, rate: u64) {
        let name = format!("m{}", self.joined);
        self.joined += 1;
        let mut machine = Handover::new(name.clone(), self.params.vnodes);
        machine.fault = self.params.fault;
        let lease_duration = Duration::from_nanos(self.params.lease_duration);
        self.nodes.push(Node {
            liveness: Liveness::new(name.clone(), lease_duration),
            name,
            rate,
            status: Status::Running,
            machine,
            seen: 0,
            lag: 0,
            burst: None,
            leases: BTreeMap::new(),
            view_version: 0,
            fed: None,
            annotation: None,
            ack_outstanding: false,
            delete_wanted: false,
            write: None,
            next_renew: 0,
            fence_until: 0,
            drains: Vec::new(),
            listing: None,
            stalled_until: [0; 4],
        });
        let i = self.nodes.len() - 1;
        self.kick_writer(i);
    }

    /// Timers of a running member: notice a closed fence, renew, re-judge liveness.
    pub(super) fn timers(&mut self, i: usize) {
        self.notice_fence(i);
        if self.params.rule == Rule::ObserverClock {
            self.refresh_view(i);
        }
        self.kick_writer(i);
    }

    /// The shell's side of the fence contract: whenever it finds its fence closed (on a timer, or
    /// before the answer of a Lease write, even one that reopens it), it feeds `FenceClosed`. A
    /// machine that is not a member holds nothing, so repeating it there changes nothing.
    fn notice_fence(&mut self, i: usize) {
        let node = &self.nodes[i];
        if self.local(i) >= node.fence_until && node.machine.phase() == Phase::Member {
            self.fence_closures += 1;
            self.feed(i, Event::FenceClosed);
        }
    }

    pub(super) fn deliver(&mut self, i: usize, n: usize) {
        let local = self.local(i);
        let node = &mut self.nodes[i];
        let due = self.history[node.seen..]
            .iter()
            .take_while(|c| c.at + node.lag <= self.now)
            .count();
        let end = node.seen + n.min(due);
        for change in &self.history[node.seen..end] {
            match change.lease {
                Some(applied) => {
                    node.leases
                        .insert(change.name.clone(), (change.version, applied, local));
                }
                None => {
                    node.leases.remove(&change.name);
                }
            }
            node.view_version = change.version;
        }
        node.seen = end;
        let records = node
            .leases
            .iter()
            .map(|(name, &(rv, applied, _))| LeaseRecord {
                name: name.clone(),
                resource_version: rv,
                applied,
            });
        node.liveness.observe(
            node.view_version,
            records.collect::<Vec<_>>(),
            Duration::from_nanos(local),
        );
        self.refresh_view(i);
    }

    fn refresh_view(&mut self, i: usize) {
        let local = self.local(i);
        let node = &self.nodes[i];
        let view = match self.params.rule {
            Rule::Anchored => node.liveness.view(),
            Rule::ObserverClock => View {
                version: node.view_version,
                members: node
                    .leases
                    .iter()
                    .map(|(name, &(_, applied, observed))| MemberLease {
                        name: name.clone(),
                        live: *name == node.name || local < observed + self.params.lease_duration,
                        applied,
                    })
                    .collect(),
            },
        };
        if node.fed.as_ref() != Some(&view) {
            self.nodes[i].fed = Some(view.clone());
            self.feed(i, Event::View(view));
        }
    }

    pub(super) fn commit(&mut self, i: usize, outcome: Outcome) {
        let Some(mut write) = self.nodes[i].write else {
            return;
        };
        write.state = match outcome {
            Outcome::Lost => WriteState::Lost,
            Outcome::Ok | Outcome::TimedOut => {
                let name = self.nodes[i].name.clone();
                let lease = (!write.delete).then_some(write.applied);
                if write.delete && !self.store.contains_key(&name) {
                    // Already gone (a timed-out delete applied earlier): nothing changes.
                } else {
                    self.version += 1;
                    match lease {
                        Some(applied) => self.store.insert(name.clone(), applied),
                        None => self.store.remove(&name),
                    };
                    self.history.push(Change {
                        version: self.version,
                        at: self.now,
                        name,
                        lease,
                    });
                }
                WriteState::Done {
                    version: self.version,
                    ok: outcome == Outcome::Ok,
                }
            }
        };
        self.nodes[i].write = Some(write);
    }

    pub(super) fn respond(&mut self, i: usize) {
        self.notice_fence(i);
        let Some(write) = self.nodes[i].write.take() else {
            return;
        };
        let fence_window = self.params.fence_window;
        let node = &mut self.nodes[i];
        let answers_ack = node.ack_outstanding && !write.delete && write.applied == node.annotation;
        let event = match write.state {
            WriteState::Done { version, ok: true } => {
                // The fence opens from when the request was sent, not answered.
                node.fence_until = node.fence_until.max(write.sent + fence_window);
                node.liveness
                    .own_write(version, Duration::from_nanos(write.sent));
                if write.delete {
                    node.status = Status::Gone;
                    return;
                }
                answers_ack.then_some(Event::LeaseWritten {
                    applied: write.applied,
                    version,
                })
            }
            WriteState::Done { ok: false, .. } | WriteState::Lost => {
                answers_ack.then_some(Event::LeaseWriteFailed)
            }
            WriteState::Sent => {
                node.write = Some(write);
                return;
            }
        };
        if answers_ack && event.is_some() {
            node.ack_outstanding = false;
        }
        if let Some(event) = event {
            self.feed(i, event);
        }
        self.refresh_view(i);
        self.kick_writer(i);
    }

    /// Sends the next Lease write if none is in flight and one is due.
    fn kick_writer(&mut self, i: usize) {
        let local = self.local(i);
        let node = &mut self.nodes[i];
        if node.status != Status::Running || node.write.is_some() {
            return;
        }
        if node.delete_wanted || node.ack_outstanding || local >= node.next_renew {
            node.write = Some(Write {
                sent: local,
                delete: node.delete_wanted,
                applied: node.annotation,
                state: WriteState::Sent,
            });
            node.next_renew = local + self.params.renew_period;
        }
    }

    pub(super) fn feed(&mut self, i: usize, event: Event) {
        let name = self.nodes[i].name.clone();
        self.trace(|_| format!("    {name} <- {event:?}"));
        let actions = self.nodes[i].machine.handle(event);
        for action in actions {
            self.trace(|_| format!("    {name} -> {action:?}"));
            let node = &mut self.nodes[i];
            match action {
                Action::StopTaking(_) | Action::Relist(_) => {}
                Action::WaitDrain(ranges) => node.drains.push(ranges),
                Action::Forget(ranges) => {
                    let held = node.machine.active().union(node.machine.draining());
                    if !held.intersection(&ranges).is_empty() && self.bug.is_none() {
                        self.bug = Some(format!("{name} forgets {ranges} it still holds"));
                    }
                }
                Action::Acknowledge(applied) => {
                    if node.ack_outstanding && self.bug.is_none() {
                        self.bug = Some(format!("{name}: two acknowledgements outstanding"));
                    }
                    node.annotation = applied;
                    node.ack_outstanding = true;
                }
                Action::Start { ring, .. } => {
                    node.listing = Some(ring);
                    self.starts += 1;
                }
                Action::DeleteLease => node.delete_wanted = true,
            }
        }
        self.kick_writer(i);
    }

    pub(super) fn trace(&mut self, line: impl FnOnce(&Self) -> String) {
        if self.log.is_some() {
            let line = line(self);
            if let Some(log) = &mut self.log {
                log.push(line);
            }
        }
    }
}
