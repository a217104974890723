//! Listers: `ListAll` / `ListAllByNamespace` semantics (client-go `tools/cache/listers.go`).

use crate::common::{Obj, labeled, names};
use kcm_store::{Lister, Selector, Store, index_fn};

fn fixture(store: &Store<Obj>) {
    store.add(labeled(
        "default",
        "web-1",
        &[("app", "web"), ("tier", "fe")],
    ));
    store.add(labeled("default", "web-2", &[("app", "web")]));
    store.add(labeled("default", "db-1", &[("app", "db")]));
    store.add(labeled("prod", "web-3", &[("app", "web")]));
    store.add(labeled("", "node-1", &[("app", "web")]));
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

#[test]
fn list_with_selectors() {
    let store = Store::new();
    fixture(&store);
    let lister = Lister::new(store);
    assert_eq!(lister.list(&Selector::everything()).len(), 5);
    assert_eq!(
        names(&lister.list(&sel("app=web"))),
        vec!["default/web-1", "default/web-2", "node-1", "prod/web-3"]
    );
    assert_eq!(
        names(&lister.list(&sel("app=web,tier"))),
        vec!["default/web-1"]
    );
    assert_eq!(
        names(&lister.list(&sel("app notin (web)"))),
        vec!["default/db-1"]
    );
    assert!(lister.list(&Selector::nothing()).is_empty());
}

#[test]
fn namespaced_list_and_get() {
    let store = Store::new();
    fixture(&store);
    let lister = Lister::new(store);
    let ns = lister.namespaced("default");
    assert_eq!(ns.namespace(), "default");
    assert_eq!(
        names(&ns.list(&Selector::everything())),
        vec!["default/db-1", "default/web-1", "default/web-2"]
    );
    assert_eq!(
        names(&ns.list(&sel("app=web"))),
        vec!["default/web-1", "default/web-2"]
    );
    assert!(ns.list(&Selector::nothing()).is_empty());
    assert!(
        lister
            .namespaced("missing")
            .list(&Selector::everything())
            .is_empty()
    );
    assert_eq!(ns.get("db-1").unwrap().name, "db-1");
    assert!(ns.get("web-3").is_none());
    // "" means all namespaces, as upstream ListAllByNamespace.
    assert_eq!(lister.namespaced("").list(&sel("app=web")).len(), 4);
    // Cluster-scoped get.
    assert_eq!(lister.get("", "node-1").unwrap().name, "node-1");
    assert_eq!(lister.get("prod", "web-3").unwrap().name, "web-3");
    assert!(lister.get("prod", "web-1").is_none());
}

#[test]
fn namespaced_list_falls_back_to_scan_without_namespace_index() {
    let store = Store::with_indexers([("other".to_string(), index_fn(|_: &Obj| vec![]))]);
    fixture(&store);
    let lister = Lister::new(store);
    assert_eq!(
        names(&lister.namespaced("default").list(&sel("app=web"))),
        vec!["default/web-1", "default/web-2"]
    );
    assert_eq!(
        lister
            .namespaced("prod")
            .list(&Selector::everything())
            .len(),
        1
    );
}

#[test]
fn lister_sees_store_updates() {
    let store = Store::new();
    let lister = Lister::new(store.clone());
    assert!(lister.list(&Selector::everything()).is_empty());
    fixture(&store);
    assert_eq!(lister.list(&Selector::everything()).len(), 5);
    assert_eq!(lister.store().len(), 5);
    let l2 = lister.clone();
    store.replace(vec![]);
    assert!(
        l2.namespaced("default")
            .list(&Selector::everything())
            .is_empty()
    );
    assert!(format!("{:?}", lister.namespaced("x")).contains("\"x\""));
}
