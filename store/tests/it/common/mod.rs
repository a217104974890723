//! Shared test object type.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use kcm_store::Object;

/// A minimal storable object: namespace, name, labels, and a free-form `value` field that
/// tests index on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj {
    pub ns: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: String,
}

impl Object for Obj {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> Option<&str> {
        if self.ns.is_empty() {
            None
        } else {
            Some(&self.ns)
        }
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        Some(&self.labels)
    }
}

pub fn obj(ns: &str, name: &str, value: &str) -> Arc<Obj> {
    Arc::new(Obj {
        ns: ns.into(),
        name: name.into(),
        labels: BTreeMap::new(),
        value: value.into(),
    })
}

pub fn labeled(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<Obj> {
    Arc::new(Obj {
        ns: ns.into(),
        name: name.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        value: String::new(),
    })
}

pub fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Sorted key strings of objects.
pub fn names<T: Object>(objs: &[Arc<T>]) -> Vec<String> {
    let mut v: Vec<String> = objs.iter().map(|o| o.key().to_string()).collect();
    v.sort();
    v
}
