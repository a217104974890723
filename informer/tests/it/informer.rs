//! SharedIndexInformer against kcm-testenv over real HTTP: sync, ordered notifications, late
//! handlers, slow handlers, per-handler resync, handler removal, transform, factory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::{
    NS, Recorder, Seen, cache_state, cluster, cm, create_many, eventually, fast_backoff,
    run_synced, server_state, spawn_run,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kcm_informer::{
    CancellationToken, EventHandlerFns, InformerFactory, InformerOptions, ResourceEventHandler,
    Selector, SharedIndexInformer,
};
use kube::api::{Api, DeleteParams, PostParams};
use parking_lot::Mutex;

fn options() -> InformerOptions {
    InformerOptions::default()
        .namespace(NS)
        .with_reflector(|r| r.backoff(fast_backoff()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_sync_then_updates_and_deletes_in_order() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, "cm", 2_000).await;

    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options());
    let rec = Recorder::default();
    let reg = informer.add_event_handler(rec.clone()).expect("handler");
    let cancel = run_synced(&informer, Duration::from_secs(60)).await;
    assert_eq!(cache_state(informer.store()), server_state(&api).await);
    eventually("handler processed the initial list", || reg.has_synced()).await;
    let seen = rec.seen();
    assert_eq!(seen.len(), 2_000);
    assert!(
        seen.iter()
            .all(|s| matches!(s, Seen::Add { initial: true, .. }))
    );
    assert!(!informer.last_sync_resource_version().is_empty());

    let created = api
        .create(&PostParams::default(), &cm("x", "1"))
        .await
        .expect("create");
    let mut changed = created.clone();
    changed.spec = Some(LeaseSpec {
        holder_identity: Some("2".to_string()),
        ..LeaseSpec::default()
    });
    let updated = api
        .replace("x", &PostParams::default(), &changed)
        .await
        .expect("update");
    api.delete("x", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("delete of x seen", || {
        rec.seen()
            .iter()
            .any(|s| matches!(s, Seen::Delete { key, .. } if key == "default/x"))
    })
    .await;
    let about_x: Vec<Seen> = rec
        .seen()
        .into_iter()
        .filter(|s| match s {
            Seen::Add { key, .. } | Seen::Update { key, .. } | Seen::Delete { key, .. } => {
                key == "default/x"
            }
        })
        .collect();
    let rv = |o: &Lease| o.metadata.resource_version.clone().unwrap_or_default();
    assert_eq!(about_x.len(), 3, "{about_x:?}");
    assert_eq!(
        about_x[..2],
        [
            Seen::Add {
                key: "default/x".into(),
                rv: rv(&created),
                initial: false
            },
            Seen::Update {
                key: "default/x".into(),
                old_rv: rv(&created),
                new_rv: rv(&updated)
            },
        ]
    );
    // The DELETED event carries the final state at the deletion's resourceVersion.
    match &about_x[2] {
        Seen::Delete {
            key,
            rv: deleted_rv,
            tombstone,
        } => {
            assert_eq!(key, "default/x");
            assert!(!tombstone);
            let num = |v: &str| v.parse::<u64>().expect("numeric rv");
            assert!(num(deleted_rv) >= num(&rv(&updated)));
        }
        other => panic!("expected a delete, got {other:?}"),
    }
    assert!(
        informer
            .store()
            .get_by_key(&kcm_informer::ObjectKey::new(NS, "x"))
            .is_none()
    );
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_handler_first_receives_the_cache_as_initial_adds() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, "cm", 30).await;
    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options());
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;

    let late = Recorder::default();
    let reg = informer
        .add_event_handler(late.clone())
        .expect("late handler");
    eventually("late handler synced", || reg.has_synced()).await;
    api.create(&PostParams::default(), &cm("after", "1"))
        .await
        .expect("create");
    eventually("live add seen", || {
        late.view().contains_key("default/after")
    })
    .await;
    let seen = late.seen();
    assert_eq!(seen.len(), 31);
    assert!(
        seen[..30]
            .iter()
            .all(|s| matches!(s, Seen::Add { initial: true, .. }))
    );
    assert!(matches!(&seen[30], Seen::Add { key, initial: false, .. } if key == "default/after"));
    assert_eq!(late.view(), cache_state(informer.store()));
    cancel.cancel();
}

/// Blocks on its first notification until released.
#[derive(Clone)]
struct Blocked {
    gate: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    entered: Arc<AtomicUsize>,
    rec: Recorder,
}

impl ResourceEventHandler<Lease> for Blocked {
    fn on_add(&self, obj: &Arc<Lease>, initial: bool) {
        self.entered.fetch_add(1, Ordering::SeqCst);
        let (lock, cvar) = &*self.gate;
        let mut open = lock.lock().expect("gate");
        while !*open {
            open = cvar.wait(open).expect("gate");
        }
        drop(open);
        self.rec.on_add(obj, initial);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stuck_handler_does_not_delay_another_handler() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options());
    let slow = Blocked {
        gate: Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new())),
        entered: Arc::new(AtomicUsize::new(0)),
        rec: Recorder::default(),
    };
    let fast = Recorder::default();
    let slow_reg = informer.add_event_handler(slow.clone()).expect("slow");
    informer.add_event_handler(fast.clone()).expect("fast");
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;
    create_many(&api, "burst", 100).await;

    // The fast handler sees all 100 adds while the slow one is stuck inside its first call.
    eventually("fast handler saw every add", || fast.seen().len() == 100).await;
    assert_eq!(slow.entered.load(Ordering::SeqCst), 1);
    assert!(slow.rec.seen().is_empty());
    assert!(
        slow_reg.pending() >= 99,
        "the slow handler's own buffer holds its backlog"
    );

    let (lock, cvar) = &*slow.gate;
    *lock.lock().expect("gate") = true;
    cvar.notify_all();
    eventually("slow handler caught up", || slow.rec.seen().len() == 100).await;
    assert_eq!(slow.rec.view(), fast.view());
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_handler_resync_only_reaches_handlers_that_asked_for_it() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    api.create(&PostParams::default(), &cm("r", "1"))
        .await
        .expect("create");
    // As upstream, an informer created without a resync period never resyncs; with a default
    // period, a smaller handler period registered before start lowers the check period.
    let informer = SharedIndexInformer::<Lease>::new(
        cluster.client(),
        options().resync_period(Duration::from_secs(600)),
    );
    let resyncing = Recorder::default();
    let quiet = Recorder::default();
    informer
        .add_event_handler_with_resync_period(resyncing.clone(), Duration::from_secs(1))
        .expect("resyncing");
    informer
        .add_event_handler_with_resync_period(quiet.clone(), Duration::ZERO)
        .expect("quiet");
    assert_eq!(informer.resync_check_period(), Duration::from_secs(1));
    let cancel = CancellationToken::new();
    spawn_run(&informer, &cancel);
    let syncs = |r: &Recorder| {
        r.seen()
            .iter()
            .filter(|s| matches!(s, Seen::Update { old_rv, new_rv, .. } if old_rv == new_rv))
            .count()
    };
    eventually("two resyncs delivered", || syncs(&resyncing) >= 2).await;
    assert_eq!(
        quiet.seen().len(),
        1,
        "the handler without resync only saw the initial add"
    );
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_handler_gets_nothing_more_and_the_other_keeps_going() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options());
    let removed = Recorder::default();
    let kept = Recorder::default();
    let reg = informer
        .add_event_handler(removed.clone())
        .expect("removed");
    informer.add_event_handler(kept.clone()).expect("kept");
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;
    api.create(&PostParams::default(), &cm("before", "1"))
        .await
        .expect("create");
    eventually("both saw 'before'", || {
        removed.view().contains_key("default/before") && kept.view().contains_key("default/before")
    })
    .await;
    assert_eq!(informer.handler_count(), 2);
    informer.remove_event_handler(&reg);
    informer.remove_event_handler(&reg);
    assert_eq!(informer.handler_count(), 1);
    api.create(&PostParams::default(), &cm("after", "1"))
        .await
        .expect("create");
    eventually("kept saw 'after'", || {
        kept.view().contains_key("default/after")
    })
    .await;
    assert!(!removed.view().contains_key("default/after"));
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transform_runs_before_the_cache_and_the_handlers() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    api.create(&PostParams::default(), &cm("t", "secret"))
        .await
        .expect("create");
    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options());
    informer
        .set_transform(|mut c: Lease| {
            c.metadata.managed_fields = None;
            c.spec = None;
            c.metadata.name = c.metadata.name.map(|n| n.to_uppercase());
            c
        })
        .expect("transform before start");
    let names = Arc::new(Mutex::new(Vec::new()));
    let n = Arc::clone(&names);
    informer
        .add_event_handler(EventHandlerFns::new().on_add(move |c: &Arc<Lease>, _| {
            n.lock().push((c.metadata.name.clone(), c.spec.is_none()));
        }))
        .expect("handler");
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;
    eventually("handler saw the object", || !names.lock().is_empty()).await;
    assert_eq!(*names.lock(), [(Some("T".to_string()), true)]);
    let cached = informer
        .lister()
        .namespaced(NS)
        .get("T")
        .expect("cached under the transformed name");
    assert!(cached.spec.is_none());
    assert!(informer.set_transform(|c| c).is_err());
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_shares_one_informer_per_type_and_scope() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, "f", 10).await;
    let factory = InformerFactory::new(cluster.client(), options());
    let a = factory.informer::<Lease>();
    let b = factory.informer::<Lease>();
    a.add_event_handler(Recorder::default()).expect("handler");
    assert_eq!(
        b.handler_count(),
        1,
        "same informer for the same type and scope"
    );
    let other = factory.informer_with::<Lease>(options().with_reflector(|r| r.labels("app=x")));
    assert_eq!(
        other.handler_count(),
        0,
        "a different selector is a different informer"
    );
    let shard = |selector: &str| {
        let scope = kcm_informer::ShardScope::new(selector, |_| true);
        factory.informer_with::<Lease>(options().with_reflector(|r| r.shard(scope)))
    };
    shard("shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')")
        .add_event_handler(Recorder::default())
        .expect("handler");
    let other_shard =
        shard("shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')");
    assert_eq!(
        (b.handler_count(), other_shard.handler_count()),
        (1, 0),
        "each shard is an informer of its own"
    );

    let cancel = CancellationToken::new();
    let before_start = factory
        .wait_for_cache_sync(Some(Duration::from_secs(1)), &cancel)
        .await;
    assert!(
        before_start.is_empty(),
        "only started informers are waited for"
    );
    factory.start(&cancel);
    factory.start(&cancel);
    let synced = factory
        .wait_for_cache_sync(Some(Duration::from_secs(30)), &cancel)
        .await;
    assert_eq!(synced.len(), 4);
    assert!(synced.values().all(|ok| *ok), "{synced:?}");
    let lister = factory.lister::<Lease>();
    assert_eq!(lister.list(&Selector::everything()).len(), 10);
    assert!(other.store().is_empty());
    cancel.cancel();
    factory.shutdown().await;
    assert!(a.is_stopped());
    assert!(a.add_event_handler(Recorder::default()).is_err());
}
