//! The reflector's list/watch algorithm against a scripted fake `ListerWatcher`
//! (client-go `tools/cache/reflector.go`, `ListAndWatch` and `watchList`):
//! which requests are made, with which resourceVersion/limit/continue, and which deltas result.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kcm_reflector::{
    CancellationToken, Delta, DeltaProducer, ListOptions, ListerWatcher, Reflector,
    ReflectorConfig, WatchOptions, WatchStream,
};
use kube::core::watch::{Bookmark, BookmarkMeta};
use kube::core::{ObjectList, Status, TypeMeta, WatchEvent};
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::common::{api_error, cm, page};

fn bookmark(rv: &str, initial_events_end: bool) -> WatchEvent<ConfigMap> {
    let mut annotations = BTreeMap::new();
    if initial_events_end {
        annotations.insert("k8s.io/initial-events-end".to_string(), "true".to_string());
    }
    WatchEvent::Bookmark(Bookmark {
        types: TypeMeta {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        },
        metadata: BookmarkMeta {
            resource_version: rv.into(),
            annotations,
        },
    })
}

/// A scripted watch: either an error, or events followed by a close (`hold_open = false`) or by
/// an open, silent stream.
enum WatchScript {
    Fail(kube::Error),
    Events {
        events: Vec<Result<WatchEvent<ConfigMap>, kube::Error>>,
        hold_open: bool,
    },
}

#[derive(Default)]
struct Fake {
    lists: Mutex<VecDeque<Result<ObjectList<ConfigMap>, kube::Error>>>,
    watches: Mutex<VecDeque<WatchScript>>,
    calls: Mutex<Vec<String>>,
    idle: Notify,
}

impl ListerWatcher<ConfigMap> for Fake {
    fn list(
        &self,
        opts: &ListOptions,
    ) -> BoxFuture<'_, Result<ObjectList<ConfigMap>, kube::Error>> {
        self.calls.lock().push(format!(
            "list rv={:?} limit={} continue={}",
            opts.resource_version,
            opts.limit,
            opts.continue_token.as_deref().unwrap_or("-")
        ));
        let next = self.lists.lock().pop_front();
        async move {
            match next {
                Some(r) => r,
                None => {
                    self.idle.notify_one();
                    futures::future::pending().await
                }
            }
        }
        .boxed()
    }

    fn watch(
        &self,
        opts: &WatchOptions,
    ) -> BoxFuture<'_, Result<WatchStream<ConfigMap>, kube::Error>> {
        assert!(
            (300..600).contains(&opts.timeout_seconds),
            "timeout {}",
            opts.timeout_seconds
        );
        assert!(opts.allow_bookmarks);
        self.calls.lock().push(format!(
            "watch rv={:?}{}",
            opts.resource_version,
            if opts.send_initial_events {
                " sendInitialEvents"
            } else {
                ""
            }
        ));
        let next = self.watches.lock().pop_front();
        async move {
            match next {
                Some(WatchScript::Fail(e)) => Err(e),
                Some(WatchScript::Events { events, hold_open }) => {
                    let s = futures::stream::iter(events);
                    if hold_open {
                        Ok(s.chain(futures::stream::pending()).boxed())
                    } else {
                        Ok(s.boxed())
                    }
                }
                None => {
                    self.idle.notify_one();
                    Ok(futures::stream::pending().boxed())
                }
            }
        }
        .boxed()
    }
}

fn render(d: &Delta<ConfigMap>) -> String {
    let s = |o: &ConfigMap| {
        format!(
            "{}@{}",
            o.metadata.name.as_deref().unwrap_or_default(),
            o.metadata.resource_version.as_deref().unwrap_or_default()
        )
    };
    match d {
        Delta::Added(o) => format!("Added {}", s(o)),
        Delta::Updated(o) => format!("Updated {}", s(o)),
        Delta::Deleted(kcm_reflector::DeletedObject::Object(o)) => format!("Deleted {}", s(o)),
        Delta::Deleted(kcm_reflector::DeletedObject::Unknown(t)) => {
            format!("Tombstone {} {}", t.key, s(&t.obj))
        }
        Delta::Replaced(o) => format!("Replaced {}", s(o)),
        Delta::Sync(o) => format!("Sync {}", s(o)),
        Delta::ListComplete { resource_version } => format!("ListComplete {resource_version}"),
    }
}

/// Runs the reflector until the fake runs out of script; returns (calls, deltas, last RV).
async fn run(fake: Arc<Fake>, config: ReflectorConfig) -> (Vec<String>, Vec<String>, String) {
    let mut reflector = Reflector::with_lister_watcher(Arc::clone(&fake), config);
    let last = reflector.last_sync_resource_version();
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let sink_deltas = Arc::clone(&deltas);
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let mut producer = DeltaProducer::new(move |d| sink_deltas.lock().push(render(&d)));
            reflector.run(&mut producer, cancel).await;
        }
    });
    fake.idle.notified().await;
    cancel.cancel();
    task.await.expect("reflector task");
    let calls = fake.calls.lock().clone();
    let deltas = deltas.lock().clone();
    (calls, deltas, last.get())
}

fn fake(
    lists: Vec<Result<ObjectList<ConfigMap>, kube::Error>>,
    watches: Vec<WatchScript>,
) -> Arc<Fake> {
    let f = Fake::default();
    *f.lists.lock() = lists.into();
    *f.watches.lock() = watches.into();
    Arc::new(f)
}

#[tokio::test(start_paused = true)]
async fn first_list_is_paged_at_rv_0_then_watch_from_list_rv_and_rewatch_after_normal_close() {
    let f = fake(
        vec![
            Ok(page(
                "10",
                Some("t1"),
                vec![cm("ns", "a", "5"), cm("ns", "b", "6")],
            )),
            Ok(page("10", None, vec![cm("ns", "c", "7")])),
        ],
        vec![WatchScript::Events {
            events: vec![
                Ok(WatchEvent::Added(cm("ns", "d", "11"))),
                Ok(WatchEvent::Modified(cm("ns", "a", "12"))),
            ],
            hold_open: false,
        }],
    );
    let (calls, deltas, rv) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "list rv=\"\" limit=500 continue=t1",
            "watch rv=\"10\"",
            "watch rv=\"12\"",
        ]
    );
    assert_eq!(
        deltas,
        [
            "Replaced a@5",
            "Replaced b@6",
            "Replaced c@7",
            "ListComplete 10",
            "Added d@11",
            "Updated a@12"
        ]
    );
    assert_eq!(rv, "12");
}

#[tokio::test(start_paused = true)]
async fn expired_continue_token_falls_back_to_one_unpaginated_list_at_the_original_rv() {
    let f = fake(
        vec![
            Ok(page("10", Some("t1"), vec![cm("ns", "a", "5")])),
            Err(api_error(410, "Expired")),
            Ok(page(
                "11",
                None,
                vec![cm("ns", "a", "5"), cm("ns", "b", "11")],
            )),
        ],
        vec![],
    );
    let (calls, deltas, rv) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "list rv=\"\" limit=500 continue=t1",
            "list rv=\"0\" limit=0 continue=-",
            "watch rv=\"11\"",
        ]
    );
    assert_eq!(deltas, ["Replaced a@5", "Replaced b@11", "ListComplete 11"]);
    assert_eq!(rv, "11");
}

#[tokio::test(start_paused = true)]
async fn list_410_is_retried_at_once_as_a_consistent_read() {
    let f = fake(
        vec![
            Err(api_error(410, "Expired")),
            Ok(page("20", None, vec![cm("ns", "a", "20")])),
        ],
        vec![],
    );
    let (calls, _, _) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "list rv=\"\" limit=500 continue=-",
            "watch rv=\"20\"",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn watch_410_relists_at_the_last_rv_first_and_emits_tombstones_with_last_known_state() {
    let f = fake(
        vec![
            Ok(page(
                "10",
                None,
                vec![cm("ns", "a", "5"), cm("ns", "b", "6")],
            )),
            Err(api_error(410, "Expired")),
            Ok(page(
                "30",
                None,
                vec![cm("ns", "b", "6"), cm("ns", "c", "25")],
            )),
        ],
        vec![WatchScript::Events {
            events: vec![
                Ok(WatchEvent::Modified(cm("ns", "a", "15"))),
                Ok(WatchEvent::Error(Box::new(Status {
                    code: 410,
                    reason: "Expired".into(),
                    message: "too old resource version".into(),
                    ..Status::default()
                }))),
            ],
            hold_open: false,
        }],
    );
    let (calls, deltas, rv) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "watch rv=\"10\"",
            // Relist at the last synced RV, unpaginated so the watch cache can serve it...
            "list rv=\"15\" limit=0 continue=-",
            // ...and only after that fails, a consistent read.
            "list rv=\"\" limit=0 continue=-",
            "watch rv=\"30\"",
        ]
    );
    assert_eq!(
        deltas,
        [
            "Replaced a@5",
            "Replaced b@6",
            "ListComplete 10",
            "Updated a@15",
            "Tombstone ns/a a@15",
            "Replaced b@6",
            "Replaced c@25",
            "ListComplete 30",
        ]
    );
    assert_eq!(rv, "30");
}

#[tokio::test(start_paused = true)]
async fn watch_start_429_and_watch_429_rewatch_without_relisting() {
    let f = fake(
        vec![Ok(page("10", None, vec![cm("ns", "a", "5")]))],
        vec![
            WatchScript::Fail(api_error(429, "TooManyRequests")),
            WatchScript::Events {
                events: vec![
                    Ok(WatchEvent::Added(cm("ns", "b", "11"))),
                    Err(api_error(429, "TooManyRequests")),
                ],
                hold_open: false,
            },
        ],
    );
    let (calls, _, rv) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "watch rv=\"10\"",
            "watch rv=\"10\"",
            "watch rv=\"11\""
        ]
    );
    assert_eq!(rv, "11");
}

#[tokio::test(start_paused = true)]
async fn very_short_empty_watch_leads_to_a_relist_at_the_last_rv() {
    let f = fake(
        vec![
            Ok(page("10", None, vec![cm("ns", "a", "5")])),
            Ok(page("10", None, vec![cm("ns", "a", "5")])),
        ],
        vec![WatchScript::Events {
            events: vec![],
            hold_open: false,
        }],
    );
    let (calls, _, _) = run(f, ReflectorConfig::default()).await;
    assert_eq!(
        calls,
        [
            "list rv=\"0\" limit=500 continue=-",
            "watch rv=\"10\"",
            "list rv=\"10\" limit=0 continue=-",
            "watch rv=\"10\"",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn streaming_list_ends_at_the_bookmark_and_continues_as_the_live_watch() {
    let f = fake(
        vec![],
        vec![WatchScript::Events {
            events: vec![
                Ok(WatchEvent::Added(cm("ns", "a", "5"))),
                Ok(WatchEvent::Added(cm("ns", "b", "6"))),
                Ok(bookmark("7", true)),
                Ok(WatchEvent::Modified(cm("ns", "a", "8"))),
            ],
            hold_open: false,
        }],
    );
    let (calls, deltas, rv) = run(f, ReflectorConfig::default().streaming_list()).await;
    assert_eq!(calls, ["watch rv=\"\" sendInitialEvents", "watch rv=\"8\""]);
    assert_eq!(
        deltas,
        [
            "Replaced a@5",
            "Replaced b@6",
            "ListComplete 7",
            "Updated a@8"
        ]
    );
    assert_eq!(rv, "8");
}

#[tokio::test(start_paused = true)]
async fn streaming_list_rejected_falls_back_to_a_paginated_list() {
    let f = fake(
        vec![Ok(page("10", None, vec![cm("ns", "a", "5")]))],
        vec![WatchScript::Fail(api_error(400, "BadRequest"))],
    );
    let (calls, deltas, _) = run(f, ReflectorConfig::default().streaming_list()).await;
    assert_eq!(
        calls,
        [
            "watch rv=\"\" sendInitialEvents",
            "list rv=\"0\" limit=500 continue=-",
            "watch rv=\"10\""
        ]
    );
    assert_eq!(deltas, ["Replaced a@5", "ListComplete 10"]);
}
