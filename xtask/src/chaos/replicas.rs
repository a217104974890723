//! The kcm replicas of a chaos schedule: started with the plan's election or sharding flags,
//! stopped (SIGKILL, SIGTERM) or paused (SIGSTOP) and continued or started again on the plan's
//! clock, and restarted after exiting on their own.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use super::ownership_log::read_ownership;
use super::plan::{KcmAction, Plan};
use crate::cluster::{Cluster, Proc};
use crate::e2e::FAST_LEASE_FLAGS;

/// The Lease the replicas of a two-replica schedule compete for.
pub(super) const LEASE: &str = "kcm-chaos";

/// The ring of a sharded schedule's replicas.
const RING: &str = "kcm-chaos-ring";

/// The kcm replicas of a schedule; a slot is `None` while its replica is down.
pub(super) struct Replicas<'a> {
    cluster: &'a Cluster,
    args: Vec<String>,
    /// The kubeconfig each replica runs with.
    kubeconfigs: Vec<PathBuf>,
    slots: Mutex<Vec<Option<Proc>>>,
    starts: Mutex<Vec<u32>>,
    /// Replicas stopped with SIGSTOP and not continued yet.
    paused: Mutex<Vec<bool>>,
}

impl<'a> Replicas<'a> {
    /// Starts the plan's replicas (all of them, or all but the member that joins late) in
    /// namespace `ns`'s election or ring, each with its kubeconfig of `kubeconfigs`.
    pub(super) fn start(
        cluster: &'a Cluster,
        kubeconfigs: Vec<PathBuf>,
        plan: &Plan,
        ns: &str,
    ) -> anyhow::Result<Self> {
        let n = kubeconfigs.len();
        // A sharded member's Lease is named after the ring; an elected replica's is the Lease.
        let lease_flags = |mode: &str, name: &str| -> Vec<String> {
            let mut flags = vec![
                mode.into(),
                format!("--leader-elect-resource-name={name}"),
                format!("--leader-elect-resource-namespace={ns}"),
            ];
            flags.extend(FAST_LEASE_FLAGS.map(String::from));
            flags
        };
        let args: Vec<String> = if plan.sharded {
            lease_flags("--sharding=namespace", RING)
        } else if n > 1 {
            lease_flags("--leader-elect=true", LEASE)
        } else {
            vec!["--leader-elect=false".into()]
        };
        let r = Replicas {
            cluster,
            args,
            kubeconfigs,
            slots: Mutex::new((0..n).map(|_| None).collect()),
            starts: Mutex::new(vec![0; n]),
            paused: Mutex::new(vec![false; n]),
        };
        // A member added mid-rollout starts on the plan's clock.
        let initial = if plan.late_join_ms.is_some() {
            n - 1
        } else {
            n
        };
        for i in 0..initial {
            r.up(i)?;
        }
        Ok(r)
    }

    /// Starts replica `i` if it is down (log `kcm-<i>-<start>.log`); false if it was running.
    pub(super) fn up(&self, i: usize) -> anyhow::Result<bool> {
        let mut slots = self.slots.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        if slots[i].as_mut().is_some_and(Proc::is_running) {
            return Ok(false);
        }
        let n = {
            let mut starts = self
                .starts
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?;
            starts[i] += 1;
            starts[i]
        };
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        slots[i] = Some(self.cluster.start_kcm_as(
            &format!("kcm-{i}-{n}"),
            &self.kubeconfigs[i],
            &args,
        )?);
        Ok(true)
    }

    /// Continues replica `i` if it is paused; false if it was not.
    pub(super) fn resume(&self, i: usize) -> bool {
        let (Ok(slots), Ok(mut paused)) = (self.slots.lock(), self.paused.lock()) else {
            return false;
        };
        if !std::mem::take(&mut paused[i]) {
            return false;
        }
        if let Some(p) = slots[i].as_ref() {
            p.signal("-CONT");
        }
        true
    }

    /// Stops replica `i` with `action`; false if it was already down.
    pub(super) fn down(&self, i: usize, action: KcmAction) -> bool {
        let Ok(mut slots) = self.slots.lock() else {
            return false;
        };
        if action == KcmAction::Pause {
            let Some(p) = slots[i].as_ref() else {
                return false;
            };
            p.signal("-STOP");
            if let Ok(mut paused) = self.paused.lock() {
                paused[i] = true;
            }
            return true;
        }
        let Some(mut p) = slots[i].take() else {
            return false;
        };
        if let Ok(mut paused) = self.paused.lock() {
            // A stopped process is killed all the same (SIGKILL) or ends once its SIGTERM is
            // delivered, after it was continued.
            if std::mem::take(&mut paused[i]) {
                p.signal("-CONT");
            }
        }
        match action {
            KcmAction::Kill => p.kill(),
            KcmAction::Term => {
                let _ = p.terminate(Duration::from_secs(10));
            }
            KcmAction::Pause => {}
        }
        true
    }

    /// Replicas that exited on their own since the last call, with their log: a replica that
    /// lost its Lease exits as kube-controller-manager does, and is started again as a kubelet
    /// would; any other exit is a failure of the schedule.
    pub(super) fn exited(&self) -> Vec<(usize, String)> {
        let Ok(mut slots) = self.slots.lock() else {
            return Vec::new();
        };
        let starts = self.starts.lock().map(|s| s.clone()).unwrap_or_default();
        let mut out = Vec::new();
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.as_mut().is_some_and(|p| !p.is_running()) {
                *slot = None;
                let n = starts.get(i).copied().unwrap_or(0);
                out.push((i, format!("kcm-{i}-{n}.log")));
            }
        }
        out
    }

    /// The replica `i` places after the current owner of namespace `ns` (the live process
    /// whose log shows the latest activation of it), among the replicas running from the start;
    /// `i` itself when no owner is known yet.
    pub(super) fn nth_after_owner(&self, i: usize, ns: &str) -> usize {
        let starts = self.starts.lock().map(|s| s.clone()).unwrap_or_default();
        let alive: Vec<bool> = self
            .slots
            .lock()
            .map(|s| s.iter().map(Option::is_some).collect())
            .unwrap_or_default();
        let n = starts.len();
        let owner = (0..n)
            .filter(|r| alive.get(*r).copied().unwrap_or(false))
            .filter_map(|r| {
                let log = self
                    .cluster
                    .dir()
                    .join(format!("kcm-{r}-{}.log", starts[r]));
                let text = std::fs::read_to_string(log).ok()?;
                let last = read_ownership("", &text, ns).activations.last().copied()?;
                Some((last, r))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, r)| r);
        // Among the replicas running now (a member that has not joined yet is no target).
        let running: Vec<usize> = (0..n)
            .filter(|r| alive.get(*r).copied().unwrap_or(false))
            .collect();
        match owner.and_then(|o| running.iter().position(|r| *r == o)) {
            Some(at) => running[(at + i) % running.len()],
            None => i,
        }
    }

    /// Continues every paused replica and starts every replica that is down.
    pub(super) fn all_up(&self) -> anyhow::Result<()> {
        let n = self.slots.lock().map(|s| s.len()).unwrap_or(0);
        for i in 0..n {
            self.resume(i);
            self.up(i)?;
        }
        Ok(())
    }
}
