//! One list-and-watch attempt (client-go `tools/cache/reflector.go`, `Reflector.ListAndWatch`):
//! a streaming list when configured (falling back to a paginated list on any error), or a
//! paginated list, then the watch from where it left off.

use tokio_util::sync::CancellationToken;

use crate::config::InitialListStrategy;
use crate::error::ReflectorError;
use crate::list::list;
use crate::lister_watcher::{ListerWatcher, WatchStream};
use crate::metrics::ErrorKind;
use crate::reflector_store::ReflectorStore;
use crate::state::ListWatch;
use crate::streaming_list::watch_list;
use crate::watch::watch_loop;
use crate::watchable::Watchable;

/// One list-and-watch attempt. Returns when the watch must be replaced by a relist, or on
/// cancellation.
pub(crate) async fn list_and_watch<K, L, S>(
    parts: &mut ListWatch<'_, L>,
    store: &mut S,
    cancel: &CancellationToken,
) -> Result<(), ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let mut watch: Option<WatchStream<K>> = None;
    if parts.config.initial_list == InitialListStrategy::StreamingList {
        match watch_list(parts, store, cancel).await {
            Ok(Some(stream)) => watch = Some(stream),
            Ok(None) => return Ok(()),
            Err(err) => {
                parts
                    .config
                    .metrics
                    .error(&parts.config.name, ErrorKind::StreamingList);
                tracing::info!(reflector = %parts.config.name, error = %err,
                    "data couldn't be fetched in watch-list mode, falling back to a regular list");
            }
        }
    }
    if watch.is_none() {
        tokio::select! {
            () = cancel.cancelled() => return Ok(()),
            res = list(parts, store) => res?,
        }
    }
    tracing::debug!(reflector = %parts.config.name, rv = %parts.state.last_sync_rv, "caches populated");
    watch_loop(parts, store, watch, cancel).await
}
