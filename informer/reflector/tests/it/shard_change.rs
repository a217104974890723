//! A dynamic shard that grows, shrinks and is read afresh part by part
//! ([`DynamicShard::change`]), against kcm-testenv over real HTTP: only the part is listed
//! (with its own selector), the rest is watched throughout, and the store ends exactly as the
//! server's state, with nothing lost or applied twice, while both parts are being written.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use kcm_reflector::{
    ApiListerWatcher, CancellationToken, DynamicShard, ListOptions, ListerWatcher, Reflector,
    ReflectorConfig, ReflectorStore, ShardChange, ShardScope, ShardSelection, WatchOptions,
    WatchStream,
};
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams, PostParams};
use kube::core::ObjectList;
use parking_lot::Mutex;

use crate::common::{create_namespaces, key, lease, only, rv};

/// The store: key → resourceVersion, and what was done to it.
#[derive(Clone, Default)]
struct Versions {
    objects: Arc<Mutex<BTreeMap<String, String>>>,
    log: Arc<Mutex<Vec<String>>>,
    /// Whether it can replace a part (otherwise the reflector must list everything).
    partial: bool,
}

impl Versions {
    fn snapshot(&self) -> BTreeMap<String, String> {
        self.objects.lock().clone()
    }
    fn count(&self, what: &str) -> usize {
        self.log
            .lock()
            .iter()
            .filter(|l| l.as_str() == what)
            .count()
    }
}

impl Versions {
    /// Stores an event's object; an object going back to an older resourceVersion (an event
    /// applied twice) is recorded as a regression.
    fn event(&self, obj: &Lease) {
        let previous = self.objects.lock().insert(key(obj), rv(obj));
        let older = |a: &str, b: &str| a.parse::<u64>().ok() < b.parse::<u64>().ok();
        if previous.is_some_and(|p| older(&rv(obj), &p)) {
            self.log.lock().push("regression".into());
        }
    }
}

impl ReflectorStore<Lease> for Versions {
    fn add(&mut self, obj: Lease) {
        self.event(&obj);
    }
    fn update(&mut self, obj: Lease) {
        self.event(&obj);
    }
    fn delete(&mut self, obj: Lease) {
        self.objects.lock().remove(&key(&obj));
    }
    fn replace(&mut self, objects: Vec<Lease>, _rv: String) {
        *self.objects.lock() = objects.iter().map(|o| (key(o), rv(o))).collect();
        self.log.lock().push("replace".into());
    }
    fn replace_part(
        &mut self,
        part: &(dyn Fn(&Lease) -> bool + Sync),
        objects: Vec<Lease>,
        _rv: &str,
    ) -> bool {
        if !self.partial {
            return false;
        }
        let mut stored = self.objects.lock();
        stored.retain(|k, _| {
            let (ns, name) = k.split_once('/').unwrap_or_default();
            !part(&lease(ns, name))
        });
        stored.extend(objects.iter().map(|o| (key(o), rv(o))));
        self.log.lock().push("replace part".into());
        true
    }
}

/// The lister-watcher on kcm-testenv, recording the URL of every list. A part's list answers
/// 300 ms late, so the rest's watch runs well past the part's resourceVersion and the joint
/// watch replays what the rest has seen.
struct Recording {
    inner: ApiListerWatcher<Lease>,
    lists: Arc<Mutex<Vec<String>>>,
}

impl Recording {
    fn new(client: &kube::Client) -> Self {
        Recording {
            inner: ApiListerWatcher::new(client.clone(), None),
            lists: Arc::default(),
        }
    }
}

impl ListerWatcher<Lease> for Recording {
    fn list(&self, opts: &ListOptions) -> BoxFuture<'_, Result<ObjectList<Lease>, kube::Error>> {
        if opts.continue_token.is_none() {
            self.lists.lock().push(self.inner.list_url(opts));
        }
        let part = opts.shard_selector.is_some();
        let list = self.inner.list(opts);
        Box::pin(async move {
            let listed = list.await;
            if part {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            listed
        })
    }
    fn watch(&self, opts: &WatchOptions) -> BoxFuture<'_, Result<WatchStream<Lease>, kube::Error>> {
        self.inner.watch(opts)
    }
    fn set_shard_selector(&mut self, selector: Option<String>) {
        self.inner.set_shard_selector(selector);
    }
}

/// The server's leases of `names`: key → resourceVersion.
async fn server_state(client: &kube::Client, names: &[&str]) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for ns in names {
        let api: Api<Lease> = Api::namespaced(client.clone(), ns);
        for l in api.list(&ListParams::default()).await.expect("list").items {
            state.insert(key(&l), rv(&l));
        }
    }
    state
}

async fn settle(store: &Versions, client: &kube::Client, names: &[&str]) {
    let mut want = server_state(client, names).await;
    for _ in 0..200 {
        if store.snapshot() == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        want = server_state(client, names).await;
    }
    assert_eq!(store.snapshot(), want);
}

/// Writes leases into `names` (creating and updating) until `stop` fires.
fn writer(
    client: kube::Client,
    names: &'static [&'static str],
    prefix: &'static str,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut n = 0usize;
        while !stop.is_cancelled() {
            for ns in names {
                let api: Api<Lease> = Api::namespaced(client.clone(), ns);
                let name = format!("{prefix}{}", n % 7);
                match api.get_opt(&name).await.expect("get") {
                    Some(mut l) => {
                        l.metadata.labels = Some([("n".to_string(), n.to_string())].into());
                        api.replace(&name, &PostParams::default(), &l)
                            .await
                            .expect("update");
                    }
                    None => {
                        api.create(&PostParams::default(), &lease(ns, &name))
                            .await
                            .expect("create");
                    }
                }
            }
            n += 1;
        }
        n
    })
}

async fn run_shard(partial: bool) {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let client = cluster.client();
    create_namespaces(&client, &["team-a", "team-b", "team-c"]).await;
    const A: &[&str] = &["team-a"];
    const AB: &[&str] = &["team-a", "team-b"];
    const B: &[&str] = &["team-b"];
    const ALL: &[&str] = &["team-a", "team-b", "team-c"];
    let stop = CancellationToken::new();
    let writers = [
        writer(client.clone(), ALL, "w", stop.clone()),
        writer(client.clone(), AB, "v", stop.clone()),
    ];
    let shard = DynamicShard::new(ShardSelection::Scope(only(A)));
    let store = Versions {
        partial,
        ..Default::default()
    };
    let lw = Recording::new(&client);
    let lists = lw.lists.clone();
    let cancel = CancellationToken::new();
    let mut reflector = Reflector::with_lister_watcher(
        lw,
        ReflectorConfig::default()
            .name("leases")
            .dynamic_shard(shard.clone()),
    );
    let run = {
        let cancel = cancel.clone();
        let mut store = store.clone();
        tokio::spawn(async move { reflector.run(&mut store, cancel).await })
    };
    tokio::time::timeout(Duration::from_secs(10), shard.listed(1))
        .await
        .expect("first list");
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Grow by team-b: the part alone is listed.
    lists.lock().clear();
    let generation = shard.change(
        Some(ShardSelection::Scope(only(AB))),
        ShardChange::new().listing(only(B)),
    );
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("the part listed");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Read the part afresh (what a barrier asks for), nothing else.
    let generation = shard.change(None, ShardChange::new().listing(only(B)));
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("the part listed afresh");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Shrink to team-b: nothing listed, team-a dropped.
    let generation = shard.change(
        Some(ShardSelection::Scope(only(B))),
        ShardChange::new().dropping(only(A)),
    );
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("dropped");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.cancel();
    for w in writers {
        assert!(w.await.expect("writer") > 3, "the writers kept writing");
    }
    settle(&store, &client, B).await;
    let requests = lists.lock().clone();
    assert_eq!(store.count("regression"), 0, "no event applied twice");
    if partial {
        assert_eq!(
            store.count("replace"),
            1,
            "only the first list replaced everything"
        );
        assert_eq!(
            store.count("replace part"),
            3,
            "grown, read afresh, shrunk: {:?}",
            store.log.lock()
        );
        assert_eq!(requests.len(), 2, "{requests:?}");
        for url in &requests {
            assert!(
                url.contains("shardSelector=only%28team-b%29"),
                "only the part was listed: {url}"
            );
            assert!(
                !url.contains("resourceVersion="),
                "a consistent read: {url}"
            );
        }
    } else {
        assert_eq!(store.count("replace part"), 0);
        assert_eq!(
            store.count("replace"),
            4,
            "every change listed everything (the first list and three)"
        );
    }
    cancel.cancel();
    run.await.expect("reflector stops");
}

#[tokio::test]
async fn a_shard_grows_and_shrinks_listing_only_the_part() {
    run_shard(true).await;
}

#[tokio::test]
async fn a_store_that_cannot_replace_a_part_lists_the_whole_shard() {
    run_shard(false).await;
}

/// Between the steps, the store equals the server's state of the shard while both parts are
/// written: nothing lost, nothing applied twice, nothing of other namespaces.
#[tokio::test]
async fn the_store_follows_the_server_through_every_step() {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let client = cluster.client();
    create_namespaces(&client, &["team-a", "team-b", "team-c"]).await;
    const A: &[&str] = &["team-a"];
    const AB: &[&str] = &["team-a", "team-b"];
    const B: &[&str] = &["team-b"];
    const ALL: &[&str] = &["team-a", "team-b", "team-c"];
    let shard = DynamicShard::new(ShardSelection::Scope(only(A)));
    let store = Versions {
        partial: true,
        ..Default::default()
    };
    let cancel = CancellationToken::new();
    let mut reflector = Reflector::with_lister_watcher(
        Recording::new(&client),
        ReflectorConfig::default()
            .name("leases")
            .dynamic_shard(shard.clone()),
    );
    let run = {
        let cancel = cancel.clone();
        let mut store = store.clone();
        tokio::spawn(async move { reflector.run(&mut store, cancel).await })
    };
    let steps: [(Option<ShardSelection>, ShardChange, &[&str]); 4] = [
        (
            Some(ShardSelection::Scope(only(AB))),
            ShardChange::new().listing(only(B)),
            AB,
        ),
        (None, ShardChange::new().listing(only(A)), AB),
        (
            Some(ShardSelection::Scope(only(B))),
            ShardChange::new().dropping(only(A)),
            B,
        ),
        (
            Some(ShardSelection::Everything),
            ShardChange::new().listing(ShardScope::new("not(team-b)", |m: &ObjectMeta| {
                m.namespace.as_deref() != Some("team-b")
            })),
            ALL,
        ),
    ];
    tokio::time::timeout(Duration::from_secs(10), shard.listed(1))
        .await
        .expect("first list");
    for (filter, change, names) in steps {
        let stop = CancellationToken::new();
        let w = writer(client.clone(), ALL, "w", stop.clone());
        tokio::time::sleep(Duration::from_millis(100)).await;
        let generation = shard.change(filter, change);
        tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
            .await
            .expect("step listed");
        tokio::time::sleep(Duration::from_millis(200)).await;
        stop.cancel();
        w.await.expect("writer");
        settle(&store, &client, names).await;
    }
    assert_eq!(store.count("replace"), 1, "{:?}", store.log.lock());
    assert_eq!(store.count("regression"), 0, "no event applied twice");
    cancel.cancel();
    run.await.expect("reflector stops");
}
