//! Malformed objects from the API server, over real HTTP: a tiny raw HTTP/1.1 server serves
//! hand-written list and watch bodies (wrong types, missing fields, huge labels) to a reflector.
//!
//! Like client-go, a list that does not decode fails whole (a partial list would make the
//! objects it dropped look deleted) and is retried with backoff, and a watch event that does not
//! decode ends the watch, which is followed by a relist. Each failure gives one warning naming
//! the resource and what did not decode; nothing panics, and once the server sends decodable
//! objects again every good object arrives.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kcm_reflector::{
    BackoffConfig, CancellationToken, CountingMetrics, Delta, Reflector, ReflectorConfig,
};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// What the server answers to one request.
enum Answer {
    /// A complete JSON body.
    Body(String),
    /// Watch event lines, then the stream stays open.
    Events(Vec<String>),
}

/// The n-th (from 0) list or watch request of the test → the answer.
type Script = Arc<dyn Fn(bool, usize) -> Answer + Send + Sync>;

#[derive(Default)]
struct Seen {
    lists: Vec<Instant>,
    watches: Vec<Instant>,
}

/// Serves `script` on a loopback port; returns its URL and what it saw.
async fn serve(script: Script) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let (script, seen) = (script.clone(), seen2.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    // One request head (GETs carry no body).
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                    let head = String::from_utf8_lossy(&buf[..end]).to_string();
                    buf.drain(..end);
                    let watch = head
                        .lines()
                        .next()
                        .is_some_and(|l| l.contains("watch=true"));
                    let nth = {
                        let mut s = seen.lock();
                        let list = if watch { &mut s.watches } else { &mut s.lists };
                        list.push(Instant::now());
                        list.len() - 1
                    };
                    match script(watch, nth) {
                        Answer::Body(body) => {
                            let resp = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if conn.write_all(resp.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                        Answer::Events(lines) => {
                            let mut resp = String::from(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                            );
                            for line in lines {
                                let line = format!("{line}\n");
                                resp.push_str(&format!("{:x}\r\n{line}\r\n", line.len()));
                            }
                            let _ = conn.write_all(resp.as_bytes()).await;
                            // Hold the watch open until the test ends.
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, seen)
}

/// Captures log lines of the current thread (the tests run on a current-thread runtime).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let logs = self.clone();
        let sub = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || logs.clone())
            .finish();
        tracing::subscriber::set_default(sub)
    }

    fn lines_with(&self, needle: &str) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock())
            .lines()
            .filter(|l| l.contains(needle))
            .map(String::from)
            .collect()
    }
}

fn client(url: &str) -> kube::Client {
    let config = kube::Config::new(url.parse().expect("url"));
    kube::Client::try_from(config).expect("client")
}

/// No jitter, so the delays are exactly 20, 40, 80, … ms.
fn backoff() -> BackoffConfig {
    BackoffConfig {
        initial: Duration::from_millis(20),
        factor: 2.0,
        jitter: 0.0,
        cap: Duration::from_secs(1),
        ..BackoffConfig::default()
    }
}

fn meta(name: &str, rv: u32) -> Value {
    json!({"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "resourceVersion": rv.to_string()})
}

fn rs(name: &str, rv: u32, replicas: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(name, rv),
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}}})
}

fn list(kind: &str, rv: u32, items: Vec<Value>) -> String {
    json!({"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": rv.to_string()}, "items": items})
        .to_string()
}

/// Collects deltas until `done` holds for the keys seen so far (or 10 s pass).
async fn collect_until<K>(
    deltas: &mut (impl futures::Stream<Item = Delta<K>> + Unpin),
    mut done: impl FnMut(&[String]) -> bool,
) -> Vec<String>
where
    K: kube::Resource<DynamicType = ()>,
{
    let mut names = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(&names) {
        match tokio::time::timeout_at(deadline, deltas.next()).await {
            Ok(Some(Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o))) => {
                names.push(o.meta().name.clone().unwrap_or_default())
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    names
}

#[tokio::test(flavor = "current_thread")]
async fn a_list_with_a_malformed_replica_set_is_retried_with_backoff_until_it_decodes() {
    let logs = Logs::default();
    let _guard = logs.install();
    const BAD_LISTS: usize = 3;
    let script: Script = Arc::new(|watch, nth| {
        if watch {
            return Answer::Events(vec![]);
        }
        let b = if nth < BAD_LISTS {
            json!("three")
        } else {
            json!(3)
        };
        Answer::Body(list(
            "ReplicaSetList",
            10,
            vec![rs("a", 1, json!(1)), rs("b", 2, b), rs("c", 3, json!(2))],
        ))
    });
    let (url, seen) = serve(script).await;
    let metrics = Arc::new(CountingMetrics::default());
    let config = ReflectorConfig::default()
        .name("replicasets")
        .backoff(backoff())
        .metrics(metrics.clone());
    let cancel = CancellationToken::new();
    let reflector = Reflector::<ReplicaSet>::new(client(&url), Some("ns"), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let names = collect_until(&mut deltas, |n| n.len() >= 3).await;
    cancel.cancel();

    assert_eq!(
        names,
        ["a", "b", "c"],
        "every object arrives once the list decodes"
    );
    assert_eq!(
        metrics.list_errors.load(Ordering::Relaxed),
        BAD_LISTS as u64
    );
    let warnings = logs.lines_with("list and watch failed");
    assert_eq!(
        warnings.len(),
        BAD_LISTS,
        "one line per failed list: {warnings:#?}"
    );
    for w in &warnings {
        assert!(
            w.contains("WARN") && w.contains("failed to list replicasets"),
            "{w}"
        );
        assert!(
            w.contains(r#"invalid type: string "three", expected i32"#),
            "{w}"
        );
    }
    // Retried with a growing delay: 20, 40, 80 ms.
    let lists = seen.lock().lists.clone();
    assert_eq!(lists.len(), BAD_LISTS + 1);
    for (i, pair) in lists.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(20 << i),
            "retry {i} after {gap:?}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_malformed_watch_event_ends_the_watch_and_a_relist_recovers() {
    let logs = Logs::default();
    let _guard = logs.install();
    let dep = |name: &str, rv: u32, spec: Value| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, rv), "spec": spec});
    let good_spec = json!({"selector": {"matchLabels": {"app": "x"}}, "template": {}});
    let script: Script = Arc::new(move |watch, nth| match (watch, nth) {
        (false, 0) => Answer::Body(list(
            "DeploymentList",
            10,
            vec![dep("a", 5, good_spec.clone())],
        )),
        (true, 0) => Answer::Events(vec![
            json!({"type": "ADDED", "object": dep("b", 11, good_spec.clone())}).to_string(),
            // Wrong type for spec, then a line that is not JSON at all.
            json!({"type": "MODIFIED", "object": dep("a", 12, json!("nope"))}).to_string(),
            "{not json".to_string(),
        ]),
        (false, _) => Answer::Body(list(
            "DeploymentList",
            20,
            vec![
                dep("a", 13, good_spec.clone()),
                dep("b", 11, good_spec.clone()),
                dep("c", 14, good_spec.clone()),
            ],
        )),
        (true, _) => Answer::Events(vec![]),
    });
    let (url, seen) = serve(script).await;
    let metrics = Arc::new(CountingMetrics::default());
    let config = ReflectorConfig::default()
        .name("deployments")
        .backoff(backoff())
        .metrics(metrics.clone());
    let cancel = CancellationToken::new();
    let reflector = Reflector::<Deployment>::new(client(&url), Some("ns"), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let names = collect_until(&mut deltas, |n| n.contains(&"c".to_string())).await;
    cancel.cancel();

    assert_eq!(
        names,
        ["a", "b", "a", "b", "c"],
        "list, the good event, then the relist"
    );
    assert_eq!(
        metrics.watch_errors.load(Ordering::Relaxed),
        1,
        "the first bad line ends the watch"
    );
    let warnings = logs.lines_with("watch ended with an error");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("WARN") && warnings[0].contains("deployments"),
        "{}",
        warnings[0]
    );
    // Known gap: kube-client retries an undecodable event line as a `Status`, which any JSON
    // object satisfies, so the serde error is lost and the line shows an empty `ApiError`
    // (code 0) instead of what failed to decode. Clearer wording needs the reflector's
    // lister-watcher to keep the decoding error.
    assert!(warnings[0].contains("error="), "{}", warnings[0]);
    let seen = seen.lock();
    assert_eq!(seen.lists.len(), 2);
    assert!(
        seen.lists[1] - seen.watches[0] >= Duration::from_millis(20),
        "the relist waits a backoff delay"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn huge_labels_and_missing_fields_decode_and_a_nameless_item_is_retried() {
    let logs = Logs::default();
    let _guard = logs.install();
    let many_labels: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("k8s.example.com/label-{i}"), json!(format!("v{i}"))))
        .collect();
    let huge_value = "x".repeat(1 << 20);
    let script: Script = Arc::new(move |watch, nth| {
        if watch {
            return Answer::Events(vec![]);
        }
        let mut items = vec![
            json!({"metadata": {"name": "many-labels", "namespace": "ns", "labels": many_labels.clone()}}),
            json!({"metadata": {"name": "huge-label", "namespace": "ns", "labels": {"big": huge_value.clone()}},
                   "spec": {"containers": []}}),
            // No spec, no status, no apiVersion/kind, unknown and null fields.
            json!({"metadata": {"name": "bare", "namespace": "ns", "annotations": null}, "unknown": [1, {"x": null}]}),
            json!({"metadata": {"name": "null-sections", "namespace": "ns"}, "spec": null, "status": null}),
        ];
        if nth == 0 {
            items.push(json!({"metadata": {"namespace": "ns", "labels": {"no": "name"}}}));
        }
        Answer::Body(list("PodList", 7, items))
    });
    let (url, seen) = serve(script).await;
    let metrics = Arc::new(CountingMetrics::default());
    let config = ReflectorConfig::default()
        .name("pods")
        .backoff(backoff())
        .metrics(metrics.clone());
    let cancel = CancellationToken::new();
    let reflector = Reflector::<Pod>::new(client(&url), Some("ns"), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let names = collect_until(&mut deltas, |n| n.len() >= 4).await;
    cancel.cancel();

    assert_eq!(
        names,
        ["many-labels", "huge-label", "bare", "null-sections"]
    );
    assert_eq!(
        seen.lock().lists.len(),
        2,
        "the list with a nameless pod was retried once"
    );
    let warnings = logs.lines_with("list and watch failed");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("list of pods returned an object without metadata.name"),
        "{}",
        warnings[0]
    );
}
