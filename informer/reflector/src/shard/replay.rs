//! Watching a shard that grew from where its two parts meet (`docs/sharding.md`, "The shell": `Relist`).
//!
//! When a [`ShardChange`](super::dynamic::ShardChange) lists a part alone, the store holds the
//! part as of the part's list (resourceVersion `part_rv`) and the rest as of the last event
//! its watch delivered (`rest_rv`). One watch of the whole shard then starts at the smaller
//! of the two, and every event an object's part has already seen (its resourceVersion at or
//! below that part's mark) is skipped. Events arrive in resourceVersion order, so once one is
//! past both marks nothing more is skipped. This compares resourceVersions as integers, as
//! apimachinery's `resourceversion.CompareResourceVersion` does (v0.37.2: a well-formed
//! resourceVersion is a positive integer without leading zeros; kube-apiserver's are etcd
//! revisions). The reflector checks that both marks are well formed before it relies on it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::reflector_store::ReflectorStore;
use crate::shard::scope::ShardScope;

/// A resourceVersion as an integer, when it is well formed (digits, no leading zero, not
/// "0") and fits in 64 bits.
pub(crate) fn parse_rv(rv: &str) -> Option<u64> {
    if rv.starts_with('0') || !rv.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rv.parse().ok()
}

/// Where the part listed alone and the rest of the shard stand.
#[derive(Clone, Debug)]
pub(crate) struct Replay {
    pub(crate) part: ShardScope,
    pub(crate) part_rv: u64,
    pub(crate) rest_rv: u64,
}

impl Replay {
    /// The resourceVersion the joint watch starts from.
    pub(crate) fn start(&self) -> u64 {
        self.part_rv.min(self.rest_rv)
    }

    fn end(&self) -> u64 {
        self.part_rv.max(self.rest_rv)
    }

    /// Whether an event at `rv` for an object with `meta` is already in the store.
    pub(crate) fn seen(&self, meta: &ObjectMeta, rv: u64) -> bool {
        let mark = if self.part.matches(meta) {
            self.part_rv
        } else {
            self.rest_rv
        };
        rv <= mark
    }
}

/// A [`ReflectorStore`] that skips the events a [`Replay`] says the store has seen, until the
/// watch is past both marks.
pub(crate) struct ReplayFilter<'a, S> {
    inner: &'a mut S,
    replay: Option<Replay>,
    skipped: u64,
}

impl<'a, S> ReplayFilter<'a, S> {
    pub(crate) fn new(inner: &'a mut S, replay: Option<Replay>) -> Self {
        ReplayFilter {
            inner,
            replay,
            skipped: 0,
        }
    }

    /// How many events were skipped.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Whether the watch got past both marks (or there were none): the store is one shard again.
    pub(crate) fn met(&self) -> bool {
        self.replay.is_none()
    }

    /// Whether the event for `meta` is to be skipped; ends the replay once past both marks.
    fn skip(&mut self, meta: &ObjectMeta) -> bool {
        let Some(replay) = &self.replay else {
            return false;
        };
        let Some(rv) = meta.resource_version.as_deref().and_then(parse_rv) else {
            return false;
        };
        if rv > replay.end() {
            self.replay = None;
            return false;
        }
        let seen = replay.seen(meta, rv);
        if seen {
            self.skipped += 1;
        }
        seen
    }
}

impl<K: kube::Resource, S: ReflectorStore<K>> ReflectorStore<K> for ReplayFilter<'_, S> {
    fn add(&mut self, obj: K) {
        if !self.skip(obj.meta()) {
            self.inner.add(obj);
        }
    }

    fn update(&mut self, obj: K) {
        if !self.skip(obj.meta()) {
            self.inner.update(obj);
        }
    }

    fn delete(&mut self, obj: K) {
        if !self.skip(obj.meta()) {
            self.inner.delete(obj);
        }
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        // A whole list supersedes both marks.
        self.replay = None;
        self.inner.replace(objects, resource_version);
    }

    fn bookmark(&mut self, resource_version: &str) {
        if self
            .replay
            .as_ref()
            .zip(parse_rv(resource_version))
            .is_some_and(|(replay, rv)| rv >= replay.end())
        {
            self.replay = None;
        }
        self.inner.bookmark(resource_version);
    }

    fn replace_part(
        &mut self,
        part: &(dyn Fn(&K) -> bool + Sync),
        objects: Vec<K>,
        resource_version: &str,
    ) -> bool {
        self.inner.replace_part(part, objects, resource_version)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[derive(Default)]
    struct Recorder(Vec<String>);

    impl ReflectorStore<ConfigMap> for Recorder {
        fn add(&mut self, obj: ConfigMap) {
            self.0.push(format!(
                "add {}@{}",
                obj.metadata.name.unwrap_or_default(),
                obj.metadata.resource_version.unwrap_or_default()
            ));
        }
        fn update(&mut self, obj: ConfigMap) {
            self.0.push(format!(
                "update {}@{}",
                obj.metadata.name.unwrap_or_default(),
                obj.metadata.resource_version.unwrap_or_default()
            ));
        }
        fn delete(&mut self, obj: ConfigMap) {
            self.0.push(format!(
                "delete {}@{}",
                obj.metadata.name.unwrap_or_default(),
                obj.metadata.resource_version.unwrap_or_default()
            ));
        }
        fn replace(&mut self, objects: Vec<ConfigMap>, rv: String) {
            self.0.push(format!("replace {} at {rv}", objects.len()));
        }
    }

    fn cm(ns: &str, name: &str, rv: u64) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                resource_version: Some(rv.to_string()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn replay(part_rv: u64, rest_rv: u64) -> Replay {
        Replay {
            part: ShardScope::new("part", |m: &ObjectMeta| {
                m.namespace.as_deref() == Some("gained")
            }),
            part_rv,
            rest_rv,
        }
    }

    #[test]
    fn each_part_skips_what_it_has_seen() {
        // (part_rv, rest_rv, events as (namespace, name, rv, verb)) -> what reaches the store.
        type Case = (
            u64,
            u64,
            Vec<(&'static str, &'static str, u64, &'static str)>,
            Vec<&'static str>,
        );
        let cases: Vec<Case> = vec![
            // The part was listed later than the rest's last event: the watch starts at the
            // rest's mark; the part's events up to its list are skipped.
            (
                20,
                10,
                vec![
                    ("kept", "a", 11, "update"),
                    ("gained", "b", 12, "update"),
                    ("gained", "c", 20, "delete"),
                    ("kept", "a", 21, "update"),
                    ("gained", "b", 22, "update"),
                ],
                vec!["update a@11", "update a@21", "update b@22"],
            ),
            // The rest is ahead: its events up to its mark are skipped, the part's applied.
            (
                10,
                20,
                vec![
                    ("gained", "b", 11, "add"),
                    ("kept", "a", 15, "update"),
                    ("kept", "a", 20, "delete"),
                    ("gained", "b", 21, "update"),
                    ("kept", "d", 22, "add"),
                ],
                vec!["add b@11", "update b@21", "add d@22"],
            ),
            // Equal marks: nothing at or below them is new.
            (
                10,
                10,
                vec![("gained", "b", 10, "update"), ("kept", "a", 11, "update")],
                vec!["update a@11"],
            ),
        ];
        for (part_rv, rest_rv, events, want) in cases {
            let mut recorder = Recorder::default();
            let mut filter = ReplayFilter::new(&mut recorder, Some(replay(part_rv, rest_rv)));
            assert_eq!(
                filter.replay.as_ref().map(Replay::start),
                Some(part_rv.min(rest_rv))
            );
            for (ns, name, rv, verb) in events {
                let obj = cm(ns, name, rv);
                match verb {
                    "add" => filter.add(obj),
                    "update" => filter.update(obj),
                    _ => filter.delete(obj),
                }
            }
            assert_eq!(recorder.0, want, "part at {part_rv}, rest at {rest_rv}");
        }
    }

    #[test]
    fn the_replay_ends_past_both_marks_or_at_a_list() {
        let mut recorder = Recorder::default();
        let mut filter = ReplayFilter::new(&mut recorder, Some(replay(20, 10)));
        filter.update(cm("gained", "b", 15));
        assert_eq!(filter.skipped(), 1);
        assert!(!filter.met());
        filter.update(cm("gained", "b", 21));
        assert!(filter.met(), "past both marks");
        // Out of order afterwards (cannot happen on one watch): no longer skipped.
        filter.update(cm("gained", "b", 5));
        assert_eq!(filter.skipped(), 1);

        let mut filter = ReplayFilter::new(&mut recorder, Some(replay(20, 10)));
        filter.bookmark("20");
        assert!(filter.replay.is_none(), "a bookmark at the end mark");
        let mut filter = ReplayFilter::new(&mut recorder, Some(replay(20, 10)));
        filter.bookmark("15");
        assert!(filter.replay.is_some());
        filter.replace(Vec::new(), "30".into());
        assert!(filter.replay.is_none(), "a whole list supersedes it");
    }

    #[test]
    fn resource_versions_that_are_not_integers_are_never_skipped() {
        // apimachinery's well-formedness (TestCompareResourceVersion's invalid inputs).
        assert_eq!(parse_rv("42"), Some(42));
        assert_eq!(parse_rv("18446744073709551615"), Some(u64::MAX));
        for invalid in [
            "",
            "0",
            "007",
            "0100",
            "100a",
            "abc",
            "-1",
            "+1",
            "1.5",
            " 1",
            "18446744073709551616",
        ] {
            assert_eq!(parse_rv(invalid), None, "{invalid:?}");
        }
        let mut recorder = Recorder::default();
        let mut filter = ReplayFilter::new(&mut recorder, Some(replay(20, 10)));
        let mut odd = cm("gained", "b", 0);
        odd.metadata.resource_version = Some("x7".into());
        filter.update(odd);
        assert_eq!(recorder.0, ["update b@x7"]);
    }
}
