//! The indexer store with a hand-written object type (no kube or k8s-openapi needed): a custom
//! index, the namespace index, label selectors through a lister, and an atomic `replace`.
//! Run: `cargo run -p kcm-store --example store`

use std::{collections::BTreeMap, sync::Arc};

use kcm_store::{Lister, NAMESPACE_INDEX, Object, ObjectKey, Selector, Store, index_fn};

struct Pod {
    namespace: String,
    name: String,
    node: String,
    labels: BTreeMap<String, String>,
}

impl Object for Pod {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> Option<&str> {
        Some(&self.namespace)
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        Some(&self.labels)
    }
}

fn pod(ns: &str, name: &str, node: &str, app: &str, tier: &str) -> Arc<Pod> {
    let labels = [("app", app), ("tier", tier)].map(|(k, v)| (k.to_string(), v.to_string()));
    Arc::new(Pod {
        namespace: ns.into(),
        name: name.into(),
        node: node.into(),
        labels: labels.into(),
    })
}

fn show(what: &str, pods: &[Arc<Pod>]) {
    let mut keys: Vec<String> = pods.iter().map(|p| p.key().to_string()).collect();
    keys.sort();
    println!("{what:<34} {keys:?}");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store: Store<Pod> = Store::new(); // the "namespace" index is built in
    store.add_indexer("node", index_fn(|p: &Pod| vec![p.node.clone()]))?;
    store.add(pod("shop", "web-1", "node-1", "web", "frontend"));
    store.add(pod("shop", "web-2", "node-2", "web", "frontend"));
    store.add(pod("shop", "api-1", "node-1", "api", "backend"));
    store.add(pod("blog", "web-1", "node-2", "web", "frontend"));
    show("index node=node-1:", &store.by_index("node", "node-1")?);
    show(
        "index namespace=shop:",
        &store.by_index(NAMESPACE_INDEX, "shop")?,
    );

    let lister = Lister::new(store.clone());
    let sel = Selector::parse("app in (web,api),tier!=db")?;
    show(
        &format!("shop, {sel}:"),
        &lister.namespaced("shop").list(&sel),
    );
    let node = lister
        .namespaced("blog")
        .get("web-1")
        .map(|p| p.node.clone());
    println!("{:<34} {node:?}", "node of blog/web-1:");

    store.update(pod("shop", "api-1", "node-2", "api", "backend"));
    show(
        "node=node-1 after moving api-1:",
        &store.by_index("node", "node-1")?,
    );

    // replace = one atomic swap of the whole content (indices rebuilt), as after a relist.
    store.replace(vec![pod("shop", "web-3", "node-3", "web", "frontend")]);
    show("after replace:", &store.list());
    assert!(store.get_by_key(&ObjectKey::new("shop", "web-1")).is_none());
    Ok(())
}
