//! A cache index by the value of one label, per namespace: what a selector pinning that label
//! to one value selects is read from one index bucket instead of the whole namespace.
//!
//! The ReplicaSet controller lists, for every ReplicaSet of the same Deployment, the pods its
//! selector matches (upstream `getIndirectlyRelatedPods`, a namespace-wide list per
//! ReplicaSet). Those selectors all pin `pod-template-hash`, so [`POD_TEMPLATE_HASH_INDEX`]
//! answers them from the pods carrying that hash; the answer is the same, by the selector
//! (not by controller), as upstream's.
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//! use kcm_controller::label_index::POD_TEMPLATE_HASH_INDEX;
//! use kcm_controller::PodView;
//! use kcm_store::{Lister, Selector, Store};
//!
//! let pod = |name: &str, hash: &str| {
//!     let mut p = PodView::default();
//!     p.metadata.namespace = Some("default".into());
//!     p.metadata.name = Some(name.into());
//!     p.metadata.labels = Some(BTreeMap::from([
//!         ("app".to_string(), "web".to_string()),
//!         ("pod-template-hash".to_string(), hash.to_string()),
//!     ]));
//!     Arc::new(p)
//! };
//! let store = Store::new();
//! store.add_indexer(POD_TEMPLATE_HASH_INDEX.name, POD_TEMPLATE_HASH_INDEX.index_fn()).unwrap();
//! store.add(pod("web-a-1", "a"));
//! store.add(pod("web-b-1", "b"));
//!
//! let selector = Selector::parse("app=web,pod-template-hash=a").unwrap();
//! let pods = POD_TEMPLATE_HASH_INDEX.list(&Lister::new(store), "default", &selector);
//! assert_eq!(pods.len(), 1);
//! ```

use std::sync::Arc;

use kcm_store::{IndexFn, Lister, Object, Selector};

/// An index of objects by `namespace/value` of one label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelIndex {
    /// Name of the index.
    pub name: &'static str,
    /// The label whose value is indexed.
    pub label: &'static str,
}

/// Pods by `pod-template-hash` (the label every ReplicaSet of a Deployment selects on).
pub const POD_TEMPLATE_HASH_INDEX: LabelIndex = LabelIndex {
    name: "podTemplateHash",
    label: "pod-template-hash",
};

impl LabelIndex {
    /// The index value of `value` in `namespace`.
    pub fn key(&self, namespace: &str, value: &str) -> String {
        format!("{namespace}/{value}")
    }

    /// Indexes an object under `namespace/value` of the label (nothing without the label).
    pub fn index_fn<T: Object>(&self) -> IndexFn<T> {
        let index = *self;
        Arc::new(
            move |obj: &T| match obj.labels().and_then(|l| l.get(index.label)) {
                Some(v) => vec![index.key(obj.namespace().unwrap_or_default(), v)],
                None => Vec::new(),
            },
        )
    }

    /// The objects of `namespace` whose labels `selector` matches (a lister's
    /// `Pods(namespace).List(selector)`): from the index when the store has it and the selector
    /// requires the label to have one value, else from the namespace's objects.
    pub fn list<T: Object>(
        &self,
        lister: &Lister<T>,
        namespace: &str,
        selector: &Selector,
    ) -> Vec<Arc<T>> {
        if let Some(value) = selector.requires_exact_match(self.label)
            && let Ok(mut objs) = lister
                .store()
                .by_index(self.name, &self.key(namespace, value))
        {
            objs.retain(|o| selector.matches_opt(o.labels()));
            return objs;
        }
        lister.namespaced(namespace).list(selector)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kcm_store::Store;

    use super::*;
    use crate::pod_view::PodView;

    fn pod(ns: &str, name: &str, labels: &[(&str, &str)]) -> PodView {
        let mut p = PodView::default();
        p.metadata.namespace = Some(ns.into());
        p.metadata.name = Some(name.into());
        p.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        );
        p
    }

    fn names(pods: &[Arc<PodView>]) -> Vec<String> {
        let mut v: Vec<String> = pods
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        v.sort();
        v
    }

    /// With and without the index, and for selectors that do or do not pin the label: the
    /// answer of a namespace list with the selector.
    #[test]
    fn same_answer_as_the_namespace_list() {
        let pods = [
            pod("a", "h1", &[("app", "web"), ("pod-template-hash", "h")]),
            pod("a", "h1-db", &[("app", "db"), ("pod-template-hash", "h")]),
            pod("a", "g1", &[("app", "web"), ("pod-template-hash", "g")]),
            pod("a", "bare", &[("app", "web")]),
            pod(
                "b",
                "h-other-ns",
                &[("app", "web"), ("pod-template-hash", "h")],
            ),
        ];
        let selectors = [
            ("app=web,pod-template-hash=h", vec!["h1"]),
            ("pod-template-hash in (h)", vec!["h1", "h1-db"]),
            ("pod-template-hash in (g,h)", vec!["g1", "h1", "h1-db"]),
            ("app=web", vec!["bare", "g1", "h1"]),
            ("pod-template-hash=zzz", vec![]),
            ("", vec!["bare", "g1", "h1", "h1-db"]),
        ];
        for indexed in [true, false] {
            let store: Store<PodView> = Store::new();
            if indexed {
                store
                    .add_indexer(
                        POD_TEMPLATE_HASH_INDEX.name,
                        POD_TEMPLATE_HASH_INDEX.index_fn(),
                    )
                    .expect("index");
            }
            for p in &pods {
                store.add(Arc::new(p.clone()));
            }
            let lister = Lister::new(store);
            for (sel, want) in &selectors {
                let selector = Selector::parse(sel).expect("selector");
                assert_eq!(
                    names(&POD_TEMPLATE_HASH_INDEX.list(&lister, "a", &selector)),
                    *want,
                    "{sel} (indexed: {indexed})"
                );
            }
        }
    }
}
