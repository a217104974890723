//! Label sets a selector can be matched against (apimachinery's `labels.Labels` interface).

use std::collections::{BTreeMap, HashMap};

/// A set of labels answering "the value of key `k`", so a [`Selector`](super::Selector) can
/// match labels kept in any shape, not only a `BTreeMap` (apimachinery's `labels.Labels`).
///
/// ```
/// use kcm_store::selector::Labels;
/// use kcm_store::Selector;
///
/// // Labels kept as a small vector of pairs.
/// struct Pairs(Vec<(&'static str, &'static str)>);
/// impl Labels for Pairs {
///     fn get(&self, key: &str) -> Option<&str> {
///         self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
///     }
/// }
///
/// let sel = Selector::parse("app=web,tier notin (db)").unwrap();
/// assert!(sel.matches_labels(&Pairs(vec![("app", "web")])));
/// assert!(!sel.matches_labels(&Pairs(vec![("app", "web"), ("tier", "db")])));
/// ```
pub trait Labels {
    /// The value of the label `key`, or `None` when the set has no such label.
    fn get(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<&str> {
        BTreeMap::get(self, key).map(String::as_str)
    }
}

impl<S: std::hash::BuildHasher> Labels for HashMap<String, String, S> {
    fn get(&self, key: &str) -> Option<&str> {
        HashMap::get(self, key).map(String::as_str)
    }
}
