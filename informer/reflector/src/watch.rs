//! Watching from the last synced resourceVersion (client-go `tools/cache/reflector.go`,
//! `Reflector.watch` (the watch loop) and `handleWatch`).

use std::time::Duration;

use futures::StreamExt;
use kube::core::WatchEvent;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{
    ReflectorError, is_expired_or_too_large, is_too_many_requests, is_watch_error_retriable,
};
use crate::lister_watcher::{ListerWatcher, WatchOptions, WatchStream};
use crate::metrics::{ErrorKind, ReflectorMetrics};
use crate::reflector_store::ReflectorStore;
use crate::state::ListWatch;
use crate::watchable::{Watchable, resource_version};

/// Annotation on the bookmark that ends the initial events of a streaming list.
pub(crate) const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// A watch that ends this quickly without any event is reported as an error (client-go
/// `VeryShortWatchError`), which sends the reflector back to a relist after a backoff.
pub(crate) const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// Server-side timeout of one watch: `min + unit * (max - min)` seconds with `max = 2 * min`,
/// `unit` uniform in `[0, 1)`, truncated to whole seconds.
pub(crate) fn watch_timeout_seconds(min: Duration, unit: f64) -> u32 {
    let min_s = min.as_secs_f64();
    let secs = min_s + unit.clamp(0.0, 1.0) * min_s;
    // Bounded by 2 * min, which is far below u32::MAX seconds for any sane configuration.
    secs.min(f64::from(u32::MAX)) as u32
}

/// How one watch stream ended.
#[derive(Debug)]
pub(crate) enum WatchOutcome {
    /// The server closed the stream (normally: its timeout elapsed).
    Closed { events: usize, elapsed: Duration },
    /// The initial-events-end bookmark arrived (streaming list only); the stream stays open.
    InitialEventsEnded,
    /// Cancellation was requested.
    Cancelled,
    /// The stream ended with an error (ERROR event or transport/decoding failure).
    Failed(kube::Error),
}

/// What [`handle_watch`] needs besides the stream and the store.
pub(crate) struct WatchContext<'a> {
    pub(crate) name: &'a str,
    pub(crate) metrics: &'a dyn ReflectorMetrics,
    pub(crate) cancel: &'a CancellationToken,
}

/// Applies one watch stream to `store`, recording resourceVersions through `on_rv` (client-go
/// `handleWatch`).
///
/// `propagate_rv` is false when the watch started at RV "" or "0": the synthetic ADDED burst is not
/// in RV order, so RVs are only recorded once a non-ADDED event was seen.
pub(crate) async fn handle_watch<K, S>(
    ctx: WatchContext<'_>,
    stream: &mut WatchStream<K>,
    store: &mut S,
    propagate_rv: bool,
    exit_on_initial_events_end: bool,
    on_rv: &mut (dyn FnMut(&str) + Send),
) -> WatchOutcome
where
    K: Watchable,
    S: ReflectorStore<K> + ?Sized,
{
    let WatchContext {
        name,
        metrics,
        cancel,
    } = ctx;
    let start = Instant::now();
    let mut events = 0usize;
    let mut saw_non_added = false;
    let mut last_progress = Instant::now();
    let mut ticker = tokio::time::interval(Duration::from_secs(10));
    ticker.tick().await;
    loop {
        let item = tokio::select! {
            () = cancel.cancelled() => return WatchOutcome::Cancelled,
            item = stream.next() => item,
            _ = ticker.tick(), if exit_on_initial_events_end => {
                if last_progress.elapsed() >= Duration::from_secs(10) {
                    tracing::warn!(reflector = %name, events,
                        "streaming list: no events received for 10s while waiting for the initial-events-end bookmark");
                }
                continue;
            }
        };
        let event = match item {
            None => {
                return WatchOutcome::Closed {
                    events,
                    elapsed: start.elapsed(),
                };
            }
            Some(Err(err)) => return WatchOutcome::Failed(err),
            Some(Ok(event)) => event,
        };
        last_progress = Instant::now();
        metrics.watch_event(name);
        let rv: String = match event {
            WatchEvent::Error(status) => return WatchOutcome::Failed(kube::Error::Api(status)),
            WatchEvent::Added(obj) => {
                let rv = resource_version(&obj).to_owned();
                store.add(obj);
                rv
            }
            WatchEvent::Modified(obj) => {
                saw_non_added = true;
                let rv = resource_version(&obj).to_owned();
                store.update(obj);
                rv
            }
            WatchEvent::Deleted(obj) => {
                saw_non_added = true;
                let rv = resource_version(&obj).to_owned();
                store.delete(obj);
                rv
            }
            WatchEvent::Bookmark(bookmark) => {
                saw_non_added = true;
                let ended = bookmark
                    .metadata
                    .annotations
                    .get(INITIAL_EVENTS_END_ANNOTATION)
                    .is_some_and(|v| v == "true");
                let rv = bookmark.metadata.resource_version;
                store.bookmark(&rv);
                if propagate_rv || saw_non_added {
                    on_rv(&rv);
                }
                events += 1;
                if ended && exit_on_initial_events_end {
                    return WatchOutcome::InitialEventsEnded;
                }
                continue;
            }
        };
        if (propagate_rv || saw_non_added) && !rv.is_empty() {
            on_rv(&rv);
        }
        events += 1;
    }
}

/// The options of the next watch, from the last synced resourceVersion, with a server-side
/// timeout uniform in `[min, 2 * min)`.
pub(crate) fn watch_options<L>(
    parts: &ListWatch<'_, L>,
    send_initial_events: bool,
) -> WatchOptions {
    WatchOptions {
        resource_version: parts.state.last_sync_rv.clone(),
        timeout_seconds: watch_timeout_seconds(
            parts.config.effective_min_watch_timeout(),
            rand::random(),
        ),
        allow_bookmarks: true,
        send_initial_events,
    }
}

/// Watches from the last synced RV until a relist is needed (client-go `Reflector.watch`).
/// `initial` is the still-open stream of a streaming list, if any.
pub(crate) async fn watch_loop<K, L, S>(
    parts: &mut ListWatch<'_, L>,
    store: &mut S,
    initial: Option<WatchStream<K>>,
    cancel: &CancellationToken,
) -> Result<(), ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let mut pending = initial;
    loop {
        if cancel.is_cancelled() {
            return Ok(());
        }
        let mut propagate_rv = true;
        let mut stream = match pending.take() {
            Some(stream) => stream,
            None => {
                let opts = watch_options(parts, false);
                if opts.resource_version.is_empty() || opts.resource_version == "0" {
                    propagate_rv = false;
                }
                let opened = tokio::select! {
                    () = cancel.cancelled() => return Ok(()),
                    opened = parts.lw.watch(&opts) => opened,
                };
                match opened {
                    Ok(stream) => {
                        parts.config.metrics.watch_started(&parts.config.name);
                        stream
                    }
                    Err(err) if is_watch_error_retriable(&err) => {
                        parts
                            .config
                            .metrics
                            .error(&parts.config.name, ErrorKind::WatchStart);
                        tracing::info!(reflector = %parts.config.name, error = %err,
                            "watch could not be opened, retrying after backoff");
                        if !parts.sleep_backoff(cancel).await {
                            return Ok(());
                        }
                        continue;
                    }
                    Err(source) => {
                        return Err(ReflectorError::Watch {
                            resource: parts.config.name.clone(),
                            source,
                        });
                    }
                }
            }
        };
        let name = parts.config.name.clone();
        let metrics = parts.config.metrics.clone();
        let state = &mut *parts.state;
        let outcome = handle_watch(
            WatchContext {
                name: &name,
                metrics: metrics.as_ref(),
                cancel,
            },
            &mut stream,
            store,
            propagate_rv,
            false,
            &mut |rv| state.set_last_sync_rv(rv),
        )
        .await;
        drop(stream);
        match outcome {
            WatchOutcome::Cancelled => return Ok(()),
            WatchOutcome::InitialEventsEnded => {}
            WatchOutcome::Closed { events, elapsed } => {
                if events == 0 && elapsed < VERY_SHORT_WATCH {
                    metrics.error(&name, ErrorKind::Watch);
                    tracing::warn!(reflector = %name, ?elapsed,
                        "very short watch: the watch closed without receiving any item, relisting");
                    return Ok(());
                }
                // Normal close (server timeout): re-watch at once from the last RV.
            }
            WatchOutcome::Failed(err) => {
                if cancel.is_cancelled() {
                    return Ok(());
                }
                metrics.error(&name, ErrorKind::Watch);
                if is_expired_or_too_large(&err) {
                    tracing::debug!(reflector = %name, error = %err, "watch expired, relisting");
                    return Ok(());
                }
                if is_too_many_requests(&err) {
                    tracing::info!(reflector = %name, error = %err, "watch throttled, re-watching after backoff");
                    if !parts.sleep_backoff(cancel).await {
                        return Ok(());
                    }
                    continue;
                }
                tracing::warn!(reflector = %name, error = %err, "watch ended with an error, relisting");
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_timeout_is_uniform_in_min_to_twice_min() {
        let min = Duration::from_secs(300);
        assert_eq!(watch_timeout_seconds(min, 0.0), 300);
        assert_eq!(watch_timeout_seconds(min, 0.5), 450);
        assert_eq!(watch_timeout_seconds(min, 0.999_999), 599);
        for i in 0..1000 {
            let t = watch_timeout_seconds(min, f64::from(i) / 1000.0);
            assert!((300..600).contains(&t), "{t}");
        }
    }
}
