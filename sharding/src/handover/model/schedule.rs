//! What every driver shares: the schedule's random source, a failure with its trace, coverage
//! counters, one checked step, and the quiet period that checks liveness.

use std::fmt;

use super::world::{Act, Outcome, Params, World};

/// Clock rates per mille: ρ = 4 %, within the 15 % margin (A2 needs margin > 2ρ/(1+ρ) ≈ 7.7 %).
pub(crate) const RATES: [u64; 5] = [1000, 1040, 960, 1025, 975];

/// SplitMix64: small, seedable, and the same on every platform.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A schedule that broke the claim (or the shell contract, or liveness).
#[derive(Debug)]
pub(crate) struct Failure {
    pub seed: u64,
    pub what: String,
    /// The schedule's trace up to the failure (the last lines).
    pub trace: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.what)?;
        for line in &self.trace {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// What the schedules exercised, summed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Coverage {
    pub schedules: u64,
    pub steps: u64,
    pub starts: u64,
    /// Starts on ranges a member cut off by its fence still held.
    pub takeovers: u64,
    pub fence_closures: u64,
    pub failed_writes: u64,
    pub pauses: u64,
    pub crashes: u64,
    pub joins: u64,
    pub leaves: u64,
    pub stalls: u64,
}

pub(super) fn count(cov: &mut Coverage, act: Act) {
    match act {
        Act::Pause(..) => cov.pauses += 1,
        Act::Crash(_) => cov.crashes += 1,
        Act::Join => cov.joins += 1,
        Act::Leave(_) => cov.leaves += 1,
        Act::Stall(..) => cov.stalls += 1,
        Act::Commit(_, Outcome::Lost | Outcome::TimedOut) => cov.failed_writes += 1,
        _ => {}
    }
}

/// Applies `act` and checks the claim.
pub(super) fn step(world: &mut World, act: Act, cov: &mut Coverage) -> Result<(), String> {
    world.apply(act);
    cov.steps += 1;
    world.check_safety().map_err(|e| {
        let state = world.describe();
        format!("at t={} after {act:?}: {e}\n{state}", world.now)
    })?;
    cov.starts += world.take_starts();
    cov.takeovers += world.take_takeovers();
    cov.fence_closures += world.take_fence_closures();
    Ok(())
}

/// The quiet period: faults stop, paused members resume, stalled channels flow, every step
/// happens promptly. Within 30 lease durations the members alive must converge.
pub(crate) fn quiet(world: &mut World, cov: &mut Coverage) -> Result<(), String> {
    world.calm();
    if world.staying() == 0 {
        step(world, Act::Join, cov)?;
    }
    let deadline = world.now + 30 * world.params.lease_duration;
    let tick = world.params.renew_period / 4;
    while !world.converged() {
        if world.now > deadline {
            return Err(format!(
                "liveness: no single owner per hash 30 LD into the quiet period\n{}",
                world.describe()
            ));
        }
        step(world, Act::Advance(tick), cov)?;
        for i in 0..world.nodes.len() {
            for act in [
                Act::Deliver(i, usize::MAX),
                Act::Commit(i, Outcome::Ok),
                Act::Respond(i),
                Act::Drain(i),
                Act::Drain(i),
                Act::List(i),
            ] {
                if world.enabled(act) {
                    step(world, act, cov)?;
                }
            }
        }
    }
    Ok(())
}

/// Brings a fresh world to a converged state without faults.
pub(crate) fn settled(params: Params, rates: &[u64]) -> World {
    let mut world = World::new(params, rates, false);
    let mut cov = Coverage::default();
    if let Err(e) = quiet(&mut world, &mut cov) {
        panic!("the initial members do not converge: {e}");
    }
    world
}

/// Runs `run` (a schedule, seeded) and, if it fails, runs it again with the trace on (the same
/// seed replays the same schedule) to return the failure with its last 400 trace lines.
pub(super) fn traced(
    seed: u64,
    run: impl Fn(bool, &mut Coverage, &mut Option<World>) -> Result<(), String>,
    cov: &mut Coverage,
) -> Result<(), Failure> {
    match run(false, cov, &mut None) {
        Ok(()) => Ok(()),
        Err(what) => {
            let mut world = None;
            let _ = run(true, &mut Coverage::default(), &mut world);
            let mut trace = world.and_then(|w| w.log).unwrap_or_default();
            let keep = trace.len().saturating_sub(400);
            trace.drain(..keep);
            Err(Failure { seed, what, trace })
        }
    }
}
