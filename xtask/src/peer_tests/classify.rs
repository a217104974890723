//! Failures no cluster here can avoid: the tests that need a real kubelet (exec, attach, logs,
//! port-forward, the kubelet's own API on port 10250). Neither kcm-testenv's simulated nodes nor
//! `kcm-testenv sim` beside kube-apiserver run containers or serve the kubelet's API, so these
//! tests fail on both. They are recognised from what the failure printed — the kubelet's port
//! refusing a connection, or kube-apiserver reporting it could not reach a node's kubelet — not
//! from a list of names, so a test that fails for another reason is never excused.
//!
//! A failure that prints no such evidence is not recognised, whatever its cause: kube-client's
//! `pod_can_exec_and_write_to_stdin` on kube-apiserver gets its exec stream, whose status
//! channel (which the test does not read) carries the dial error, and fails on an empty stdout.

/// The evidence, as shown in the table.
pub const NO_KUBELET: &str = "no kubelet";

/// Whether `captured` (a failed test's output) shows that it needed a kubelet: `Some` with what
/// gave it away.
pub fn needs_kubelet(captured: &str) -> Option<&'static str> {
    EVIDENCE
        .iter()
        .find(|(_, all)| all.iter().all(|needle| captured.contains(needle)))
        .map(|(what, _)| *what)
}

/// What a kubelet's absence looks like, each as the strings that must all appear.
const EVIDENCE: &[(&str, &[&str])] = &[
    // A client connecting to a kubelet's API itself (kube-client's kubelet-debug methods use
    // https://localhost:10250 as kubelets serve it).
    (
        "the kubelet port 10250 refused the connection",
        &[":10250", "Connection refused"],
    ),
    // kube-apiserver answering a request it forwards to the node's kubelet (pods/log, and
    // pods/exec, attach, port-forward, nodes/proxy alike) with its failure to dial it: the
    // simulated nodes register port 10250 but nothing listens there, and their names resolve
    // nowhere.
    (
        "kube-apiserver could not reach the node's kubelet (port 10250)",
        &[":10250/", "dial tcp"],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelet_evidence() {
        let cases: &[(&str, Option<&str>)] = &[
            // kube-client's pod_can_exec_and_write_to_stdin_from_node_proxy, on either cluster.
            (
                "Error: Service(hyper_util::client::legacy::Error(Connect, ConnectError(\"tcp connect error\", 127.0.0.1:10250, Os { code: 111, kind: ConnectionRefused, message: \"Connection refused\" })))",
                Some("the kubelet port 10250 refused the connection"),
            ),
            // kube-client's can_get_pod_logs_and_evict on kube-apiserver.
            (
                "Error: Api(Status { status: Some(Failure), code: 500, message: \"Get \\\"https://node-1:10250/containerLogs/default/busybox-kube3/busybox?follow=true\\\": dial tcp: lookup node-1 on 10.255.255.53:53: no such host\", reason: \"\" })",
                Some("kube-apiserver could not reach the node's kubelet (port 10250)"),
            ),
            // Another port refusing is the API server gone, not a kubelet.
            (
                "Error: Service(hyper_util::client::legacy::Error(Connect, ConnectError(\"tcp connect error\", 127.0.0.1:6443, Os { code: 111, kind: ConnectionRefused, message: \"Connection refused\" })))",
                None,
            ),
            // A dial error to the API server's own port is not about a kubelet.
            (
                "Error: Service(Error(Connect, \"dial tcp 127.0.0.1:6443/: i/o timeout\"))",
                None,
            ),
            // kcm-testenv refusing a subresource is kcm-testenv's failure.
            (
                "Error: Api(Status { status: Some(Failure), code: 405, message: \"the server does not allow this method on the requested resource (GET)\", reason: \"MethodNotAllowed\" })",
                None,
            ),
            ("", None),
        ];
        for (captured, want) in cases {
            assert_eq!(needs_kubelet(captured), *want, "for {captured:?}");
        }
    }
}
