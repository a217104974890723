//! kcm next to a running upstream kube-controller-manager, both with leader election on their
//! default Leases, as README.md tells operators to run them: each holds its own Lease and keeps
//! renewing it, and kcm reconciles. Runs on `--cluster upstream` only (elsewhere the upstream
//! controller manager is not ours to watch).

use super::*;
use crate::cluster::Proc;

/// kube-controller-manager's Lease and kcm's default one, both in kube-system.
const UPSTREAM_LEASE: &str = "kube-controller-manager";
const KCM_LEASE: &str = "kcm";

/// Holder identity and renew time of a kube-system Lease.
fn lease(c: &Cluster, name: &str) -> anyhow::Result<(String, String)> {
    let l = c.get_json(&["lease", name, "-n", "kube-system"])?;
    Ok((
        l["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        l["spec"]["renewTime"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    ))
}

/// Stops the run's kcm (it runs without election), starts one with leader election and
/// kcm's defaults, checks both Leases are held and renewed while a Deployment rolls out, then
/// puts the run's kcm back.
pub(super) fn scenario_beside_upstream(
    c: &Ctx,
    kcm: &mut Option<Proc>,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    with_own_kcm_stopped(c, kcm, "beside-upstream", || beside_upstream(c, ns))
}

fn beside_upstream(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (upstream_holder, upstream_renew) = lease(c, UPSTREAM_LEASE)?;
    ensure!(
        !upstream_holder.is_empty(),
        "kube-controller-manager holds no lease"
    );
    let mut elected = c.start_kcm("kcm-elected", &["--leader-elect=true"])?;
    let (kcm_holder, kcm_renew) = wait_for("kcm to lead on kube-system/kcm", c.timeout(), || {
        Ok(lease(c, KCM_LEASE)
            .ok()
            .filter(|(holder, _)| !holder.is_empty()))
    })?;
    ensure!(
        kcm_holder != upstream_holder,
        "kcm and kube-controller-manager share the identity {kcm_holder}"
    );
    let (r, mut obs) = start_web(c, ns, 4, rolling("1", "0"), (1, 0), |_| {})?;
    roll_image(c, &r, &mut obs, c.images.v(2))?;
    // Both renew (default retry period 2 s) while both run.
    wait_for("both Leases to be renewed", c.timeout(), || {
        let (u_holder, u_renew) = lease(c, UPSTREAM_LEASE)?;
        let (k_holder, k_renew) = lease(c, KCM_LEASE)?;
        ensure!(
            u_holder == upstream_holder,
            "kube-controller-manager lost its Lease to {u_holder}"
        );
        ensure!(k_holder == kcm_holder, "kcm lost its Lease to {k_holder}");
        Ok((u_renew != upstream_renew && k_renew != kcm_renew).then_some(()))
    })?;
    ensure!(elected.is_running(), "the elected kcm exited");
    println!(
        "    kcm leads on kube-system/kcm as {kcm_holder}; kube-controller-manager keeps kube-system/kube-controller-manager"
    );
    let _ = elected.terminate(Duration::from_secs(15));
    Ok(obs.samples)
}
