//! `sharded-replicas`: three `kcm --sharding=namespace` replicas split 30 namespaces. Rollouts
//! complete in all of them with exactly the pods asked for; each namespace is written by one
//! replica only; a replica killed with SIGKILL has its namespaces taken over (a scale-up there
//! completes); at exit each surviving replica's caches hold only its shard (their pod caches
//! add up to the cluster's pods). Whether the API server filtered (kube-apiserver with
//! `--feature-gates=ShardedListAndWatch=true`) or the replicas filtered on the client is read
//! from their logs and printed; with `--cluster upstream --feature-gates
//! ShardedListAndWatch=true` it must be the server.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context, ensure};

use super::{Ctx, RUN_LABEL, active_pods, complete, create_namespace, deployment, rolling};
use crate::cluster::{Proc, wait_for};
use crate::observe::Sample;

const RING: &str = "kcm-e2e-shards";
const REPLICAS: usize = 3;
/// Namespace prefixes as people name things. Names that differ only in their last bytes
/// (`<scenario>-1` … `-30`, or `<scenario>-alpha` … `-west`) hash close together and mostly
/// share an owner: FNV-1a, kube-apiserver's shard hash, mixes the last bytes poorly
/// (docs/sharding.md §4). Here they differ at the start.
const PREFIXES: [&str; 30] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "north", "south", "east", "west",
];

/// The scenario (the run's own kcm is stopped meanwhile).
pub(super) fn scenario_sharded(
    c: &Ctx,
    kcm: &mut Option<Proc>,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    super::with_own_kcm_stopped(c, kcm, "sharded-replicas", || sharded(c, ns))
}

fn sharded(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let run = c.get_json(&["namespace", ns])?["metadata"]["labels"][RUN_LABEL]
        .as_str()
        .context("the scenario namespace has no run label")?
        .to_string();
    let lease_ns = format!("--leader-elect-resource-namespace={ns}");
    let ring = format!("--leader-elect-resource-name={RING}");
    let mut args = vec!["--sharding=namespace", &lease_ns, &ring];
    args.extend(super::FAST_LEASE_FLAGS);
    let names: Vec<String> = (0..REPLICAS).map(|i| format!("kcm-shard-{i}")).collect();
    let mut replicas = names
        .iter()
        .map(|n| c.start_kcm(n, &args))
        .collect::<anyhow::Result<Vec<Proc>>>()?;
    wait_for("a ring of three replicas", c.timeout(), || {
        Ok(ring_formed(c, ns)?.then_some(()))
    })?;

    let namespaces: Vec<String> = PREFIXES.iter().map(|p| format!("{p}-{ns}")).collect();
    let outcome = (|| {
        for n in &namespaces {
            create_namespace(c, n, &run, c.timeout())?;
            let d = deployment(n, "web", 2, c.images.v(1), rolling("1", "0"));
            c.kubectl_stdin(&["apply", "-f", "-"], &d)?;
        }
        all_complete(c, &namespaces, "the first rollouts")?;
        for n in &namespaces {
            let image = format!("app={}", c.images.v(2));
            c.kubectl(&["-n", n, "set", "image", "deployment/web", &image])?;
        }
        all_complete(c, &namespaces, "the rollouts to v2")?;
        exact_pods(c, &namespaces, 2)?;
        let before = writers(c, &names, &[0; REPLICAS])?;
        one_writer_each(&before, &namespaces, "before the kill")?;
        let used: BTreeSet<usize> = before.values().flatten().copied().collect();
        ensure!(
            used.len() == REPLICAS,
            "every replica should own some of 30 namespaces: {before:?}"
        );

        // SIGKILL one replica; the others take its namespaces over and scale them.
        let victim = 0;
        let marks = log_lengths(c, &names);
        replicas[victim].kill();
        let killed = std::time::Instant::now();
        for n in &namespaces {
            c.kubectl(&["-n", n, "scale", "deployment/web", "--replicas=3"])?;
        }
        all_complete(c, &namespaces, "the scale-ups after the kill")?;
        exact_pods(c, &namespaces, 3)?;
        let taken_over = killed.elapsed();
        let after = writers(c, &names, &marks)?;
        let orphaned: Vec<String> = before
            .iter()
            .filter(|(_, w)| w.contains(&victim))
            .map(|(n, _)| n.clone())
            .collect();
        one_writer_each(&after, &orphaned, "after the kill")?;
        ensure!(
            after.values().all(|w| !w.contains(&victim)),
            "the killed replica wrote: {after:?}"
        );
        println!(
            "    {} namespaces per replica {:?}; replica {victim} killed, its {} namespaces scaled by the others within {:.1}s",
            namespaces.len(),
            (0..REPLICAS)
                .map(|i| before.values().filter(|w| w.contains(&i)).count())
                .collect::<Vec<_>>(),
            orphaned.len(),
            taken_over.as_secs_f64()
        );

        // Graceful exit: each survivor reports its caches, then leaves the ring. Their pod
        // caches split the cluster's pods (other scenarios' namespaces included: the cluster may
        // be shared, so its pods are counted before and after).
        let before = cluster_pods(c)?;
        for r in replicas.iter_mut().skip(1) {
            let _ = r.terminate(Duration::from_secs(15));
        }
        let after = cluster_pods(c)?;
        let (fewest, most) = (before.min(after), before.max(after));
        let mut cached = Vec::new();
        for name in names.iter().skip(1) {
            let log = read_log(c, name)?;
            cached.push(cached_pods(&log).with_context(|| format!("{name} reported no cache"))?);
        }
        let sum: usize = cached.iter().sum();
        ensure!(
            (fewest..=most).contains(&sum) && cached.iter().all(|n| *n < fewest),
            "the survivors' pod caches {cached:?} should split the cluster's {before}..{after} pods"
        );
        let pods = most;
        let server = names
            .iter()
            .map(|n| read_log(c, n))
            .collect::<anyhow::Result<Vec<String>>>()?
            .iter()
            .any(|l| l.contains("the API server applies the shard selector"));
        let filtering = if server {
            "the API server"
        } else {
            "each replica (client side)"
        };
        println!("    pod caches at exit {cached:?} of {pods}; filtered by {filtering}");
        if gate_on() {
            ensure!(
                server,
                "ShardedListAndWatch is on but no replica saw the server filter"
            );
        }
        Ok(Vec::new())
    })();
    for r in &mut replicas {
        r.kill();
    }
    for n in &namespaces {
        let _ = c.kubectl(&[
            "delete",
            "namespace",
            n,
            "--wait=false",
            "--ignore-not-found",
        ]);
    }
    outcome
}

/// Whether this run's upstream control plane has the `ShardedListAndWatch` gate on.
fn gate_on() -> bool {
    super::FEATURE_GATES
        .get()
        .is_some_and(|g| g.contains("ShardedListAndWatch=true"))
}

/// Pods in the whole cluster.
fn cluster_pods(c: &Ctx) -> anyhow::Result<usize> {
    let pods = c.get_json(&["pods", "-A"])?;
    Ok(pods["items"].as_array().map_or(0, Vec::len))
}

fn ring_formed(c: &Ctx, ns: &str) -> anyhow::Result<bool> {
    let leases = c.get_json(&[
        "leases",
        "-n",
        ns,
        "-l",
        &format!("sharding.kcm.io/ring={RING}"),
    ])?;
    let items = leases["items"].as_array().cloned().unwrap_or_default();
    let applied: BTreeSet<String> = items
        .iter()
        .filter_map(|l| l["metadata"]["annotations"]["sharding.kcm.io/applied-ring"].as_str())
        .map(str::to_string)
        .collect();
    Ok(items.len() == REPLICAS && applied.len() == 1 && applied.iter().all(|a| !a.is_empty()))
}

fn all_complete(c: &Ctx, namespaces: &[String], what: &str) -> anyhow::Result<()> {
    wait_for(what, c.timeout(), || {
        for n in namespaces {
            if !complete(c, n, "web")? {
                return Ok(None);
            }
        }
        Ok(Some(()))
    })
}

fn exact_pods(c: &Ctx, namespaces: &[String], want: usize) -> anyhow::Result<()> {
    for n in namespaces {
        let pods = active_pods(c, n, "web")?;
        ensure!(
            pods.len() == want,
            "{n}: {} active pods, want exactly {want}",
            pods.len()
        );
    }
    Ok(())
}

fn read_log(c: &Ctx, name: &str) -> anyhow::Result<String> {
    let path = c.dir().join(format!("{name}.log"));
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

fn log_lengths(c: &Ctx, names: &[String]) -> Vec<usize> {
    names
        .iter()
        .map(|n| read_log(c, n).map(|l| l.len()).unwrap_or(0))
        .collect()
}

/// Namespace → the replicas that sent writes there (from each log after its mark).
fn writers(
    c: &Ctx,
    names: &[String],
    marks: &[usize],
) -> anyhow::Result<BTreeMap<String, Vec<usize>>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let log = read_log(c, name)?;
        let from = marks.get(i).copied().unwrap_or(0).min(log.len());
        let written: BTreeSet<&str> = log[from..]
            .lines()
            .filter(|l| l.contains("\"API write\"") && !l.contains("result=\"fenced\""))
            .filter_map(|l| l.split("object=\"").nth(1))
            .filter_map(|rest| rest.split('/').next())
            .collect();
        for n in written {
            out.entry(n.to_string()).or_default().push(i);
        }
    }
    Ok(out)
}

fn one_writer_each(
    writers: &BTreeMap<String, Vec<usize>>,
    namespaces: &[String],
    when: &str,
) -> anyhow::Result<()> {
    for n in namespaces {
        let w = writers.get(n).cloned().unwrap_or_default();
        ensure!(w.len() == 1, "{when}: {n} written by replicas {w:?}");
    }
    Ok(())
}

/// The pods a replica's caches held at exit (its `cached objects … at exit` lines).
fn cached_pods(log: &str) -> Option<usize> {
    log.lines()
        .rev()
        .filter(|l| l.contains("cached objects of this replica's shard at exit"))
        .filter(|l| l.contains("informer=\"Pod"))
        .filter_map(|l| l.split("objects=").nth(1))
        .filter_map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .next()
}
