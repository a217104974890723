//! Running the scenarios: the cluster and kcm for the chosen mode, a namespace per scenario,
//! timelines, clean-up, and the summary.

use std::path::Path;
use std::time::Instant;

use super::options::{Options, USAGE};
use super::scenarios::{ALL, Kind};
use super::*;
use crate::cluster::{ClusterKind, Proc, build};
use crate::observe::write_timeline;

/// How one scenario ended.
#[derive(Debug)]
enum Outcome {
    Passed,
    Failed(String),
    Skipped(&'static str),
}

/// Why the scenarios next to upstream's controller manager run on one cluster only.
const NEEDS_UPSTREAM: &str = "needs --cluster upstream";

/// Why the kcm-process scenarios do not run with `--no-kcm`.
const NEEDS_OWN_KCM: &str = "needs --kubeconfig without --no-kcm";

/// A short random id for this run's namespaces: six characters of `[a-z0-9]`.
fn run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    let mut n = h.finish();
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..6)
        .map(|_| {
            let c = alphabet[(n % 36) as usize] as char;
            n /= 36;
            c
        })
        .collect()
}

/// The namespace of `scenario`: `e2e-<scenario>` on kcm-testenv (a cluster of its own),
/// `kcm-e2e-<run>-<scenario>` on an external cluster, where runs and other users share it.
fn namespace_name(external: bool, run: &str, scenario: &str) -> String {
    if external {
        format!("kcm-e2e-{run}-{scenario}")
    } else {
        format!("e2e-{scenario}")
    }
}

/// Deletes the run's namespaces (by label) when dropped, on every way out of [`run`].
struct Cleanup<'a> {
    cluster: &'a Cluster,
    run: String,
    enabled: bool,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if !self.enabled {
            return;
        }
        let selector = format!("{RUN_LABEL}={}", self.run);
        match self.cluster.kubectl(&[
            "delete",
            "namespaces",
            "-l",
            &selector,
            "--wait=false",
            "--ignore-not-found",
        ]) {
            Ok(_) => println!("e2e: namespaces labelled {selector} are being deleted"),
            Err(e) => eprintln!(
                "e2e: could not delete the namespaces labelled {selector} ({e:#}); delete them \
                 with `kubectl delete namespaces -l {selector}`"
            ),
        }
    }
}

fn print_list() {
    for (name, kind) in ALL {
        let note = match kind {
            Kind::Plain(_) => "",
            Kind::OwnKcm(_) => "  (kills/starts kcm processes; skipped with --no-kcm)",
            Kind::BesideUpstream(_) => "  (--cluster upstream only)",
        };
        println!("{name}{note}");
    }
}

/// `cargo xtask e2e [flags]`: see [`USAGE`].
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let opts = Options::parse(args)?;
    if opts.help {
        print!("{USAGE}");
        return Ok(());
    }
    if opts.list {
        print_list();
        return Ok(());
    }
    if let Some(unknown) = opts
        .only
        .iter()
        .find(|n| !ALL.iter().any(|(name, _)| name == n))
    {
        bail!("--only: no scenario named `{unknown}` (see cargo xtask e2e --list)");
    }
    let external = opts.external();
    // One cargo invocation for every binary a scenario runs: the sample controller's kube
    // features (derive) change the shared crates' build, and separate invocations would
    // rebuild them each time.
    match (external, opts.no_kcm) {
        (false, _) => build(&["kcm", "kcm-testenv-cli", "kcm-sample-controller"])?,
        (true, false) => build(&["kcm", "kcm-sample-controller"])?,
        (true, true) => build(&["kcm-sample-controller"])?,
    }
    let dir = crate::cluster::target_dir().join(if external {
        "e2e-external"
    } else if opts.upstream {
        "e2e-upstream"
    } else {
        "e2e"
    });
    let _ = std::fs::remove_dir_all(&dir);
    let cluster = match &opts.kubeconfig {
        Some(kubeconfig) => Cluster::external(&dir, kubeconfig, opts.context.as_deref())
            .context("using the external cluster")?,
        None if opts.upstream => {
            if let Some(gates) = &opts.feature_gates {
                let _ = super::FEATURE_GATES.set(gates.clone());
            }
            let bins = crate::upstream::build::build()?;
            let cp = crate::upstream::control_plane::Options {
                feature_gates: opts.feature_gates.clone().unwrap_or_default(),
                ..Default::default()
            };
            crate::upstream::control_plane::start(&dir, &bins, &cp).with_context(|| {
                format!(
                    "starting the upstream control plane (logs in {})",
                    dir.display()
                )
            })?
        }
        None => Cluster::start(&dir, &["--nodes", "3", "--pod-ready-after", "300ms"])
            .context("starting kcm-testenv")?,
    };
    if external {
        preflight::run(&cluster, opts.no_kcm, opts.strict)?;
    }
    let images = if external {
        Images::pause(opts.image_repo.as_deref())
    } else {
        Images::testenv()
    };
    let run = run_id();
    let ctx = Ctx {
        cluster: &cluster,
        images: &images,
        scale: opts.timeout_scale(),
    };
    println!(
        "e2e: {} at {}, run {run}, images {} … {}, waits ×{}",
        match cluster.kind {
            ClusterKind::External => "external cluster",
            ClusterKind::Upstream => "upstream control plane",
            ClusterKind::Testenv => "kcm-testenv",
        },
        cluster.url,
        images.v(1),
        images.v(4),
        ctx.scale
    );
    let _cleanup = Cleanup {
        cluster: &cluster,
        run: run.clone(),
        enabled: external && !opts.keep,
    };
    let mut kcm: Option<Proc> = if opts.no_kcm {
        None
    } else {
        Some(cluster.start_kcm("kcm", &["--leader-elect=false"])?)
    };

    let mut results: Vec<(&str, Outcome, f64)> = Vec::new();
    for (name, kind) in ALL {
        if !opts.only.is_empty() && !opts.only.iter().any(|n| n == name) {
            continue;
        }
        if matches!(kind, Kind::BesideUpstream(_)) && cluster.kind != ClusterKind::Upstream {
            println!("e2e: {name} skipped ({NEEDS_UPSTREAM})");
            results.push((name, Outcome::Skipped(NEEDS_UPSTREAM), 0.0));
            continue;
        }
        if opts.no_kcm && matches!(kind, Kind::OwnKcm(_)) {
            println!("e2e: {name} skipped ({NEEDS_OWN_KCM})");
            results.push((name, Outcome::Skipped(NEEDS_OWN_KCM), 0.0));
            continue;
        }
        let ns = namespace_name(external, &run, name);
        let start = Instant::now();
        println!("e2e: {name} ...");
        let outcome = create_namespace(&cluster, &ns, &run, ctx.timeout())
            .and_then(|()| match kind {
                Kind::Plain(f) => f(&ctx, &ns),
                Kind::OwnKcm(f) | Kind::BesideUpstream(f) => f(&ctx, &mut kcm, &ns),
            })
            .and_then(|samples| timeline(&dir, name, &samples));
        let secs = start.elapsed().as_secs_f64();
        let outcome = match outcome {
            Ok(()) => {
                println!("e2e: {name} passed ({secs:.1}s)");
                Outcome::Passed
            }
            Err(e) => {
                println!("e2e: {name} FAILED ({secs:.1}s): {e:#}");
                Outcome::Failed(format!("{e:#}"))
            }
        };
        if external && !opts.keep {
            // Free the cluster's capacity for the next scenario; the run's label catches any
            // namespace this misses when the run ends.
            let _ = cluster.kubectl(&[
                "delete",
                "namespace",
                &ns,
                "--wait=false",
                "--ignore-not-found",
            ]);
        }
        results.push((name, outcome, secs));
    }
    drop(kcm);
    summary(&results, &dir, external && opts.keep, &run);
    let failed = results
        .iter()
        .filter(|r| matches!(r.1, Outcome::Failed(_)))
        .count();
    ensure!(failed == 0, "{failed} e2e scenario(s) failed");
    if cluster.kind == ClusterKind::Upstream {
        let denied = forbidden_lines(&dir)?;
        ensure!(
            denied.is_empty(),
            "kcm was denied by RBAC (deploy/rbac.yaml is incomplete):\n{}",
            denied.join("\n")
        );
        println!("e2e: no 403 in kcm's logs: deploy/rbac.yaml grants all kcm used");
    }
    Ok(())
}

/// Lines of kcm's logs (`dir/kcm*.log`) where the API server answered 403 Forbidden.
fn forbidden_lines(dir: &Path) -> anyhow::Result<Vec<String>> {
    Ok(crate::cluster::logs(dir, "kcm")?
        .into_iter()
        .flat_map(|(name, text)| {
            text.lines()
                .filter(|l| is_forbidden(l))
                .map(|l| format!("{name}: {l}"))
                .collect::<Vec<_>>()
        })
        .collect())
}

/// Whether a log line reports a 403 from the API server that RBAC could have caused. Admission
/// answers 403 too where no grant would help: a create in a namespace being deleted (the
/// NamespaceLifecycle plugin; the scenarios delete their namespaces without waiting, so a later
/// scenario's kcm can still sync what is left in them) or past a ResourceQuota.
fn is_forbidden(line: &str) -> bool {
    const NOT_RBAC: &[&str] = &["because it is being terminated", "exceeded quota"];
    let forbidden = line.contains("is forbidden")
        || line.contains("reason: \"Forbidden\"")
        || line.contains(r#"reason: \"Forbidden\""#)
        || line.contains("code: 403");
    forbidden && !NOT_RBAC.iter().any(|cause| line.contains(cause))
}

fn timeline(dir: &Path, name: &str, samples: &[Sample]) -> anyhow::Result<()> {
    if samples.is_empty() {
        return Ok(());
    }
    write_timeline(
        &dir.join(format!("{name}.svg")),
        &format!("e2e {name}"),
        samples,
        &[],
    )
}

fn summary(results: &[(&str, Outcome, f64)], dir: &Path, kept: bool, run: &str) {
    println!("\n{:<40} {:>8}  result", "scenario", "seconds");
    for (name, outcome, secs) in results {
        let result = match outcome {
            Outcome::Passed => "passed".to_string(),
            Outcome::Failed(_) => "FAILED".to_string(),
            Outcome::Skipped(why) => format!("skipped ({why})"),
        };
        println!("{name:<40} {secs:>8.1}  {result}");
    }
    let count = |f: fn(&Outcome) -> bool| results.iter().filter(|r| f(&r.1)).count();
    let passed = count(|o| matches!(o, Outcome::Passed));
    let failed = count(|o| matches!(o, Outcome::Failed(_)));
    let skipped = count(|o| matches!(o, Outcome::Skipped(_)));
    let skipped = if skipped > 0 {
        format!(", {skipped} skipped")
    } else {
        String::new()
    };
    println!("\n{passed} passed, {failed} failed{skipped}");
    for (name, outcome, _) in results {
        if let Outcome::Failed(e) = outcome {
            println!("  {name}: {e}");
        }
    }
    println!("timelines and logs: {}", dir.display());
    if kept {
        println!(
            "namespaces kept (--keep): delete them with `kubectl delete namespaces -l {RUN_LABEL}={run}`"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_lines_are_recognised() {
        assert!(is_forbidden(
            r#"ERROR sync failed error=ApiError: pods is forbidden: User "system:serviceaccount:kube-system:kcm" cannot create resource "pods" (ErrorResponse { status: "Failure", reason: "Forbidden", code: 403 })"#
        ));
        assert!(is_forbidden(
            r#"err=ErrorResponse { message: "x", reason: "Forbidden", code: 403 }"#
        ));
        assert!(is_forbidden(
            r#"E1125 01:00:00.000000  1 worker.rs:42] "error syncing" err="ErrorResponse { reason: \"Forbidden\" }""#
        ));
        assert!(!is_forbidden(
            "INFO synced replicas=403 resourceVersion=14031"
        ));
        assert!(!is_forbidden(
            r#"I1128 09:56:14.728144   31912 api_write.rs:68] "API write" verb="create" resource="pods" object="alpha-e2e-sharded-replicas/web-785867d899-" result="error" err="pods \"web-785867d899-\" is forbidden: unable to create new content in namespace alpha-e2e-sharded-replicas because it is being terminated""#
        ));
        assert!(!is_forbidden(
            r#"err="pods \"web-1\" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2""#
        ));
    }

    #[test]
    fn run_ids_are_short_dns_labels() {
        let a = run_id();
        assert_eq!(a.len(), 6);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        let ids: std::collections::HashSet<String> = (0..50).map(|_| run_id()).collect();
        assert!(ids.len() > 1, "ids vary between calls");
    }

    #[test]
    fn namespaces_fit_a_dns_label() {
        assert_eq!(namespace_name(false, "abc123", "recreate"), "e2e-recreate");
        assert_eq!(
            namespace_name(true, "abc123", "recreate"),
            "kcm-e2e-abc123-recreate"
        );
        for (name, _) in ALL {
            let ns = namespace_name(true, &run_id(), name);
            assert!(ns.len() <= 63, "{ns} is longer than a DNS label");
            assert!(
                ns.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{ns}"
            );
        }
    }

    #[test]
    fn scenario_names_are_unique_and_the_kcm_ones_known() {
        let mut names: Vec<&str> = ALL.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.len(), 47);
        let own: Vec<&str> = ALL
            .iter()
            .filter(|(_, k)| matches!(k, Kind::OwnKcm(_)))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            own,
            [
                "kcm-killed-mid-rollout",
                "leader-election",
                "sharded-replicas"
            ]
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 47);
    }
}
