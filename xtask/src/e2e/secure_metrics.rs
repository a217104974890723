//! kcm's HTTPS endpoint with delegated authentication and authorization, on the real API server:
//! a ServiceAccount allowed to `get` the non-resource URL `/metrics` scrapes it (200), one that
//! is not gets 403, an anonymous request 401, and `/healthz` stays open to anyone (upstream's
//! `--authorization-always-allow-paths`). Runs on `--cluster upstream` only: it needs
//! TokenReview and SubjectAccessReview answered by kube-apiserver.

use std::process::Command;

use super::*;
use crate::cluster::{Proc, free_port};

/// Stops the run's kcm, starts one serving on a loopback port, checks the four answers, then
/// puts the run's kcm back.
pub(super) fn scenario_secure_metrics(
    c: &Ctx,
    kcm: &mut Option<Proc>,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    with_own_kcm_stopped(c, kcm, "secure-metrics", || secure_metrics(c, ns)).map(|()| Vec::new())
}

/// `curl -k` against kcm: (HTTP status, body).
fn curl(url: &str, token: Option<&str>) -> anyhow::Result<(u16, String)> {
    let mut cmd = Command::new("curl");
    cmd.args(["-sk", "--max-time", "10", "-w", "\n%{http_code}", url]);
    if let Some(t) = token {
        cmd.arg("-H").arg(format!("Authorization: Bearer {t}"));
    }
    let out = cmd.output().context("running curl (is it installed?)")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
    Ok((code.trim().parse().unwrap_or(0), body.to_string()))
}

fn secure_metrics(c: &Ctx, ns: &str) -> anyhow::Result<()> {
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "scraper", "namespace": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "stranger", "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": format!("{ns}-metrics")},
         "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": format!("{ns}-metrics")},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": format!("{ns}-metrics")},
         "subjects": [{"kind": "ServiceAccount", "name": "scraper", "namespace": ns}]}
    ]});
    c.kubectl_stdin(&["apply", "-f", "-"], &rbac.to_string())?;
    let token = |sa: &str| -> anyhow::Result<String> {
        Ok(c.kubectl(&["create", "token", sa, "-n", ns])?
            .trim()
            .to_string())
    };
    let (allowed, denied) = (token("scraper")?, token("stranger")?);
    let port = free_port()?;
    let mut serving = c.start_kcm(
        "kcm-serving",
        &[
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            &format!("--secure-port={port}"),
        ],
    )?;
    let base = format!("https://127.0.0.1:{port}");
    let result = (|| -> anyhow::Result<()> {
        wait_for("kcm to serve /healthz", c.timeout(), || {
            ensure!(
                serving.is_running(),
                "kcm-serving exited; see kcm-serving.log"
            );
            Ok((curl(&format!("{base}/healthz"), None)?.0 == 200).then_some(()))
        })?;
        let metrics = format!("{base}/metrics");
        // The SubjectAccessReview may take a moment to see the new binding (RBAC cache).
        let body = wait_for("an allowed scrape", c.timeout(), || {
            let (code, body) = curl(&metrics, Some(&allowed))?;
            Ok((code == 200).then_some(body))
        })?;
        ensure!(
            body.contains("process_cpu_seconds_total") && body.contains("workqueue_adds_total"),
            "the scrape lacks process_* or workqueue_* series"
        );
        let (code, _) = curl(&metrics, Some(&denied))?;
        ensure!(
            code == 403,
            "a token without the grant got {code}, want 403"
        );
        let (code, _) = curl(&metrics, None)?;
        ensure!(code == 401, "an anonymous scrape got {code}, want 401");
        let (code, _) = curl(&metrics, Some("not-a-token"))?;
        ensure!(code == 401, "an invalid token got {code}, want 401");
        println!(
            "    /metrics over HTTPS: 200 with the grant, 403 without, 401 anonymous; /healthz open"
        );
        Ok(())
    })();
    let _ = serving.terminate(Duration::from_secs(15));
    let _ = c.kubectl(&[
        "delete",
        "clusterrole,clusterrolebinding",
        &format!("{ns}-metrics"),
        "--ignore-not-found",
    ]);
    result
}
