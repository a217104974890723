//! Paginated lists ([`Store::list_page`]): a page of a bucket under a key prefix, at the
//! current revision or, for continue tokens and `resourceVersion=N` with a limit, at an older
//! one, served by undoing the history events newer than it.

use std::collections::BTreeMap;

use super::history::TooOld;
use super::object::{Obj, ObjRef};
use super::store::Store;
use crate::registry::StorageId;

/// One page of a list.
#[derive(Debug)]
pub struct Page {
    /// Matching items.
    pub items: Vec<ObjRef>,
    /// Revision the list was served at.
    pub rv: u64,
    /// Key of the last item when more keys follow.
    pub last_key: Option<String>,
    /// Number of keys after this page (only computed on request).
    pub remaining: Option<u64>,
}

impl Store {
    /// A list page. `at` asks for the state at an older revision (served by undoing history);
    /// `start` is the first key to consider (inclusive).
    #[allow(clippy::too_many_arguments)]
    pub fn list_page(
        &self,
        id: StorageId,
        prefix: &str,
        start: Option<&str>,
        at: Option<u64>,
        filter: &dyn Fn(&Obj) -> bool,
        limit: Option<usize>,
        count_remaining: bool,
        is_continue: bool,
    ) -> Result<Page, TooOld> {
        let g = self.state.read();
        let rv = at.unwrap_or(g.rv).min(g.rv);
        let floor = g.compacted.max(g.resume_floor);
        if is_continue && rv < g.continue_floor {
            return Err(TooOld { oldest: floor + 1 });
        }
        let mut overrides: BTreeMap<&str, Option<&ObjRef>> = BTreeMap::new();
        if rv < g.rv {
            if rv < floor {
                return Err(TooOld { oldest: floor + 1 });
            }
            let skip = g.history.partition_point(|e| e.rv <= rv);
            for e in g.history.iter().skip(skip) {
                if e.storage == id && e.key.starts_with(prefix) {
                    overrides.entry(e.key.as_str()).or_insert(e.prev.as_ref());
                }
            }
        }
        let from = match start {
            Some(s) if s > prefix => s.to_string(),
            _ => prefix.to_string(),
        };
        let empty = BTreeMap::new();
        let bucket = g.bucket(id).unwrap_or(&empty);
        let mut cur = bucket
            .range(from.clone()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v))
            .peekable();
        let mut ovr = overrides
            .range(from.as_str()..)
            .map(|(k, v)| (*k, *v))
            .peekable();
        let mut items = Vec::new();
        let mut last_key: Option<String> = None;
        let mut remaining: u64 = 0;
        let mut full = false;
        loop {
            let next: Option<(&str, Option<&ObjRef>)> = match (cur.peek(), ovr.peek()) {
                (None, None) => None,
                (Some(_), None) => cur.next().map(|(k, v)| (k, Some(v))),
                (None, Some(_)) => ovr.next(),
                (Some((ck, _)), Some((ok, _))) => {
                    if ck < ok {
                        cur.next().map(|(k, v)| (k, Some(v)))
                    } else if ck == ok {
                        cur.next();
                        ovr.next()
                    } else {
                        ovr.next()
                    }
                }
            };
            let Some((k, v)) = next else { break };
            let Some(v) = v else { continue };
            if full {
                remaining += 1;
                if !count_remaining {
                    break;
                }
                continue;
            }
            if filter(v) {
                items.push(v.clone());
                if limit.is_some_and(|l| items.len() >= l) {
                    full = true;
                    last_key = Some(k.to_string());
                }
            }
        }
        let more = remaining > 0;
        Ok(Page {
            items,
            rv,
            last_key: if more { last_key } else { None },
            remaining: if more && count_remaining {
                Some(remaining)
            } else {
                None
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::tests::pod;
    use serde_json::json;
    #[test]
    fn page_at_old_revision_undoes_history() {
        let s = Store::new(0, 100);
        s.write(|t| {
            for n in ["a", "b", "c", "d"] {
                t.put(StorageId::PODS, &format!("ns/{n}"), pod("ns", n, 0));
            }
        });
        let all = |_: &Obj| true;
        let p1 = s
            .list_page(
                StorageId::PODS,
                "ns/",
                None,
                None,
                &all,
                Some(2),
                true,
                false,
            )
            .expect("page");
        assert_eq!(p1.items.len(), 2);
        assert_eq!(p1.remaining, Some(2));
        let last = p1.last_key.clone().expect("more");
        // Changes after the first page must not show up in the next pages.
        s.write(|t| {
            t.put(StorageId::PODS, "ns/bb", pod("ns", "bb", 0));
            t.remove(StorageId::PODS, "ns/c");
            t.put(StorageId::PODS, "ns/d", pod("ns", "d", 9));
        });
        let start = format!("{last}\u{0}");
        let p2 = s
            .list_page(
                StorageId::PODS,
                "ns/",
                Some(&start),
                Some(p1.rv),
                &all,
                Some(2),
                true,
                true,
            )
            .expect("page");
        let names: Vec<_> = p2
            .items
            .iter()
            .map(|o| o.value()["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("c"), json!("d")]);
        assert_eq!(p2.items[1].value()["v"], 0);
        assert!(p2.last_key.is_none());
        assert_eq!(p2.rv, p1.rv);
        s.expire_continue_tokens();
        assert!(
            s.list_page(
                StorageId::PODS,
                "ns/",
                Some(&start),
                Some(p1.rv),
                &all,
                Some(2),
                true,
                true
            )
            .is_err()
        );
    }
}
