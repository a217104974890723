//! A schedule's plan: which scenario, which testenv faults, and which process faults at which
//! instants. [`Plan::generate`] is a pure function of the seed (and the kind of cluster), so a
//! seed names a schedule exactly.

use std::fmt::Write as _;

use super::rng::SplitMix64;
pub(crate) use crate::upstream::control_plane::Component;

/// The scenarios a schedule can run (see `scenarios.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScenarioKind {
    RollingUpdate,
    Recreate,
    ScaleMidRollout,
    PauseResume,
    Rollback,
    ProportionalTwoOld,
    Adoption,
    Deletion,
    NodeFailure,
    HistoryLimit,
}

impl ScenarioKind {
    /// Every scenario, in the order the plan draws from.
    pub(crate) const ALL: [ScenarioKind; 10] = [
        ScenarioKind::RollingUpdate,
        ScenarioKind::Recreate,
        ScenarioKind::ScaleMidRollout,
        ScenarioKind::PauseResume,
        ScenarioKind::Rollback,
        ScenarioKind::ProportionalTwoOld,
        ScenarioKind::Adoption,
        ScenarioKind::Deletion,
        ScenarioKind::NodeFailure,
        ScenarioKind::HistoryLimit,
    ];

    /// A short name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ScenarioKind::RollingUpdate => "rolling-update",
            ScenarioKind::Recreate => "recreate",
            ScenarioKind::ScaleMidRollout => "scale-mid-rollout",
            ScenarioKind::PauseResume => "pause-resume",
            ScenarioKind::Rollback => "rollback",
            ScenarioKind::ProportionalTwoOld => "proportional-two-old",
            ScenarioKind::Adoption => "adoption-orphaning",
            ScenarioKind::Deletion => "deletion",
            ScenarioKind::NodeFailure => "node-failure",
            ScenarioKind::HistoryLimit => "history-limit",
        }
    }
}

/// What happens to a kcm replica at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KcmAction {
    /// SIGKILL.
    Kill,
    /// SIGTERM (kcm releases its Lease and exits).
    Term,
    /// SIGSTOP, then SIGCONT after the event's `restart_after_ms` (a VM paused, a cgroup
    /// frozen, a debugger): shorter or longer than the lease.
    Pause,
}

/// One process fault: replica `replica` gets `action` at `at_ms` after the scenario starts and
/// is started again (a pause: continued) `restart_after_ms` later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KcmEvent {
    pub(crate) at_ms: u64,
    pub(crate) replica: usize,
    pub(crate) action: KcmAction,
    pub(crate) restart_after_ms: u64,
}

/// A control-plane restart on the upstream cluster: `component` is SIGKILLed at `at_ms` and
/// started again `down_ms` later (then it takes the API server some seconds to be ready).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ControlPlaneEvent {
    pub(crate) at_ms: u64,
    pub(crate) component: Component,
    pub(crate) down_ms: u64,
}

/// The bounds every plan respects.
pub(crate) mod bounds {
    /// Process faults happen within this long after the scenario starts.
    pub(crate) const EVENT_WINDOW_MS: u64 = 8_000;
    /// The earliest process fault.
    pub(crate) const FIRST_EVENT_MS: u64 = 300;
    /// A killed replica is started again within this long.
    pub(crate) const MAX_RESTART_AFTER_MS: u64 = 3_000;
    /// A paused replica is continued after this long at least...
    pub(crate) const MIN_PAUSE_MS: u64 = 500;
    /// ...and at most (the schedules' lease is 3 s).
    pub(crate) const MAX_PAUSE_MS: u64 = 6_000;
    /// The fraction of process faults that are pauses.
    pub(crate) const PAUSE_P: f64 = 0.3;
    /// At most this many kcm kills per schedule.
    pub(crate) const MAX_KCM_EVENTS: usize = 3;
    /// Probabilities of error faults per request stay at or under this.
    pub(crate) const MAX_ERROR_P: f64 = 0.15;
    /// Watch drops per open watch and second stay at or under this.
    pub(crate) const MAX_WATCH_DROP_P: f64 = 0.2;
    /// Added latency stays at or under this (milliseconds).
    pub(crate) const MAX_LATENCY_MS: u64 = 40;
    /// Compactions and restarts are at least this far apart (seconds).
    pub(crate) const MIN_TIMER_S: u64 = 2;
    /// kcm replicas at most.
    pub(crate) const MAX_REPLICAS: usize = 2;
    /// Control-plane restarts per schedule on the upstream cluster.
    pub(crate) const MAX_CONTROL_PLANE_EVENTS: usize = 2;
    /// A killed control-plane component is started again within this long.
    pub(crate) const MAX_CONTROL_PLANE_DOWN_MS: u64 = 3_000;
}

/// One schedule, fully determined by its seed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub(crate) seed: u64,
    pub(crate) scenario: ScenarioKind,
    /// kcm-testenv's `--faults` (empty: none); only kcm's requests are in scope (see
    /// [`fault_spec`]), so the harness's kubectl never sees an injected error.
    pub(crate) faults: String,
    /// kcm replicas; with 2 they elect a leader and a kill of the leader is a takeover.
    pub(crate) replicas: usize,
    /// In time order.
    pub(crate) kcm_events: Vec<KcmEvent>,
    /// In time order; empty unless the plan is for the upstream cluster.
    pub(crate) control_plane: Vec<ControlPlaneEvent>,
    /// The replicas run `--sharding=namespace` (all active, each on its shard).
    pub(crate) sharded: bool,
    /// Sharded: the last replica starts only this long after the scenario starts (a member
    /// added mid-rollout); `None`: every replica starts at once.
    pub(crate) late_join_ms: Option<u64>,
}

impl Plan {
    /// The plan of `seed`; `upstream` adds control-plane restarts (testenv's fault spec is then
    /// unused, as the upstream API server has no fault injection).
    pub(crate) fn generate(seed: u64, upstream: bool) -> Plan {
        let mut rng = SplitMix64::seed_from_u64(seed);
        let scenario = *rng.pick(&ScenarioKind::ALL);
        let faults = if upstream {
            String::new()
        } else {
            fault_spec(&mut rng)
        };
        let replicas = if rng.chance(0.4) {
            bounds::MAX_REPLICAS
        } else {
            1
        };
        let n = rng.range(0, bounds::MAX_KCM_EVENTS as u64) as usize;
        let mut kcm_events: Vec<KcmEvent> = (0..n)
            .map(|_| KcmEvent {
                at_ms: rng.range(bounds::FIRST_EVENT_MS, bounds::EVENT_WINDOW_MS),
                replica: rng.range(0, replicas as u64 - 1) as usize,
                action: if rng.chance(0.7) {
                    KcmAction::Kill
                } else {
                    KcmAction::Term
                },
                restart_after_ms: rng.range(0, bounds::MAX_RESTART_AFTER_MS),
            })
            .collect();
        kcm_events.sort_by_key(|e| e.at_ms);
        let mut control_plane = Vec::new();
        if upstream {
            let n = rng.range(1, bounds::MAX_CONTROL_PLANE_EVENTS as u64);
            for _ in 0..n {
                let at_ms = rng.range(bounds::FIRST_EVENT_MS, bounds::EVENT_WINDOW_MS);
                let component = if rng.chance(0.7) {
                    Component::ApiServer
                } else {
                    Component::Etcd
                };
                let down_ms = rng.range(0, bounds::MAX_CONTROL_PLANE_DOWN_MS);
                control_plane.push(ControlPlaneEvent {
                    at_ms,
                    component,
                    down_ms,
                });
            }
            control_plane.sort_by_key(|e| e.at_ms);
        }
        // Drawn last, so that the rest of a seed's plan is what it was before pauses existed.
        for e in &mut kcm_events {
            if rng.chance(bounds::PAUSE_P) {
                e.action = KcmAction::Pause;
                e.restart_after_ms = rng.range(bounds::MIN_PAUSE_MS, bounds::MAX_PAUSE_MS);
            }
        }
        Plan {
            seed,
            scenario,
            faults,
            replicas,
            kcm_events,
            control_plane,
            sharded: false,
            late_join_ms: None,
        }
    }

    /// The sharded plan of `seed`: the same draws as [`generate`](Self::generate) for the
    /// scenario, testenv faults and control-plane restarts, then three replicas running
    /// `--sharding=namespace` with up to [`bounds::MAX_KCM_EVENTS`] process faults among them
    /// (a SIGTERM leaves the ring, and the replica is started again only late, often after the
    /// scenario), and in half the plans a fourth replica that joins mid-rollout.
    pub(crate) fn generate_sharded(seed: u64, upstream: bool) -> Plan {
        let base = Plan::generate(seed, upstream);
        let mut rng = SplitMix64::seed_from_u64(seed ^ 0x5348_4152_4445_4421);
        let late_join_ms = rng
            .chance(0.5)
            .then(|| rng.range(bounds::FIRST_EVENT_MS, bounds::EVENT_WINDOW_MS));
        let replicas = if late_join_ms.is_some() { 4 } else { 3 };
        let n = rng.range(1, bounds::MAX_KCM_EVENTS as u64) as usize;
        let mut kcm_events: Vec<KcmEvent> = (0..n)
            .map(|_| {
                let action = match rng.range(0, 9) {
                    0..=3 => KcmAction::Kill,
                    4..=5 => KcmAction::Term,
                    _ => KcmAction::Pause,
                };
                let restart_after_ms = match action {
                    KcmAction::Pause => rng.range(bounds::MIN_PAUSE_MS, bounds::MAX_PAUSE_MS),
                    // Left the ring: back late, if before the end at all.
                    KcmAction::Term => rng.range(bounds::MAX_RESTART_AFTER_MS, 12_000),
                    KcmAction::Kill => rng.range(0, bounds::MAX_RESTART_AFTER_MS),
                };
                KcmEvent {
                    at_ms: rng.range(bounds::FIRST_EVENT_MS, bounds::EVENT_WINDOW_MS),
                    replica: rng.range(0, 2) as usize,
                    action,
                    restart_after_ms,
                }
            })
            .collect();
        kcm_events.sort_by_key(|e| e.at_ms);
        Plan {
            replicas,
            kcm_events,
            sharded: true,
            late_join_ms,
            ..base
        }
    }

    /// One line for reports.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!(
            "seed {} scenario {} kcm×{}{}",
            self.seed,
            self.scenario.name(),
            self.replicas,
            if self.sharded { " sharded" } else { "" }
        );
        if let Some(at) = self.late_join_ms {
            let _ = write!(s, " | kcm-{} joins at {at}ms", self.replicas - 1);
        }
        for e in &self.kcm_events {
            let back = if e.action == KcmAction::Pause {
                "continued after"
            } else {
                "back after"
            };
            let _ = write!(
                s,
                " | {:?} kcm-{} at {}ms, {back} {}ms",
                e.action, e.replica, e.at_ms, e.restart_after_ms
            );
        }
        for e in &self.control_plane {
            let _ = write!(
                s,
                " | Kill {} at {}ms, back after {}ms",
                e.component.process_name(),
                e.at_ms,
                e.down_ms
            );
        }
        if !self.faults.is_empty() {
            let _ = write!(s, " | faults {}", self.faults);
        }
        s
    }
}

/// Draws kcm-testenv fault rules, each present with probability ½. Error rules are scoped to
/// requests only kcm makes (writes of ReplicaSets, creates and deletes of pods, status updates,
/// watches), so the harness's own kubectl calls (which do not retry) are never failed on purpose.
fn fault_spec(rng: &mut SplitMix64) -> String {
    let mut rules: Vec<String> = Vec::new();
    let p = |rng: &mut SplitMix64, max: f64| (rng.unit() * max * 1000.0).round() / 1000.0;
    if rng.chance(0.5) {
        rules.push(format!("watch-drop={}", p(rng, bounds::MAX_WATCH_DROP_P)));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "compact-every={}s",
            rng.range(bounds::MIN_TIMER_S, 10)
        ));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "restart-every={}s",
            rng.range(bounds::MIN_TIMER_S + 1, 15)
        ));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "conflict={}@update|patch:replicasets|replicasets/status|deployments/status",
            p(rng, bounds::MAX_ERROR_P)
        ));
    }
    if rng.chance(0.3) {
        rules.push(format!(
            "conflict-bare={}@update:replicasets|deployments/status",
            p(rng, bounds::MAX_ERROR_P)
        ));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "error500={}@create|delete:pods|replicasets",
            p(rng, bounds::MAX_ERROR_P)
        ));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "error503={}@update|patch:replicasets|deployments/status",
            p(rng, bounds::MAX_ERROR_P)
        ));
    }
    if rng.chance(0.3) {
        rules.push(format!("error503={}@watch", p(rng, bounds::MAX_ERROR_P)));
    }
    if rng.chance(0.5) {
        rules.push(format!(
            "throttle={}@create|update|delete:replicasets",
            p(rng, bounds::MAX_ERROR_P)
        ));
    }
    if rng.chance(0.5) {
        let max = rng.range(1, bounds::MAX_LATENCY_MS);
        let min = rng.range(0, max);
        rules.push(format!("latency={min}ms..{max}ms"));
    }
    rules.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_plan() {
        for seed in [0, 1, 42, u64::MAX] {
            assert_eq!(Plan::generate(seed, false), Plan::generate(seed, false));
            assert_eq!(Plan::generate(seed, true), Plan::generate(seed, true));
        }
        let distinct: std::collections::HashSet<String> = (0..50)
            .map(|s| Plan::generate(s, false).describe())
            .collect();
        assert!(distinct.len() > 45, "seeds give varied plans");
    }

    #[test]
    fn sharded_plans_keep_the_seeds_scenario_and_draw_every_fault() {
        let (mut joins, mut kinds) = (0, std::collections::HashSet::new());
        for seed in 0..500 {
            let plan = Plan::generate_sharded(seed, seed % 2 == 0);
            assert_eq!(plan, Plan::generate_sharded(seed, seed % 2 == 0));
            let base = Plan::generate(seed, seed % 2 == 0);
            assert_eq!((plan.scenario, &plan.faults), (base.scenario, &base.faults));
            assert_eq!(plan.control_plane, base.control_plane);
            assert!(plan.sharded && plan.describe().contains(" sharded"));
            assert_eq!(
                plan.replicas,
                if plan.late_join_ms.is_some() { 4 } else { 3 }
            );
            if let Some(at) = plan.late_join_ms {
                joins += 1;
                assert!((bounds::FIRST_EVENT_MS..=bounds::EVENT_WINDOW_MS).contains(&at));
            }
            assert!((1..=bounds::MAX_KCM_EVENTS).contains(&plan.kcm_events.len()));
            assert!(plan.kcm_events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
            for e in &plan.kcm_events {
                assert!(
                    e.replica < 3,
                    "faults hit the replicas there from the start"
                );
                kinds.insert(format!("{:?}", e.action));
            }
        }
        assert!((150..350).contains(&joins), "{joins} joins in 500");
        assert_eq!(
            kinds.len(),
            3,
            "kills, leaves and pauses all drawn: {kinds:?}"
        );
    }

    #[test]
    fn plans_respect_their_bounds() {
        let mut scenarios = std::collections::HashSet::new();
        let (mut takeovers, mut terms, mut pauses) = (0, 0, 0);
        for seed in 0..2000 {
            let plan = Plan::generate(seed, seed % 2 == 0);
            scenarios.insert(plan.scenario.name());
            assert!((1..=bounds::MAX_REPLICAS).contains(&plan.replicas));
            assert!(plan.kcm_events.len() <= bounds::MAX_KCM_EVENTS);
            assert!(plan.kcm_events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
            for e in &plan.kcm_events {
                assert!((bounds::FIRST_EVENT_MS..=bounds::EVENT_WINDOW_MS).contains(&e.at_ms));
                if e.action == KcmAction::Pause {
                    assert!(
                        (bounds::MIN_PAUSE_MS..=bounds::MAX_PAUSE_MS).contains(&e.restart_after_ms)
                    );
                    pauses += 1;
                } else {
                    assert!(e.restart_after_ms <= bounds::MAX_RESTART_AFTER_MS);
                }
                assert!(e.replica < plan.replicas);
                takeovers += usize::from(plan.replicas == 2);
                terms += usize::from(e.action == KcmAction::Term);
            }
            if seed % 2 == 0 {
                assert!(plan.faults.is_empty());
                assert!((1..=bounds::MAX_CONTROL_PLANE_EVENTS).contains(&plan.control_plane.len()));
                for e in &plan.control_plane {
                    assert!((bounds::FIRST_EVENT_MS..=bounds::EVENT_WINDOW_MS).contains(&e.at_ms));
                    assert!(e.down_ms <= bounds::MAX_CONTROL_PLANE_DOWN_MS);
                }
            } else {
                assert!(plan.control_plane.is_empty());
                check_spec_bounds(&plan.faults);
            }
        }
        assert_eq!(
            scenarios.len(),
            ScenarioKind::ALL.len(),
            "every scenario drawn"
        );
        assert!(takeovers > 0 && terms > 0 && pauses > 0);
    }

    /// Every rule of a drawn spec is within the bounds, and the spec parses as testenv's.
    fn check_spec_bounds(spec: &str) {
        if spec.is_empty() {
            return;
        }
        for rule in spec.split(',') {
            let (name, rest) = rule.split_once('=').expect("name=value");
            let value = rest.split('@').next().unwrap_or_default();
            match name {
                "watch-drop" => {
                    let p: f64 = value.parse().expect("probability");
                    assert!((0.0..=bounds::MAX_WATCH_DROP_P).contains(&p), "{rule}");
                }
                "conflict" | "conflict-bare" | "error500" | "error503" | "throttle" => {
                    let p: f64 = value.parse().expect("probability");
                    assert!((0.0..=bounds::MAX_ERROR_P).contains(&p), "{rule}");
                    assert!(rest.contains('@'), "error rules are scoped: {rule}");
                    assert!(!rest.contains("deployments|") && !rest.ends_with(":deployments"));
                }
                "compact-every" | "restart-every" => {
                    let s: u64 = value.trim_end_matches('s').parse().expect("seconds");
                    assert!(s >= bounds::MIN_TIMER_S, "{rule}");
                }
                "latency" => {
                    let (lo, hi) = value.split_once("..").expect("range");
                    let ms = |v: &str| v.trim_end_matches("ms").parse::<u64>().expect("ms");
                    assert!(
                        ms(lo) <= ms(hi) && ms(hi) <= bounds::MAX_LATENCY_MS,
                        "{rule}"
                    );
                }
                other => panic!("unexpected rule {other} in {spec}"),
            }
        }
    }
}
