//! The sample controller (`sample-controller/`) as its README runs it: the CRD applied with the
//! real kubectl, the `sample-controller` binary started against the cluster beside kcm (scoped
//! to the scenario's namespace), a Foo applied, scaled and deleted with kubectl. The runner
//! builds the binary with kcm's.

use std::process::Command;

use anyhow::ensure;
use serde_json::{Value, json};

use super::Ctx;
use crate::cluster::{Proc, target_dir, wait_for};
use crate::observe::Sample;

const CRD: &str = "foos.samplecontroller.k8s.io";

/// The Foo's Deployment once it has `replicas` available and the Foo says so.
fn reconciled(c: &Ctx, ns: &str, replicas: i64) -> anyhow::Result<Value> {
    wait_for(
        &format!("Foo example-foo with {replicas} available replicas"),
        c.timeout(),
        || {
            let example = c.get_json(&["foo", "example-foo", "-n", ns])?;
            let d = match c.get_json(&["deployment", "example-foo", "-n", ns]) {
                Ok(d) => d,
                Err(_) => return Ok(None),
            };
            let done = d["spec"]["replicas"] == replicas
                && d["status"]["availableReplicas"] == replicas
                && example["status"]["availableReplicas"] == replicas;
            Ok(done.then_some(d))
        },
    )
}

pub(crate) fn scenario(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let crd = crate::workspace_root().join("sample-controller/artifacts/crd.yaml");
    let crd = crd.to_string_lossy();
    c.kubectl(&["apply", "-f", &crd])?;
    let established = "condition=established";
    let timeout = c.kubectl_timeout(30);
    c.kubectl(&[
        "wait",
        "--for",
        established,
        &format!("crd/{CRD}"),
        &timeout,
    ])?;

    let kubeconfig = c.cluster.kubeconfig.to_string_lossy().to_string();
    let log = c.dir().join(format!("sample-controller-{ns}.log"));
    let mut cmd = Command::new(target_dir().join("debug/sample-controller"));
    // One instance, no serving port: nothing to elect, and no port that may be taken.
    cmd.args([
        "--kubeconfig",
        &kubeconfig,
        "--namespace",
        ns,
        "--leader-elect=false",
        "--secure-port=0",
    ]);
    let mut controller = Proc::spawn_logged(&mut cmd, "sample-controller", &log)?;

    let example = json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "example-foo", "namespace": ns},
        "spec": {"deploymentName": "example-foo", "replicas": 1},
    });
    c.kubectl_stdin(&["apply", "-f", "-"], &example.to_string())?;
    let d = reconciled(c, ns, 1)?;
    let owner = &d["metadata"]["ownerReferences"][0];
    let foo_uid = c.get_json(&["foo", "example-foo", "-n", ns])?["metadata"]["uid"].clone();
    ensure!(
        owner["kind"] == "Foo" && owner["controller"] == true && owner["uid"] == foo_uid,
        "the Deployment must be controlled by the Foo: {owner}"
    );

    let scale = r#"{"spec":{"replicas":3}}"#;
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        "foo",
        "example-foo",
        "--type=merge",
        "-p",
        scale,
    ])?;
    reconciled(c, ns, 3)?;
    let events = c.get_json(&["events", "-n", ns])?;
    let synced = events["items"].as_array().into_iter().flatten().any(|e| {
        e["involvedObject"]["kind"] == "Foo"
            && e["reason"] == "Synced"
            && e["source"]["component"] == "sample-controller"
    });
    ensure!(synced, "no Synced event of the Foo: {events}");

    c.kubectl(&["-n", ns, "delete", "foo", "example-foo", "--wait=false"])?;
    wait_for(
        "the garbage collector to delete the Deployment",
        c.timeout(),
        || {
            let deployments = c.get_json(&["deployments", "-n", ns])?;
            Ok(deployments["items"]
                .as_array()
                .is_none_or(Vec::is_empty)
                .then_some(()))
        },
    )?;
    let status = controller.terminate(std::time::Duration::from_secs(15));
    ensure!(
        status.is_some_and(|s| s.success()),
        "sample-controller did not stop cleanly on SIGTERM ({status:?}); log: {}",
        log.display()
    );
    Ok(Vec::new())
}
