//! The claim over many schedules, and the checker catching broken variants.

use std::time::Instant;

use super::Fault;
use super::exhaustive::{Explored, exhaustive, replay};
use super::rounds::round_schedule;
use super::schedule::{Coverage, Failure, RATES, settled};
use super::swarm::swarm_schedule;
use super::world::{Act, Channel, Outcome, Params, Rule, World};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The schedules must reach what the claim is about.
fn assert_coverage(cov: &Coverage) {
    let n = cov.schedules;
    for (what, count, at_least) in [
        ("starts", cov.starts, n),
        ("takeovers from fenced-off members", cov.takeovers, n / 20),
        ("fence closures", cov.fence_closures, n / 10),
        ("failed or timed-out writes", cov.failed_writes, n / 10),
        ("pauses", cov.pauses, n / 10),
        ("crashes", cov.crashes, n / 20),
        ("joins", cov.joins, n / 10),
        ("leaves", cov.leaves, n / 10),
        ("stalls", cov.stalls, n / 10),
    ] {
        assert!(count >= at_least, "too few {what}: {cov:?}");
    }
}

#[test]
fn swarm_schedules_keep_one_owner_per_hash() {
    let schedules = env("SHARDING_MODEL_SCHEDULES", 800);
    let steps = env("SHARDING_MODEL_STEPS", 600) as usize;
    let started = Instant::now();
    let mut cov = Coverage::default();
    for seed in 0..schedules {
        if let Err(failure) = swarm_schedule(Params::standard(), seed, steps, &mut cov) {
            panic!("{failure}");
        }
    }
    println!(
        "swarm: {schedules} schedules of {steps} steps + quiet period in {:.1?}: {cov:?}",
        started.elapsed()
    );
    assert_coverage(&cov);
}

#[test]
fn round_schedules_keep_one_owner_per_hash() {
    let schedules = env("SHARDING_MODEL_SCHEDULES", 800);
    let started = Instant::now();
    let mut cov = Coverage::default();
    for seed in 0..schedules {
        if let Err(failure) = round_schedule(Params::standard(), seed, 200, &mut cov) {
            panic!("{failure}");
        }
    }
    println!(
        "rounds: {schedules} schedules of 200 rounds + quiet period in {:.1?}: {cov:?}",
        started.elapsed()
    );
    assert_coverage(&cov);
}

#[test]
fn schedules_replay_identically() {
    let run = |seed| {
        let mut cov = Coverage::default();
        let swarm = swarm_schedule(Params::standard(), seed, 300, &mut cov).map_err(|f| f.what);
        let rounds = round_schedule(Params::standard(), seed, 100, &mut cov).map_err(|f| f.what);
        (swarm, rounds, cov.steps, cov.starts, cov.takeovers)
    };
    for seed in [3, 17] {
        assert_eq!(run(seed), run(seed));
    }
}

/// The first failing round schedule among `seeds`, and how many it took.
fn search(params: Params, seeds: u64) -> Option<Failure> {
    let mut cov = Coverage::default();
    let started = Instant::now();
    let found = (0..seeds).find_map(|seed| round_schedule(params, seed, 200, &mut cov).err());
    println!(
        "{} schedules searched in {:.1?}",
        cov.schedules,
        started.elapsed()
    );
    found
}

fn assert_caught(failure: Option<Failure>, what: &str) {
    let failure = failure.unwrap_or_else(|| panic!("no counterexample for {what}"));
    println!("counterexample for {what}:\n{failure}");
    assert!(failure.what.contains("both active on"), "{}", failure.what);
}

#[test]
fn a_barrier_without_b1_is_caught() {
    let params = Params {
        fault: Some(Fault::SkipB1),
        ..Params::standard()
    };
    assert_caught(search(params, 2000), "a barrier without b1");
}

#[test]
fn a_barrier_waiting_for_previous_owners_only_is_caught() {
    let params = Params {
        fault: Some(Fault::PreviousOwnerOnly),
        ..Params::standard()
    };
    assert_caught(
        search(params, 2000),
        "a barrier waiting for the previous owners only",
    );
}

/// One round of a script: time passes, then each member in `who` does whatever it can.
fn round(world: &mut World, who: &[usize], dt: u64) -> Result<(), String> {
    world.apply(Act::Advance(dt));
    world.check_safety()?;
    for &i in who {
        for act in [
            Act::Deliver(i, usize::MAX),
            Act::Commit(i, Outcome::Ok),
            Act::Respond(i),
            Act::Drain(i),
            Act::List(i),
        ] {
            if world.enabled(act) {
                world.apply(act);
                world.check_safety()?;
            }
        }
    }
    Ok(())
}

fn rounds(world: &mut World, n: usize, who: &[usize]) -> Result<(), String> {
    (0..n).try_for_each(|_| round(world, who, 50))
}

fn set_stall(world: &mut World, i: usize, channel: Channel, stalled: bool) {
    world.nodes[i].stalled_until[channel as usize] = if stalled { u64::MAX / 2 } else { 0 };
}

/// The schedule that breaks `docs/sharding.md` ("Membership") as first drafted (live = a change observed
/// within LD by the observer's clock), with LD 1000 ticks, for two members j and m on a formed
/// ring. The same schedule is harmless under [`Liveness`](crate::Liveness).
fn observer_clock_schedule(rule: Rule) -> (Result<(), String>, World) {
    let params = Params {
        rule,
        ..Params::standard()
    };
    let mut w = settled(params, &RATES[..2]);
    w.log = Some(Vec::new());
    let (j, m, p) = (0, 1, 2);
    let result = (|| {
        // j's informer stalls while m keeps renewing. After LD without a change of m's Lease, j
        // judges m gone and acknowledges the ring {j} (nothing to drain: it only gains).
        set_stall(&mut w, j, Channel::View, true);
        rounds(&mut w, 40, &[j, m])?;
        // p joins. j's informer delivers once: m is live again and p takes part of j's shard;
        // j stops that part, and its drain hangs, so j cannot acknowledge {j, m, p}: its Lease
        // keeps naming {j}.
        w.apply(Act::Join);
        rounds(&mut w, 4, &[m, p])?;
        set_stall(&mut w, j, Channel::View, false);
        set_stall(&mut w, j, Channel::Drain, true);
        w.apply(Act::Deliver(j, usize::MAX));
        w.check_safety()?;
        // j's informer stalls again: after LD, m and p are gone for j, whose view holds its own
        // acknowledgement of {j} (b1), the ring {j} (b2) and no other live member (b3). Once the
        // drain ends, j starts on everything, m's shard included, while m is active.
        set_stall(&mut w, j, Channel::View, true);
        rounds(&mut w, 30, &[j, m, p])?;
        set_stall(&mut w, j, Channel::Drain, false);
        rounds(&mut w, 30, &[j, m, p])
    })();
    (result, w)
}

#[test]
fn observer_clock_expiry_is_caught() {
    let (result, w) = observer_clock_schedule(Rule::ObserverClock);
    let log = w.log.unwrap_or_default();
    let tail = log[log.len().saturating_sub(60)..].join("\n");
    let violation = result.expect_err("the observer-clock rule survived its counterexample");
    println!("{violation}\n{tail}");
    assert!(
        violation.contains("m0 and m1 both active on"),
        "{violation}"
    );

    let (result, w) = observer_clock_schedule(Rule::Anchored);
    assert_eq!(result, Ok(()), "{}", w.describe());
}

#[test]
#[ignore = "a long search: cargo test -p kcm-sharding --release -- --ignored"]
fn observer_clock_expiry_is_found_by_the_round_search() {
    let params = Params {
        rule: Rule::ObserverClock,
        ..Params::standard()
    };
    assert_caught(
        search(params, env("SHARDING_MODEL_SCHEDULES", 20_000)),
        "observer-clock expiry",
    );
}

/// Small time constants, so that expiry is a few steps away: LD 20, margin 15 %, renewals every
/// 10, time in steps of 10, at most 3 members.
fn coarse() -> Params {
    Params {
        lease_duration: 20,
        fence_window: 17,
        renew_period: 10,
        max_alive: 3,
        ..Params::standard()
    }
}

/// Every step kind, with faults.
fn with_faults(world: &World) -> Vec<Act> {
    let mut acts = without_faults(world);
    acts.push(Act::Join);
    for i in 0..world.nodes.len() {
        acts.extend([Act::Pause(i, 30), Act::Crash(i), Act::Leave(i)]);
    }
    acts
}

/// Deliveries (one change or all), commits (applied, or applied with an error answer), answers,
/// drains, lists and time.
fn without_faults(world: &World) -> Vec<Act> {
    let mut acts = vec![Act::Advance(10)];
    for i in 0..world.nodes.len() {
        acts.extend([
            Act::Deliver(i, 1),
            Act::Deliver(i, usize::MAX),
            Act::Commit(i, Outcome::Ok),
            Act::Commit(i, Outcome::TimedOut),
            Act::Respond(i),
            Act::Drain(i),
            Act::List(i),
        ]);
    }
    acts
}

/// Runs `rounds` rounds in which the members `who` do all they can, time in steps of 5.
fn coarse_rounds(world: &mut World, n: usize, who: &[usize]) {
    for _ in 0..n {
        if let Err(e) = round(world, who, 5) {
            panic!("while preparing: {e}");
        }
    }
}

/// m0 was paused past its fence; m1 judged it gone and took its shard; m0 has resumed, noticed
/// its closed fence and asked to clear its acknowledgement, its informer still showing the ring
/// of before.
fn after_a_takeover(params: Params) -> World {
    let mut w = settled(params, &RATES[..2]);
    w.apply(Act::Pause(0, 100));
    for _ in 0..200 {
        if w.effective_active(1).is_full() {
            break;
        }
        coarse_rounds(&mut w, 1, &[1]);
    }
    assert!(w.effective_active(1).is_full(), "{}", w.describe());
    while w.nodes[0].status != super::node::Status::Running {
        coarse_rounds(&mut w, 1, &[1]);
    }
    w.apply(Act::Advance(1));
    assert_eq!(
        w.nodes[0].machine.phase(),
        crate::handover::Phase::Rejoining
    );
    w
}

fn explore(name: &str, start: &World, depth: usize, menu: &dyn Fn(&World) -> Vec<Act>) -> Explored {
    let started = Instant::now();
    match exhaustive(start, depth, menu) {
        Ok(explored) => {
            println!(
                "{name}: every schedule of {depth} steps, {explored:?} in {:.1?}",
                started.elapsed()
            );
            explored
        }
        Err((acts, e)) => panic!("{name}: {e}\n{}", replay(start, &acts).join("\n")),
    }
}

#[test]
fn exhaustive_from_a_formed_ring() {
    let depth = env("SHARDING_MODEL_DEPTH", 5) as usize;
    explore(
        "two members",
        &settled(coarse(), &RATES[..2]),
        depth,
        &with_faults,
    );
    explore(
        "three members",
        &settled(coarse(), &RATES[..3]),
        depth - 1,
        &with_faults,
    );
    let mut joining = settled(coarse(), &RATES[..2]);
    joining.apply(Act::Join);
    explore("a third member joining", &joining, depth, &without_faults);
}

#[test]
fn exhaustive_after_a_takeover() {
    let depth = env("SHARDING_MODEL_DEPTH", 5) as usize + 2;
    let start = after_a_takeover(coarse());
    explore("rejoin after a takeover", &start, depth, &without_faults);
}

#[test]
fn exhaustive_search_catches_a_barrier_without_b1() {
    let params = Params {
        fault: Some(Fault::SkipB1),
        ..coarse()
    };
    let start = after_a_takeover(params);
    let (acts, e) = exhaustive(&start, 7, &without_faults).expect_err("no counterexample");
    println!("{e} after {acts:?}\n{}", replay(&start, &acts).join("\n"));
    assert!(e.contains("both active on"), "{e}");
}
