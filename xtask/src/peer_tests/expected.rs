//! The kube-rs tests expected to fail on kcm-testenv, and why: the one place that says what
//! kcm-testenv does not do yet that kube-rs's own tests need. `cargo xtask peer-tests --cluster
//! testenv` (CI) fails on any failure outside this list, and names the entries that pass now so
//! that the list only shrinks: take a test off when the work it waits for lands.
//!
//! Tests that need a real kubelet (exec, logs, the kubelet's API) fail on kube-apiserver here
//! too and stay on the list; the table in testenv/README.md marks them.
//!
//! The list is the run of 2026-12-07 on the merged tree (every built-in kind, server-side
//! apply, aggregated discovery, metadata-only answers, the subresources and the objects of a
//! fresh cluster): 28 of 31 pass on kcm-testenv as on kube-apiserver v1.37.2; the three left
//! need a kubelet, and fail on kube-apiserver here too.

use super::runner::TestId;

/// `(crate, libtest path, why it fails on kcm-testenv)`.
pub const TESTENV_FAILURES: &[(&str, &str, &str)] = &[
    (
        "kube-client",
        "test::can_get_pod_logs_and_evict",
        "needs a kubelet (pod logs); pods/log is not served",
    ),
    (
        "kube-client",
        "test::pod_can_exec_and_write_to_stdin",
        "needs a kubelet (exec); pods/exec is not served",
    ),
    (
        "kube-client",
        "test::pod_can_exec_and_write_to_stdin_from_node_proxy",
        "needs a kubelet (its own API on port 10250)",
    ),
];

/// Why `id` is expected to fail on kcm-testenv, if it is.
pub fn reason(id: &TestId) -> Option<&'static str> {
    TESTENV_FAILURES
        .iter()
        .find(|(c, n, _)| *c == id.crate_name && *n == id.name)
        .map(|(_, _, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_unique_and_says_why() {
        for (i, (c, n, why)) in TESTENV_FAILURES.iter().enumerate() {
            assert!(!why.is_empty() && n.contains("::"), "{c} {n}");
            assert!(
                !TESTENV_FAILURES[..i]
                    .iter()
                    .any(|(c2, n2, _)| c2 == c && n2 == n),
                "{c} {n} twice"
            );
        }
    }
}
