//! Loud failures: every request kcm-testenv does not serve is logged at warning level with its
//! method, path and what is missing (the answers themselves are checked against kube-apiserver
//! in tests/it/spec_unserved.rs and spec_discovery.rs).

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::common::request_full;
use kcm_testenv::{TestEnv, TestEnvConfig};

/// A log sink the test reads back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().expect("log buffer"))
            .lines()
            .map(str::to_string)
            .collect()
    }
}

// one thread: the server's tasks run where the test's subscriber is the default
#[tokio::test(flavor = "current_thread")]
async fn unserved_requests_are_logged_with_method_path_and_what_is_missing() {
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let env = TestEnv::start(TestEnvConfig::default())
        .await
        .expect("start");

    let cases: &[(&str, &str, &str, &str, u16, &str)] = &[
        (
            "GET",
            "/nope",
            "application/json",
            "application/json",
            404,
            "no handler serves this path",
        ),
        (
            "GET",
            "/apis/nope.example.com/v1/things",
            "application/json",
            "application/json",
            404,
            "no API group \"nope.example.com\" is served",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/nopes",
            "application/json",
            "application/json",
            404,
            "v1 serves no resource \"nopes\"",
        ),
        (
            "DELETE",
            "/api/v1/namespaces",
            "application/json",
            "application/json",
            405,
            "namespaces does not serve the verb \"deletecollection\"",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            "application/json",
            "text/html",
            406,
            "no media type of the Accept header",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            "application/json",
            "application/vnd.kubernetes.protobuf",
            406,
            "protobuf, which kcm-testenv does not write",
        ),
        (
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            "text/plain",
            "application/json",
            415,
            "Content-Type \"text/plain\"",
        ),
    ];
    for (method, path, ct, accept, code, _) in cases {
        let r = request_full(&env, method, path, ct, accept, b"{}").await;
        assert_eq!(r.code, *code, "{method} {path}");
    }
    // a served request logs nothing
    let r = request_full(
        &env,
        "GET",
        "/api/v1/namespaces",
        "application/json",
        "application/json",
        b"",
    )
    .await;
    assert_eq!(r.code, 200);

    let lines = log.lines();
    assert_eq!(lines.len(), cases.len(), "{lines:#?}");
    for ((method, path, _, _, code, what), line) in cases.iter().zip(&lines) {
        assert!(line.contains(" WARN "), "{line}");
        assert!(
            line.contains(&format!(
                "kcm-testenv did not serve {method} {path} ({code}): "
            )) && line.contains(what),
            "{method} {path}: {line}"
        );
    }
    env.shutdown().await;
}
