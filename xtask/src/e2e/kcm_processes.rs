//! The scenarios that own kcm processes: two candidates of one election, the leader killed
//! and the standby taking over, and kcm killed mid-rollout and started again.

use super::*;
use crate::cluster::Proc;

/// The Lease the two candidates compete for: in the scenario's own namespace, so it never
/// collides with kube-controller-manager's (`kube-system/kube-controller-manager`) or a deployed
/// kcm's (`kube-system/kcm`), and goes away with the namespace.
const ELECTION_LEASE: &str = "kcm-e2e-leader-election";

fn lease_holder(c: &Cluster, ns: &str) -> anyhow::Result<Option<String>> {
    let l = c.get_json(&["lease", ELECTION_LEASE, "-n", ns])?;
    Ok(l["spec"]["holderIdentity"]
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_string))
}

/// Two kcm instances with leader election: only the leader acts; after it is killed the other
/// takes over and keeps reconciling. The run's own kcm is stopped meanwhile (it would reconcile
/// regardless of the election) and started again afterwards.
pub(super) fn scenario_leader_election(
    c: &Ctx,
    kcm: &mut Option<Proc>,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    with_own_kcm_stopped(c, kcm, "leader-election", || leader_election(c, ns))
}

fn leader_election(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let lease_name = format!("--leader-elect-resource-name={ELECTION_LEASE}");
    let lease_ns = format!("--leader-elect-resource-namespace={ns}");
    let mut args = vec!["--leader-elect=true", &lease_name, &lease_ns];
    args.extend(FAST_LEASE_FLAGS);
    let mut a = c.start_kcm("kcm-a", &args)?;
    let holder = wait_for("a leader", c.timeout(), || {
        Ok(lease_holder(c, ns).ok().flatten())
    })?;
    let mut b = c.start_kcm("kcm-b", &args)?;
    let (r, mut obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |_| {})?;
    a.kill();
    ensure!(b.is_running(), "the standby must keep running");
    let new_holder = wait_for("the standby to take over", c.timeout(), || {
        Ok(lease_holder(c, ns)?.filter(|h| *h != holder))
    })?;
    c.kubectl(&["-n", ns, "scale", "deployment/web", "--replicas=4"])?;
    watch(c, &r, &mut obs, false, |cl| complete(cl, ns, "web"))?;
    println!("    leader {holder} killed; {new_holder} took over and reconciled");
    let _ = b.terminate(Duration::from_secs(10));
    Ok(obs.samples)
}

/// kcm killed with SIGKILL in the middle of a rollout and restarted converges without extra pods.
pub(super) fn scenario_kcm_restart(
    c: &Ctx,
    kcm: &mut Option<Proc>,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 6, rolling("1", "0"), (1, 0), |_| {})?;
    let v2 = format!("app={}", c.images.v(2));
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", &v2])?;
    std::thread::sleep(Duration::from_millis(800));
    if let Some(mut old) = kcm.take() {
        old.kill();
    }
    *kcm = Some(c.start_kcm("kcm-restarted", &["--leader-elect=false"])?);
    watch(c, &r, &mut obs, true, |cl| complete(cl, ns, "web"))?;
    let pods = active_pods(c, ns, "web")?;
    ensure!(
        pods.len() == 6,
        "exactly 6 active pods after convergence, found {}",
        pods.len()
    );
    Ok(obs.samples)
}
