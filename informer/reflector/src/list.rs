//! The (re)list: resourceVersion and page-size choice, the pager (continue tokens, expired-token
//! fallback), and the two-step 410 / "too large resourceVersion" recovery (client-go
//! `tools/cache/reflector.go`, `Reflector.list` and `relistResourceVersion`, and
//! `tools/pager/pager.go`).

use kube::core::ObjectList;

use crate::config::DEFAULT_PAGE_SIZE;
use crate::error::{ReflectorError, is_expired, is_expired_or_too_large};
use crate::lister_watcher::{ListOptions, ListerWatcher};
use crate::reflector_store::ReflectorStore;
use crate::state::ListWatch;
use crate::watchable::{Watchable, resource_version};

/// The resourceVersion of the next list (client-go `relistResourceVersion`): "" (consistent read)
/// after a 410/too-large answer, "0" (any, from the watch cache) for the very first list, otherwise
/// the last synced RV (not older than).
pub(crate) fn relist_resource_version(last_sync_rv: &str, unavailable: bool) -> &str {
    if unavailable {
        ""
    } else if last_sync_rv.is_empty() {
        "0"
    } else {
        last_sync_rv
    }
}

/// The page size of the next list: an explicit size wins; after a paginated RV="0" answer keep
/// 500; a list at a specific RV is unpaginated (so the watch cache can serve it); otherwise 500.
pub(crate) fn list_page_size(explicit: Option<u32>, paginated_result: bool, rv: &str) -> u32 {
    match explicit {
        Some(size) if size > 0 => size,
        _ if paginated_result => DEFAULT_PAGE_SIZE,
        _ if !rv.is_empty() && rv != "0" => 0,
        _ => DEFAULT_PAGE_SIZE,
    }
}

/// The outcome of a paged list.
#[derive(Debug)]
pub struct PagedList<K> {
    /// All items of all pages.
    pub items: Vec<K>,
    /// The list's resourceVersion (from the first page).
    pub resource_version: String,
    /// True when more than one page was needed.
    pub paginated: bool,
}

/// Lists everything page by page (client-go `tools/pager` with `FullListIfExpired`).
///
/// An expired continue token (410 on a later page) triggers one unpaginated list at the originally
/// requested resourceVersion.
pub async fn list_pages<K, L>(lw: &L, rv: &str, page_size: u32) -> Result<PagedList<K>, kube::Error>
where
    K: Clone,
    L: ListerWatcher<K> + ?Sized,
{
    list_pages_of(lw, rv, page_size, None).await
}

/// [`list_pages`] with a shard selector of its own on every page instead of the
/// lister-watcher's (`None`: the lister-watcher's).
pub(crate) async fn list_pages_of<K, L>(
    lw: &L,
    rv: &str,
    page_size: u32,
    shard_selector: Option<&str>,
) -> Result<PagedList<K>, kube::Error>
where
    K: Clone,
    L: ListerWatcher<K> + ?Sized,
{
    let first = ListOptions {
        resource_version: rv.to_owned(),
        resource_version_match: None,
        limit: page_size,
        continue_token: None,
        shard_selector: shard_selector.map(str::to_owned),
    };
    let mut opts = first.clone();
    let mut items: Vec<K> = Vec::new();
    let mut list_rv: Option<String> = None;
    loop {
        let page: ObjectList<K> = match lw.list(&opts).await {
            Ok(page) => page,
            Err(err) if opts.continue_token.is_some() && is_expired(&err) => {
                tracing::debug!(error = %err, "continue token expired, listing everything at once");
                let full = lw
                    .list(&ListOptions {
                        limit: 0,
                        continue_token: None,
                        ..first
                    })
                    .await?;
                return Ok(PagedList {
                    resource_version: full.metadata.resource_version.clone().unwrap_or_default(),
                    items: full.items,
                    paginated: false,
                });
            }
            Err(err) => return Err(err),
        };
        let token = page.metadata.continue_.clone().filter(|t| !t.is_empty());
        let first_page = list_rv.is_none();
        if list_rv.is_none() {
            list_rv = Some(page.metadata.resource_version.clone().unwrap_or_default());
        }
        if first_page && token.is_none() {
            return Ok(PagedList {
                items: page.items,
                resource_version: list_rv.unwrap_or_default(),
                paginated: false,
            });
        }
        items.extend(page.items);
        match token {
            None => {
                return Ok(PagedList {
                    items,
                    resource_version: list_rv.unwrap_or_default(),
                    paginated: true,
                });
            }
            Some(token) => {
                opts.continue_token = Some(token);
                // The server rejects resourceVersion together with continue.
                opts.resource_version.clear();
                opts.resource_version_match = None;
            }
        }
    }
}

/// Lists and replaces the store's content (client-go `Reflector.list`).
pub(crate) async fn list<K, L, S>(
    parts: &mut ListWatch<'_, L>,
    store: &mut S,
) -> Result<(), ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let rv = relist_resource_version(
        &parts.state.last_sync_rv,
        parts.state.last_sync_rv_unavailable,
    )
    .to_owned();
    let page_size = list_page_size(parts.config.page_size, parts.state.paginated_result, &rv);
    let mut result = list_pages(parts.lw, &rv, page_size).await;
    if let Err(err) = &result
        && is_expired_or_too_large(err)
    {
        tracing::debug!(reflector = %parts.config.name, rv = %rv, error = %err,
            "list at the last synced resourceVersion is not possible, retrying with a consistent read");
        parts.state.last_sync_rv_unavailable = true;
        result = list_pages(parts.lw, "", page_size).await;
    }
    let list = result.map_err(|source| ReflectorError::List {
        resource: parts.config.name.clone(),
        source,
    })?;
    if rv == "0" && list.paginated {
        parts.state.paginated_result = true;
    }
    parts.state.last_sync_rv_unavailable = false;
    if list.items.iter().any(|o| o.meta().name.is_none()) {
        return Err(ReflectorError::MissingName {
            resource: parts.config.name.clone(),
        });
    }
    parts
        .config
        .metrics
        .listed(&parts.config.name, list.items.len());
    tracing::debug!(reflector = %parts.config.name, items = list.items.len(), rv = %list.resource_version, "listed");
    let list_rv = if list.resource_version.is_empty() {
        // A server that sends no list RV: fall back to the newest object RV we saw.
        list.items
            .iter()
            .map(|o| resource_version(o).to_owned())
            .max_by_key(|v| v.parse::<u64>().unwrap_or(0))
            .unwrap_or_default()
    } else {
        list.resource_version
    };
    store.replace(list.items, list_rv.clone());
    parts.state.set_last_sync_rv(&list_rv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relist_resource_version_follows_upstream() {
        // TestRelistResourceVersion-style table: (last synced, unavailable) -> RV sent.
        let cases = [
            ("", false, "0"),
            ("", true, ""),
            ("42", false, "42"),
            ("42", true, ""),
        ];
        for (last, unavailable, want) in cases {
            assert_eq!(
                relist_resource_version(last, unavailable),
                want,
                "{last:?} {unavailable}"
            );
        }
    }

    #[test]
    fn page_size_rule() {
        // (explicit, paginated_result, rv) -> limit
        let cases = [
            (None, false, "0", 500),
            (None, false, "", 500),
            (None, false, "42", 0),
            (None, true, "42", 500),
            (Some(7), false, "42", 7),
            (Some(7), true, "0", 7),
            (Some(0), false, "0", 500),
        ];
        for (explicit, paginated, rv, want) in cases {
            assert_eq!(
                list_page_size(explicit, paginated, rv),
                want,
                "{explicit:?} {paginated} {rv}"
            );
        }
    }
}
