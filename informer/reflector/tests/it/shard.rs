//! A reflector with a shard scope against kcm-testenv over real HTTP. kcm-testenv, like
//! kube-apiserver with the `ShardedListAndWatch` gate off (its default), ignores the
//! `shardSelector` parameter and sends every object: the reflector keeps only its shard, from
//! the list and from the watch alike.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use kcm_reflector::{
    ApiListerWatcher, CancellationToken, ListOptions, Reflector, ReflectorConfig, ReflectorStore,
    ShardScope,
};
use kcm_testenv::TestCluster;
use kube::api::{Api, DeleteParams, PostParams};
use parking_lot::Mutex;

use crate::common::{create_namespaces, key, lease};
use kcm_sharding::hash_field;

const SELECTOR: &str =
    "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')";

#[derive(Clone, Default)]
struct Keys(Arc<Mutex<BTreeSet<String>>>);

impl ReflectorStore<Lease> for Keys {
    fn add(&mut self, obj: Lease) {
        self.0.lock().insert(key(&obj));
    }
    fn update(&mut self, obj: Lease) {
        self.0.lock().insert(key(&obj));
    }
    fn delete(&mut self, obj: Lease) {
        self.0.lock().remove(&key(&obj));
    }
    fn replace(&mut self, objects: Vec<Lease>, _rv: String) {
        *self.0.lock() = objects.iter().map(key).collect();
    }
}

#[tokio::test]
async fn the_selector_is_sent_on_every_page_and_watch() {
    let client = kube::Client::try_from(kube::Config::new(
        "http://127.0.0.1:1".parse().expect("url"),
    ))
    .expect("client");
    let lw: ApiListerWatcher<Lease> =
        ApiListerWatcher::new(client, None).shard_selector(Some(SELECTOR.into()));
    let encoded = "shardSelector=shardRange%28object.metadata.namespace%2C+%270x0000000000000000%27%2C+%270x8000000000000000%27%29";
    let first = lw.list_url(&ListOptions {
        limit: 500,
        resource_version: "0".into(),
        ..Default::default()
    });
    let next = lw.list_url(&ListOptions {
        limit: 500,
        continue_token: Some("abc".into()),
        ..Default::default()
    });
    let watch = lw.watch_url(&Default::default());
    for url in [&first, &next, &watch] {
        assert!(url.contains(encoded), "{url}");
    }
    assert!(next.contains("continue=abc"));
    assert_eq!(lw.server_filtering(), None, "no list yet");
}

#[tokio::test]
async fn only_the_shard_is_stored_when_the_server_sends_everything() {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let client = cluster.client();
    namespaces_with_a_lease(&client, &["team-a", "team-b", "team-c"], "before").await;
    let shard = ["team-a", "team-c"];
    let scope = ShardScope::new(SELECTOR, move |m: &ObjectMeta| {
        m.namespace.as_deref().is_some_and(|ns| shard.contains(&ns))
    });
    let keys = Keys::default();
    let mut store = keys.clone();
    let cancel = CancellationToken::new();
    let mut reflector: Reflector<Lease, _> = Reflector::new(
        client.clone(),
        None,
        ReflectorConfig::default().name("configmaps").shard(scope),
    );
    let run = {
        let cancel = cancel.clone();
        tokio::spawn(async move { reflector.run(&mut store, cancel).await })
    };
    let want_listed: BTreeSet<String> = ["team-a/before", "team-c/before"].map(String::from).into();
    wait_for(&keys, &want_listed).await;

    // Watch events of other namespaces never reach the store either.
    for ns in ["team-a", "team-b", "team-c"] {
        let api: Api<Lease> = Api::namespaced(client.clone(), ns);
        api.create(&PostParams::default(), &lease(ns, "after"))
            .await
            .expect("create");
    }
    let b: Api<Lease> = Api::namespaced(client.clone(), "team-b");
    b.delete("before", &DeleteParams::default())
        .await
        .expect("delete");
    let a: Api<Lease> = Api::namespaced(client.clone(), "team-a");
    a.delete("before", &DeleteParams::default())
        .await
        .expect("delete");
    let want_watched: BTreeSet<String> = ["team-a/after", "team-c/after", "team-c/before"]
        .map(String::from)
        .into();
    wait_for(&keys, &want_watched).await;
    cancel.cancel();
    run.await.expect("reflector stops");
}

/// Creates each namespace with one Lease named `name` in it.
async fn namespaces_with_a_lease(client: &kube::Client, names: &[&str], name: &str) {
    create_namespaces(client, names).await;
    for ns in names {
        let api: Api<Lease> = Api::namespaced(client.clone(), ns);
        api.create(&PostParams::default(), &lease(ns, name))
            .await
            .expect("create");
    }
}

async fn wait_for(keys: &Keys, want: &BTreeSet<String>) {
    for _ in 0..100 {
        if *keys.0.lock() == *want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(*keys.0.lock(), *want);
}

/// Against a real kube-apiserver with `--feature-gates=ShardedListAndWatch=true`, given by
/// `KCM_SHARDED_KUBECONFIG` (`cargo xtask cluster up --upstream --feature-gates
/// ShardedListAndWatch=true`): the server applies the selector (its echo is seen) and the store
/// holds exactly the lower half of the hash space. Skipped without the variable.
#[tokio::test]
async fn a_server_with_the_gate_filters_and_echoes_the_selector() {
    let Ok(path) = std::env::var("KCM_SHARDED_KUBECONFIG") else {
        eprintln!("KCM_SHARDED_KUBECONFIG unset: skipped");
        return;
    };
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    let client = kube::Client::try_from(config).expect("client");
    let lw = Arc::new(
        ApiListerWatcher::<k8s_openapi::api::core::v1::ServiceAccount>::new(client.clone(), None)
            .shard_selector(Some(SELECTOR.into())),
    );
    let scope = ShardScope::new(SELECTOR, |m: &ObjectMeta| {
        hash_field(m.namespace.as_deref().unwrap_or_default()) < 1 << 63
    });
    #[derive(Clone, Default)]
    struct Namespaces(Arc<Mutex<BTreeSet<String>>>);
    impl ReflectorStore<k8s_openapi::api::core::v1::ServiceAccount> for Namespaces {
        fn add(&mut self, o: k8s_openapi::api::core::v1::ServiceAccount) {
            self.0
                .lock()
                .insert(o.metadata.namespace.unwrap_or_default());
        }
        fn update(&mut self, o: k8s_openapi::api::core::v1::ServiceAccount) {
            self.add(o);
        }
        fn delete(&mut self, _: k8s_openapi::api::core::v1::ServiceAccount) {}
        fn replace(&mut self, all: Vec<k8s_openapi::api::core::v1::ServiceAccount>, _: String) {
            *self.0.lock() = all
                .into_iter()
                .filter_map(|o| o.metadata.namespace)
                .collect();
        }
    }
    let seen = Namespaces::default();
    let mut store = seen.clone();
    let cancel = CancellationToken::new();
    let mut reflector = Reflector::with_lister_watcher(
        lw.clone(),
        ReflectorConfig::default()
            .name("serviceaccounts")
            .shard(scope),
    );
    let run = {
        let cancel = cancel.clone();
        tokio::spawn(async move { reflector.run(&mut store, cancel).await })
    };
    let all: Api<Namespace> = Api::all(client);
    let want: BTreeSet<String> = all
        .list(&Default::default())
        .await
        .expect("namespaces")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .filter(|n| hash_field(n) < 1 << 63)
        .collect();
    for _ in 0..100 {
        if *seen.0.lock() == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(*seen.0.lock(), want);
    assert_eq!(
        lw.server_filtering(),
        Some(kcm_reflector::ServerFiltering::Applied)
    );
    cancel.cancel();
    run.await.expect("reflector stops");
}

/// A dynamic shard: moving it ends the watch and lists afresh; what left the shard vanishes
/// from the store, what joined it arrives; an empty shard lists nothing; `listed` waits for a
/// list of the new generation.
#[tokio::test]
async fn a_dynamic_shard_relists_when_it_moves() {
    use kcm_reflector::{DynamicShard, ShardSelection};

    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let client = cluster.client();
    namespaces_with_a_lease(&client, &["team-a", "team-b"], "l").await;
    let one_namespace = |ns: &'static str| {
        ShardSelection::Scope(ShardScope::new(SELECTOR, move |m: &ObjectMeta| {
            m.namespace.as_deref() == Some(ns)
        }))
    };
    let shard = DynamicShard::new(one_namespace("team-a"));
    let keys = Keys::default();
    let mut store = keys.clone();
    let cancel = CancellationToken::new();
    let mut reflector: Reflector<Lease, _> = Reflector::new(
        client.clone(),
        None,
        ReflectorConfig::default()
            .name("leases")
            .dynamic_shard(shard.clone()),
    );
    let run = {
        let cancel = cancel.clone();
        tokio::spawn(async move { reflector.run(&mut store, cancel).await })
    };
    let one = |k: &str| BTreeSet::from([k.to_string()]);
    wait_for(&keys, &one("team-a/l")).await;
    assert_eq!(shard.followers(), 1);

    let generation = shard.set(one_namespace("team-b"));
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("listed the new generation");
    assert_eq!(*keys.0.lock(), one("team-b/l"));
    // The watch follows the new shard.
    let b: Api<Lease> = Api::namespaced(client.clone(), "team-b");
    b.create(&PostParams::default(), &lease("team-b", "m"))
        .await
        .expect("create");
    let a: Api<Lease> = Api::namespaced(client.clone(), "team-a");
    a.create(&PostParams::default(), &lease("team-a", "m"))
        .await
        .expect("create");
    let both_b: BTreeSet<String> = ["team-b/l", "team-b/m"].map(String::from).into();
    wait_for(&keys, &both_b).await;

    let generation = shard.set(ShardSelection::Nothing);
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("an empty shard counts as listed");
    assert!(keys.0.lock().is_empty());
    let generation = shard.set(ShardSelection::Everything);
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("listed everything");
    let all: BTreeSet<String> = ["team-a/l", "team-a/m", "team-b/l", "team-b/m"]
        .map(String::from)
        .into();
    assert_eq!(*keys.0.lock(), all);
    cancel.cancel();
    run.await.expect("reflector stops");
    assert_eq!(
        shard.followers(),
        0,
        "a stopped reflector is no longer followed"
    );
}
