//! A shard step whose joint watch fails before the two parts meet (a 410 on the rest's old
//! resourceVersion) lists the whole shard at once, not after the reflector's backoff; a step
//! whose part list and watch work lists nothing else. Against a scripted lister-watcher, on
//! tokio's paused clock (an idle runtime jumps to the next timer, so a backoff shows as time).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;

use kcm_reflector::{
    CancellationToken, DeltaProducer, DynamicShard, ListOptions, ListerWatcher, Reflector,
    ReflectorConfig, ShardChange, ShardSelection, WatchOptions, WatchStream,
};
use kube::core::ObjectList;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::common::{api_error, cm, only, page};

/// Lists answer from the script (then hang); the first watch sent with the selector
/// `fail_watch_with` fails with a 410, every other stays open and silent. Every call is
/// recorded with its time.
#[derive(Default)]
struct Scripted {
    lists: Mutex<VecDeque<ObjectList<ConfigMap>>>,
    fail_watch_with: Mutex<Option<String>>,
    calls: Arc<Mutex<Vec<(Instant, String)>>>,
    selector: Option<String>,
}

impl ListerWatcher<ConfigMap> for Scripted {
    fn list(
        &self,
        opts: &ListOptions,
    ) -> BoxFuture<'_, Result<ObjectList<ConfigMap>, kube::Error>> {
        let selector = opts.shard_selector.clone().or(self.selector.clone());
        self.calls.lock().push((
            Instant::now(),
            format!(
                "list rv={:?} selector={}",
                opts.resource_version,
                selector.unwrap_or_default()
            ),
        ));
        let next = self.lists.lock().pop_front();
        async move {
            match next {
                Some(page) => Ok(page),
                None => futures::future::pending().await,
            }
        }
        .boxed()
    }

    fn watch(
        &self,
        opts: &WatchOptions,
    ) -> BoxFuture<'_, Result<WatchStream<ConfigMap>, kube::Error>> {
        self.calls.lock().push((
            Instant::now(),
            format!(
                "watch rv={:?} selector={}",
                opts.resource_version,
                self.selector.clone().unwrap_or_default()
            ),
        ));
        let mut fail_with = self.fail_watch_with.lock();
        let fail = fail_with.is_some() && *fail_with == self.selector;
        if fail {
            *fail_with = None;
        }
        async move {
            if fail {
                Err(api_error(410, "Expired"))
            } else {
                Ok(futures::stream::pending().boxed())
            }
        }
        .boxed()
    }

    fn set_shard_selector(&mut self, selector: Option<String>) {
        self.selector = selector;
    }
}

/// Runs a reflector on shard `a`, grows it by `b`, and returns the calls after the first list,
/// each with its time since the change.
async fn grow(fail_joint_watch: bool) -> Vec<(Duration, String)> {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let fake = Scripted {
        lists: Mutex::new(
            [
                page("10", None, vec![cm("a", "x", "9")]),
                page("20", None, vec![cm("b", "y", "19")]),
                page("30", None, vec![cm("a", "x", "9"), cm("b", "y", "19")]),
            ]
            .into(),
        ),
        // The joint watch (the new shard's selector) starts at the rest's 10.
        fail_watch_with: Mutex::new(fail_joint_watch.then(|| "only(a,b)".to_string())),
        calls: calls.clone(),
        selector: None,
    };
    let shard = DynamicShard::new(ShardSelection::Scope(only(&["a"])));
    let mut reflector = Reflector::with_lister_watcher(
        fake,
        ReflectorConfig::default()
            .name("configmaps")
            .dynamic_shard(shard.clone()),
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let mut producer = DeltaProducer::new(|_| {});
            reflector.run(&mut producer, cancel).await;
        }
    });
    tokio::time::timeout(Duration::from_secs(5), shard.listed(1))
        .await
        .expect("first list");
    tokio::time::sleep(Duration::from_millis(10)).await;
    let changed_at = Instant::now();
    let generation = shard.change(
        Some(ShardSelection::Scope(only(&["a", "b"]))),
        ShardChange::new().listing(only(&["b"])),
    );
    tokio::time::timeout(Duration::from_secs(5), shard.listed(generation))
        .await
        .expect("the part listed");
    tokio::time::sleep(Duration::from_secs(60)).await;
    cancel.cancel();
    task.await.expect("reflector");
    let calls = calls.lock().clone();
    calls
        .into_iter()
        .filter(|(at, _)| *at >= changed_at)
        .map(|(at, call)| (at - changed_at, call))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_step_lists_the_part_alone_and_watches_on() {
    let calls = grow(false).await;
    let names: Vec<&str> = calls.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(
        names,
        [
            // The part listed alone, consistently (the rest's watch goes on meanwhile; this
            // list answers before it is opened).
            "list rv=\"\" selector=only(b)",
            // One watch of the new shard from where the parts meet.
            "watch rv=\"10\" selector=only(a,b)",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_joint_watch_that_fails_before_the_parts_meet_lists_the_whole_shard_at_once() {
    let calls = grow(true).await;
    let names: Vec<&str> = calls.iter().map(|(_, c)| c.as_str()).take(4).collect();
    assert_eq!(
        names,
        [
            "list rv=\"\" selector=only(b)",
            // 410: the rest's 10 was compacted.
            "watch rv=\"10\" selector=only(a,b)",
            // The whole shard, consistently, at once.
            "list rv=\"\" selector=only(a,b)",
            "watch rv=\"30\" selector=only(a,b)",
        ]
    );
    let relist_after = calls[2].0;
    assert!(
        relist_after < Duration::from_millis(100),
        "the whole shard was listed {relist_after:?} after the change: a backoff delayed it"
    );
}
