//! Watch: newline-delimited JSON events over a chunked response
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`, `serveWatchHandler`).
//!
//! Each watcher runs as a task reading the shared history from its last delivered
//! revision; event lines are serialized once per event and shared (`Bytes`). A watcher
//! too slow for the history window, or resuming from a compacted revision, gets the
//! `ERROR 410 Expired` line and the stream ends.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::Frame;
use rand::Rng as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;

use super::http::{Body, Ctx, view_json};
use super::list::{Filter, prefix_of};
use super::routes::Target;
use super::server::ApiServer;
use super::table;
use super::{metadata_view, negotiate};
use crate::registry::ResourceInfo;
use crate::registry::api_status::{ApiError, ApiResult, FieldError, go_quote};
use crate::registry::view::{self, view_value};
use crate::storage::{EventType, StoredEvent, watch_line};

/// How the watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Synthetic ADDED for the current state, then changes.
    Initial { end_bookmark: bool },
    /// Changes after this revision.
    After(u64),
}

fn validate(ctx: &Ctx) -> ApiResult<Start> {
    let rv = ctx.q("resourceVersion");
    let rvm = ctx.q("resourceVersionMatch");
    let sie = ctx.query.get("sendInitialEvents").map(String::as_str);
    let bookmarks = matches!(ctx.q("allowWatchBookmarks"), "true" | "1");
    let mut errs = Vec::new();
    match sie {
        Some("true" | "1") => {
            if rvm != "NotOlderThan" {
                if rvm.is_empty() {
                    errs.push(FieldError::forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    ));
                } else {
                    errs.push(FieldError::not_supported(
                        "resourceVersionMatch",
                        go_quote(rvm),
                        &["NotOlderThan"],
                    ));
                }
            }
            if !ctx.q("continue").is_empty() {
                errs.push(FieldError::forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden when continue is provided",
                ));
            }
        }
        Some(_) => {
            if !rvm.is_empty() && rvm != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    go_quote(rvm),
                    &["NotOlderThan"],
                ));
            }
        }
        None => {
            if !rvm.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid_list_options(&errs));
    }
    let parse_rv = |s: &str| -> ApiResult<u64> {
        s.parse::<u64>()
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s}")))
    };
    Ok(match sie {
        Some("true" | "1") => Start::Initial {
            end_bookmark: bookmarks,
        },
        Some(_) => match rv {
            "" | "0" => Start::After(u64::MAX),
            n => Start::After(parse_rv(n)?),
        },
        // Without sendInitialEvents an RV of "" or "0" is served as a streaming list
        // (WatchList default rewrite): ADDED events, then the end bookmark if bookmarks are allowed.
        None => match rv {
            "" | "0" => Start::Initial {
                end_bookmark: bookmarks,
            },
            n => Start::After(parse_rv(n)?),
        },
    })
}

/// The bookmark line at a revision.
pub fn bookmark_line(res: &ResourceInfo, rv: u64, initial_end: bool) -> Bytes {
    bookmark(res, Render::Shared, rv, initial_end)
}

fn bookmark(res: &ResourceInfo, mode: Render, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let obj = match mode {
        Render::Partial(gv) => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": gv, "metadata": meta})
        }
        _ => json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": meta}),
    };
    watch_line(
        "BOOKMARK",
        &crate::registry::go_json::to_vec(&obj).unwrap_or_default(),
    )
}

/// The ERROR line of a Status.
pub fn error_line(e: &ApiError) -> Bytes {
    watch_line(
        "ERROR",
        &crate::registry::go_json::to_vec(&e.to_status()).unwrap_or_default(),
    )
}

/// How a watcher renders events: shared lines, a converted view, Table rows, or
/// `PartialObjectMetadata` of a `meta.k8s.io` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Render {
    Shared,
    Converted,
    Table,
    Partial(&'static str),
    /// `as=PartialObjectMetadataList`: upstream cannot encode any event this way and ends the
    /// stream at the first one, without sending it.
    Unencodable,
}

fn render_obj(
    res: &ResourceInfo,
    mode: Render,
    t: &str,
    v: &Value,
    first_table: &mut bool,
) -> Bytes {
    match mode {
        Render::Table => {
            let tbl = table::watch_table(res, &view_value(res, v), *first_table);
            *first_table = false;
            watch_line(
                t,
                &crate::registry::go_json::to_vec(&tbl).unwrap_or_default(),
            )
        }
        Render::Partial(gv) => watch_line(
            t,
            &crate::registry::go_json::to_vec(&metadata_view::partial(v, gv)).unwrap_or_default(),
        ),
        _ => watch_line(
            t,
            &crate::registry::go_json::to_vec(&view_value(res, v)).unwrap_or_default(),
        ),
    }
}

fn event_line(
    res: &ResourceInfo,
    e: &StoredEvent,
    ns_prefix: &str,
    f: &Filter,
    mode: Render,
    first_table: &mut bool,
) -> Option<Bytes> {
    if !e.key.starts_with(ns_prefix) {
        return None;
    }
    let (t, which) = if f.is_empty() {
        (e.kind.as_str(), 0)
    } else {
        let new_m = f.matches_obj(&e.obj);
        let old_m = e.prev.as_ref().is_some_and(|p| f.matches_obj(p));
        match e.kind {
            EventType::Added if new_m => ("ADDED", 0),
            EventType::Deleted if old_m => ("DELETED", 0),
            EventType::Modified => match (old_m, new_m) {
                (true, true) => ("MODIFIED", 0),
                (false, true) => ("ADDED", 1),
                (true, false) => ("DELETED", 2),
                (false, false) => return None,
            },
            _ => return None,
        }
    };
    if mode == Render::Shared {
        return Some(match which {
            1 => e.added_line(),
            2 => e.left_line(),
            _ => e.natural_line(),
        });
    }
    if which == 2 {
        let mut prev = e.prev.as_ref().map(|p| p.value()).unwrap_or(Value::Null);
        if let Some(m) = prev.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("resourceVersion".into(), Value::String(e.rv.to_string()));
        }
        return Some(render_obj(res, mode, t, &prev, first_table));
    }
    Some(render_obj(res, mode, t, &e.obj.value(), first_table))
}

/// Start a watch: answer the headers at once and stream events from a task.
pub fn watch(srv: Arc<ApiServer>, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let start = validate(ctx)?;
    let f = Filter::from_ctx(t, ctx)?;
    let bookmarks = matches!(ctx.q("allowWatchBookmarks"), "true" | "1");
    let timeout = match ctx.q("timeoutSeconds").parse::<u64>() {
        Ok(s) if s > 0 => Duration::from_secs(s),
        _ => Duration::from_secs(rand::rng().random_range(1800..3600)),
    };
    if !ctx.output.media.streams() {
        return Err(negotiate::not_acceptable_stream());
    }
    let partial = ctx
        .output
        .conversion
        .as_ref()
        .filter(|c| c.is_meta("PartialObjectMetadata"));
    let mode = if ctx.wants_table() {
        Render::Table
    } else if ctx.output.converts_to("PartialObjectMetadataList") {
        Render::Unencodable
    } else if let Some(c) = partial {
        Render::Partial(if c.version == "v1" {
            "meta.k8s.io/v1"
        } else {
            "meta.k8s.io/v1beta1"
        })
    } else if view::needs_conversion(t.res) {
        Render::Converted
    } else {
        Render::Shared
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let res = t.res;
    let ns_prefix = match (&t.namespace, res.namespaced) {
        (Some(ns), true) => format!("{ns}/"),
        _ => String::new(),
    };
    let list_prefix = prefix_of(t, &f);
    tokio::spawn(async move {
        run(
            &srv,
            res,
            start,
            &f,
            &ns_prefix,
            &list_prefix,
            bookmarks,
            timeout,
            mode,
            &tx,
        )
        .await;
    });
    let stream = ReceiverStream::new(rx).map(|b| Ok::<_, Infallible>(Frame::data(b)));
    let mut r = Response::new(StreamBody::new(stream).boxed_unsync());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
async fn run(
    srv: &ApiServer,
    res: &'static ResourceInfo,
    start: Start,
    f: &Filter,
    ns_prefix: &str,
    list_prefix: &str,
    bookmarks: bool,
    timeout: Duration,
    mode: Render,
    tx: &mpsc::Sender<Bytes>,
) {
    let store = &srv.store;
    let mut changes = store.subscribe_storage(res.storage);
    // a custom resource's watch ends when its CRD changes or goes
    let generation = srv.crds.generation(res.storage);
    let mut epoch = store.subscribe_epoch();
    changes.borrow_and_update();
    epoch.borrow_and_update();
    let deadline = Instant::now() + timeout;
    let mut first_table = true;
    macro_rules! send {
        ($line:expr) => {
            if mode == Render::Unencodable {
                return;
            }
            let delay = srv
                .watch_delay_ms
                .load(std::sync::atomic::Ordering::Relaxed);
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            if tx.send($line).await.is_err() {
                return;
            }
            srv.metrics.watch_sent(res, 1);
        };
    }
    let mut last = match start {
        Start::After(u64::MAX) => store.rv(),
        Start::After(n) => {
            // A new watch from a compacted revision is refused at once; an open one reads on.
            if let Err(too_old) = store.check_resume(n) {
                send!(error_line(&ApiError::too_old(n, too_old.oldest)));
                return;
            }
            n
        }
        Start::Initial { end_bookmark } => {
            let (items, rv) = store.snapshot(res.storage, list_prefix, &|o| f.matches_obj(o));
            for o in items {
                let line = match mode {
                    Render::Shared => watch_line("ADDED", &o.json),
                    Render::Converted => watch_line("ADDED", &view_json(res, &o)),
                    Render::Table | Render::Partial(_) | Render::Unencodable => {
                        render_obj(res, mode, "ADDED", &o.value(), &mut first_table)
                    }
                };
                send!(line);
            }
            if end_bookmark {
                send!(bookmark(res, mode, rv, true));
            }
            rv
        }
    };
    // A bookmark claims the resource's own progress (its last event's RV, as the cacher's last
    // processed revision) and is sent only once that is past where the watch started, as
    // kube-apiserver does: a watch on a resource that did not change gets none.
    let start_rv = last;
    let mut res_rv = 0;
    let bookmark_every = srv.bookmark_interval;
    let pre_deadline = deadline.checked_sub(Duration::from_secs(2));
    let mut next_bookmark = Instant::now() + bookmark_every;
    if let Some(p) = pre_deadline
        && p < next_bookmark
    {
        next_bookmark = p;
    }
    loop {
        match store.events_since(res.storage, last) {
            Err(too_old) => {
                send!(error_line(&ApiError::too_old(last, too_old.oldest)));
                return;
            }
            Ok((evs, cur)) => {
                for e in &evs {
                    if let Some(line) = event_line(res, e, ns_prefix, f, mode, &mut first_table) {
                        send!(line);
                    }
                    res_rv = res_rv.max(e.rv);
                }
                last = last.max(cur);
            }
        }
        if srv.crds.generation(res.storage) != generation {
            return;
        }
        tokio::select! {
            _ = changes.changed() => {}
            _ = epoch.changed() => return,
            _ = srv.shutdown.cancelled() => return,
            _ = tokio::time::sleep_until(deadline) => return,
            _ = tx.closed() => return,
            _ = tokio::time::sleep_until(next_bookmark), if bookmarks => {
                // deliver everything up to now before claiming a revision
                if let Ok((evs, cur)) = store.events_since(res.storage, last) {
                    for e in &evs {
                        if let Some(line) = event_line(res, e, ns_prefix, f, mode, &mut first_table) {
                            send!(line);
                        }
                        res_rv = res_rv.max(e.rv);
                    }
                    last = last.max(cur);
                }
                if res_rv > start_rv {
                    send!(bookmark(res, mode, res_rv, false));
                }
                next_bookmark = Instant::now() + bookmark_every;
                if let Some(p) = pre_deadline && p > Instant::now() && p < next_bookmark {
                    next_bookmark = p;
                }
            }
        }
    }
}
