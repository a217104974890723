//! Coarse random schedules: rounds in which every member does whatever its open channels allow,
//! toggles that stall or reopen one member's channel for as long as the schedule likes, and
//! membership faults. Long one-sided stalls, the stuff of the subtle counterexamples, are common
//! here and rare in [`swarm`](super::swarm) schedules.

use super::schedule::{Coverage, Failure, RATES, Rng, count, quiet, step, traced};
use super::world::{Act, Channel, Outcome, Params, World};

/// Coarse random schedule `seed`: `rounds` steps, each either a round (time passes, then every
/// member does whatever its open channels allow), the toggle of one member's channel (informer,
/// Lease writes, drains, lists) between open and stalled, or a membership fault; then the quiet
/// period. Long stalls of one channel while the rest flows are what these schedules add.
pub(crate) fn round_schedule(
    params: Params,
    seed: u64,
    rounds: usize,
    cov: &mut Coverage,
) -> Result<(), Failure> {
    traced(
        seed,
        |trace, cov, out| run_rounds(params, seed, rounds, trace, cov, out),
        cov,
    )
}

fn run_rounds(
    params: Params,
    seed: u64,
    rounds: usize,
    trace: bool,
    cov: &mut Coverage,
    out: &mut Option<World>,
) -> Result<(), String> {
    const STALLED: u64 = u64::MAX / 2;
    let mut rng = Rng::new(seed ^ 0x0005_eed0_f0c0_a75e);
    let members = 2 + rng.below(3) as usize;
    let offset = rng.below(RATES.len() as u64) as usize;
    let rates: Vec<u64> = (0..members)
        .map(|k| RATES[(k + offset) % RATES.len()])
        .collect();
    let mut world = World::new(params, &rates, false);
    quiet(&mut world, &mut Coverage::default())
        .map_err(|e| format!("the initial members do not converge: {e}"))?;
    if trace {
        world.log = Some(Vec::new());
    }
    let world = out.insert(world);
    cov.schedules += 1;
    let ld = params.lease_duration;
    for _ in 0..rounds {
        let n = world.nodes.len();
        let i = rng.below(n as u64) as usize;
        match rng.below(20) {
            0..=12 => {
                step(world, Act::Advance(params.renew_period / 3), cov)?;
                for k in 0..n {
                    let k = (k + i) % n;
                    let outcome = match rng.below(30) {
                        0 => Outcome::Lost,
                        1 => Outcome::TimedOut,
                        _ => Outcome::Ok,
                    };
                    for act in [
                        Act::Deliver(k, usize::MAX),
                        Act::Commit(k, outcome),
                        Act::Respond(k),
                        Act::Drain(k),
                        Act::List(k),
                    ] {
                        if world.enabled(act) {
                            count(cov, act);
                            step(world, act, cov)?;
                        }
                    }
                }
            }
            13..=17 => {
                let channel = match rng.below(4) {
                    0 | 1 => Channel::View,
                    2 => Channel::Drain,
                    _ => Channel::Write,
                };
                let stalled = world.nodes[i].stalled_until[channel as usize] > world.now;
                let until = if stalled { 0 } else { STALLED };
                world.nodes[i].stalled_until[channel as usize] = until;
                cov.stalls += u64::from(!stalled);
            }
            _ => {
                let act = match rng.below(5) {
                    0 | 1 => Act::Join,
                    2 => Act::Leave(i),
                    3 => Act::Pause(i, ld / 2 + rng.below(4 * ld)),
                    _ => Act::Crash(i),
                };
                if world.enabled(act) {
                    count(cov, act);
                    step(world, act, cov)?;
                }
            }
        }
    }
    quiet(world, cov)
}
