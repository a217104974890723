//! Fine-grained random schedules: every step is one member action, one informer delivery, one
//! store commit or one answer, drawn with per-schedule weights ("swarm testing": a schedule where
//! one member's informer lags or bursts, or its Lease writes crawl, finds what evenly mixed
//! schedules almost never do).

use super::schedule::{Coverage, Failure, RATES, Rng, count, quiet, step, traced};
use super::world::{Act, Channel, Outcome, Params, World};

/// Random schedule `seed`: 2–4 members (three schedules in four start from a formed ring),
/// `steps` random steps with faults, then the quiet period.
pub(crate) fn swarm_schedule(
    params: Params,
    seed: u64,
    steps: usize,
    cov: &mut Coverage,
) -> Result<(), Failure> {
    traced(
        seed,
        |trace, cov, out| run_into(params, seed, steps, trace, cov, out),
        cov,
    )
}

fn run_into(
    params: Params,
    seed: u64,
    steps: usize,
    trace: bool,
    cov: &mut Coverage,
    out: &mut Option<World>,
) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let members = 2 + rng.below(3) as usize;
    let offset = rng.below(RATES.len() as u64) as usize;
    let rates: Vec<u64> = (0..members)
        .map(|k| RATES[(k + offset) % RATES.len()])
        .collect();
    let swarm = Swarm::new(&mut rng, params.lease_duration);
    // Three schedules in four start from a formed ring, the others while it forms.
    let mut world = World::new(params, &rates, false);
    if rng.below(4) != 0 {
        quiet(&mut world, &mut Coverage::default())
            .map_err(|e| format!("the initial members do not converge: {e}"))?;
    }
    if trace {
        world.log = Some(Vec::new());
    }
    let world = out.insert(world);
    cov.schedules += 1;
    for _ in 0..steps {
        for (i, node) in world.nodes.iter_mut().enumerate() {
            node.lag = swarm.lag[i % 8];
            node.burst = swarm.burst[i % 8];
        }
        let act = random_act(world, &mut rng, &swarm);
        count(cov, act);
        step(world, act, cov)?;
    }
    quiet(world, cov)
}

/// Per schedule, how likely each kind of step is ("swarm testing": a schedule where one
/// member's informer is persistently slow finds what evenly mixed schedules almost never do).
#[derive(Clone, Debug)]
struct Swarm {
    /// Time steps of up to LD/40 × 2^tempo: from a fast API server to an overloaded one.
    tempo: u64,
    /// Weight of [deliver, commit, respond, drain, list] per member slot.
    member: [[u64; 5]; 8],
    /// Weight of [stall, pause, crash, join, leave].
    faults: [u64; 5],
    /// Informer lag per member slot.
    lag: [u64; 8],
    /// Bursty informers per member slot (see `Node::burst`).
    burst: [Option<(u64, u64)>; 8],
}

impl Swarm {
    fn new(rng: &mut Rng, ld: u64) -> Self {
        let mut pick = |choices: &[u64]| choices[rng.below(choices.len() as u64) as usize];
        let mut member = [[0; 5]; 8];
        for slot in &mut member {
            for (k, w) in slot.iter_mut().enumerate() {
                // Lease writes (commit, respond) slow but not hopeless.
                *w = if k == 1 || k == 2 {
                    pick(&[16, 48, 48])
                } else {
                    pick(&[4, 16, 48, 48])
                };
            }
        }
        let faults = [
            pick(&[0, 1, 2, 4]),
            pick(&[0, 1, 2, 4]),
            pick(&[0, 0, 1]),
            pick(&[0, 1, 2, 4]),
            pick(&[0, 1, 2]),
        ];
        let mut lag = [0; 8];
        for l in &mut lag {
            *l = pick(&[0, 0, ld / 4, ld, 2 * ld]);
        }
        let mut burst = [None; 8];
        for b in &mut burst {
            *b = match pick(&[0, 0, 0, 1, 2]) {
                0 => None,
                k => Some((ld / 2 + k * ld, ld / 20)),
            };
        }
        Self {
            burst,
            tempo: pick(&[1, 2, 3]),
            member,
            faults,
            lag,
        }
    }
}

/// A random enabled step, drawn with the schedule's [`Swarm`] weights (rejection sampling: the
/// same distribution as weighting only the enabled steps, without checking them all).
fn random_act(world: &World, rng: &mut Rng, swarm: &Swarm) -> Act {
    const ADVANCE: u64 = 240;
    let ld = world.params.lease_duration;
    let per_member = |i: usize| -> u64 {
        swarm.member[i % 8].iter().sum::<u64>() + swarm.faults.iter().sum::<u64>() - swarm.faults[3]
    };
    let n = world.nodes.len();
    let total = ADVANCE + (0..n).map(per_member).sum::<u64>() + swarm.faults[3];
    let act = loop {
        let mut roll = rng.below(total);
        let act = if roll < ADVANCE {
            Act::Advance(0)
        } else {
            roll -= ADVANCE;
            let mut drawn = Act::Join;
            for i in 0..n {
                let w = swarm.member[i % 8];
                let f = swarm.faults;
                for (weight, act) in [
                    (w[0], Act::Deliver(i, 0)),
                    (w[1], Act::Commit(i, Outcome::Ok)),
                    (w[2], Act::Respond(i)),
                    (w[3], Act::Drain(i)),
                    (w[4], Act::List(i)),
                    (f[0], Act::Stall(i, Channel::View, 0)),
                    (f[1], Act::Pause(i, 0)),
                    (f[2], Act::Crash(i)),
                    (f[4], Act::Leave(i)),
                ] {
                    if roll < weight {
                        drawn = act;
                        break;
                    }
                    roll -= weight;
                }
                if drawn != Act::Join {
                    break;
                }
            }
            drawn
        };
        if world.enabled(act) {
            break act;
        }
    };
    // Parameters.
    match act {
        Act::Advance(_) => Act::Advance(1 + rng.below((ld / 40) << swarm.tempo)),
        Act::Deliver(i, _) => Act::Deliver(
            i,
            if rng.below(2) == 0 {
                usize::MAX
            } else {
                1 + rng.below(world.due(i) as u64) as usize
            },
        ),
        Act::Commit(i, _) => Act::Commit(
            i,
            match rng.below(20) {
                0 => Outcome::Lost,
                1 => Outcome::TimedOut,
                _ => Outcome::Ok,
            },
        ),
        Act::Stall(i, _, _) => {
            let channel = match rng.below(4) {
                0 => Channel::View,
                1 => Channel::Write,
                2 => Channel::Drain,
                _ => Channel::List,
            };
            Act::Stall(i, channel, ld / 2 + rng.below(2 * ld))
        }
        Act::Pause(i, _) => Act::Pause(i, ld / 4 + rng.below(6 * ld)),
        other => other,
    }
}
