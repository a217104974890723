//! Bounded exhaustive search: every schedule of a few steps from a given state.

use std::collections::HashMap;

use super::world::{Act, World};

/// The result of a bounded exhaustive search.
#[derive(Debug, Default)]
pub(crate) struct Explored {
    pub states: u64,
    pub transitions: u64,
}

/// Every schedule of up to `depth` steps from `start`, each step one of `menu(world)` that is
/// enabled, with the claim checked after each; states already explored with at least as many
/// steps left are skipped. A violation returns its schedule.
pub(crate) fn exhaustive(
    start: &World,
    depth: usize,
    menu: &dyn Fn(&World) -> Vec<Act>,
) -> Result<Explored, (Vec<Act>, String)> {
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut explored = Explored::default();
    let mut path = Vec::new();
    dfs(start, depth, menu, &mut seen, &mut explored, &mut path)?;
    Ok(explored)
}

fn dfs(
    world: &World,
    left: usize,
    menu: &dyn Fn(&World) -> Vec<Act>,
    seen: &mut HashMap<u64, usize>,
    explored: &mut Explored,
    path: &mut Vec<Act>,
) -> Result<(), (Vec<Act>, String)> {
    if left == 0 {
        return Ok(());
    }
    for act in menu(world) {
        if !world.enabled(act) {
            continue;
        }
        let mut next = world.clone();
        next.apply(act);
        explored.transitions += 1;
        path.push(act);
        if let Err(e) = next.check_safety() {
            return Err((path.clone(), e));
        }
        let h = next.state_hash();
        if seen.get(&h).is_none_or(|&l| l < left - 1) {
            seen.insert(h, left - 1);
            explored.states += 1;
            dfs(&next, left - 1, menu, seen, explored, path)?;
        }
        path.pop();
    }
    Ok(())
}

/// Replays `acts` from `start` with the trace on: the counterexample, readable.
pub(crate) fn replay(start: &World, acts: &[Act]) -> Vec<String> {
    let mut world = start.clone();
    world.log = Some(Vec::new());
    for &act in acts {
        world.apply(act);
        if world.check_safety().is_err() {
            break;
        }
    }
    let mut log = world.log.take().unwrap_or_default();
    log.push(world.describe());
    log
}
