//! The list and watch calls the reflector makes (client-go `tools/cache/listwatch.go`,
//! `ListerWatcher`), behind a small trait so that the algorithm can be tested against a fake,
//! plus the implementation on top of `kube::Client`.
//!
//! The kube implementation builds its own query strings because `kube::api::ListParams` drops
//! `resourceVersion=0` whenever a `limit` is set, while client-go deliberately sends
//! `resourceVersion=0&limit=500` for the first list (served from the watch cache).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use kube::core::{ObjectList, WatchEvent};

use kcm_sharding::ServerFiltering;

use crate::shard::scope::{SHARD_SELECTOR_PARAM, shard_info_selector};
use crate::watchable::Watchable;

/// `resourceVersionMatch` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// `NotOlderThan`.
    NotOlderThan,
    /// `Exact`.
    Exact,
}

impl ResourceVersionMatch {
    fn as_str(self) -> &'static str {
        match self {
            Self::NotOlderThan => "NotOlderThan",
            Self::Exact => "Exact",
        }
    }
}

/// Options of one LIST request (one page).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// `resourceVersion` ("" = unset = most recent consistent read).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `limit` (0 = unlimited).
    pub limit: u32,
    /// `continue` token of the previous page.
    pub continue_token: Option<String>,
    /// A shard selector for this request instead of the lister-watcher's own (the part of a
    /// shard listed alone when it grows, [`ShardChange`]). Lister-watchers that cannot send one
    /// ignore it: the reflector filters on the client.
    ///
    /// [`ShardChange`]: crate::ShardChange
    pub shard_selector: Option<String>,
}

/// Options of one WATCH request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchOptions {
    /// `resourceVersion` to watch from ("" = now / consistent snapshot with initial events).
    pub resource_version: String,
    /// `timeoutSeconds`.
    pub timeout_seconds: u32,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `sendInitialEvents` (also sets `resourceVersionMatch=NotOlderThan`).
    pub send_initial_events: bool,
}

/// A stream of watch events.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, kube::Error>>;

/// Lists and watches one resource type (client-go `ListerWatcher`).
pub trait ListerWatcher<K>: Send + Sync {
    /// Lists one page.
    fn list(&self, opts: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, kube::Error>>
    where
        K: Clone;
    /// Opens a watch.
    fn watch(&self, opts: &WatchOptions) -> BoxFuture<'_, Result<WatchStream<K>, kube::Error>>;
    /// Changes the shard selector sent from the next request on (a [`DynamicShard`] moved);
    /// lister-watchers that cannot send one ignore it (the reflector filters on the client).
    ///
    /// [`DynamicShard`]: crate::DynamicShard
    fn set_shard_selector(&mut self, _selector: Option<String>) {}
}

/// [`ListerWatcher`] on a `kube::Client` for a resource type, in a namespace or cluster-wide,
/// with optional label/field/shard selectors.
pub struct ApiListerWatcher<K> {
    client: kube::Client,
    url_path: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    shard_selector: Option<String>,
    /// What the last list's `shardInfo` said: 0 unknown, 1 applied, 2 not applied.
    server_filtering: Arc<AtomicU8>,
    _k: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for ApiListerWatcher<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiListerWatcher")
            .field("url_path", &self.url_path)
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("shard_selector", &self.shard_selector)
            .finish()
    }
}

impl<K> ApiListerWatcher<K>
where
    K: kube::Resource<DynamicType = ()>,
{
    /// Watches `K` in `namespace` (`None` = all namespaces, or a cluster-scoped type).
    pub fn new(client: kube::Client, namespace: Option<&str>) -> Self {
        Self {
            client,
            url_path: K::url_path(&(), namespace),
            label_selector: None,
            field_selector: None,
            shard_selector: None,
            server_filtering: Arc::new(AtomicU8::new(0)),
            _k: PhantomData,
        }
    }

    /// Sets the label selector sent with every request.
    #[must_use]
    pub fn label_selector(mut self, selector: Option<String>) -> Self {
        self.label_selector = selector.filter(|s| !s.is_empty());
        self
    }

    /// Sets the field selector sent with every request.
    #[must_use]
    pub fn field_selector(mut self, selector: Option<String>) -> Self {
        self.field_selector = selector.filter(|s| !s.is_empty());
        self
    }

    /// Sets the shard selector (KEP-5866) sent with every list page and watch.
    #[must_use]
    pub fn shard_selector(mut self, selector: Option<String>) -> Self {
        self.shard_selector = selector.filter(|s| !s.is_empty());
        self
    }

    /// Whether the server applied the shard selector to the last list (`None` before the first
    /// list, or without a shard selector): `Applied` when the list carried a `shardInfo` echo,
    /// `NotApplied` when it did not (the echo's content is not compared, so never `Mismatch`).
    pub fn server_filtering(&self) -> Option<ServerFiltering> {
        match self.server_filtering.load(Ordering::Relaxed) {
            1 => Some(ServerFiltering::Applied),
            2 => Some(ServerFiltering::NotApplied),
            _ => None,
        }
    }

    /// Records and, when it changes, logs whether the server applied the shard selector.
    fn note_server_filtering(&self, applied: bool) {
        let now = if applied { 1 } else { 2 };
        if self.server_filtering.swap(now, Ordering::Relaxed) != now {
            if applied {
                tracing::info!(path = %self.url_path, "the API server applies the shard selector: listing and watching only this shard");
            } else {
                tracing::info!(path = %self.url_path, "the API server ignored the shard selector (gate ShardedListAndWatch off, or a server before v1.36): receiving every object and keeping only this shard");
            }
        }
    }

    fn query(&self) -> form_urlencoded::Serializer<'static, String> {
        self.query_with(self.shard_selector.as_deref())
    }

    fn query_with(
        &self,
        shard_selector: Option<&str>,
    ) -> form_urlencoded::Serializer<'static, String> {
        let target = format!("{}?", self.url_path);
        let start = target.len();
        let mut qp = form_urlencoded::Serializer::for_suffix(target, start);
        if let Some(l) = &self.label_selector {
            qp.append_pair("labelSelector", l);
        }
        if let Some(f) = &self.field_selector {
            qp.append_pair("fieldSelector", f);
        }
        // On every page too: the continue token does not carry the selector.
        if let Some(s) = shard_selector {
            qp.append_pair(SHARD_SELECTOR_PARAM, s);
        }
        qp
    }

    /// The URL of a LIST request (exposed for tests).
    pub fn list_url(&self, opts: &ListOptions) -> String {
        let selector = opts
            .shard_selector
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.shard_selector.as_deref());
        let mut qp = self.query_with(selector);
        if opts.limit > 0 {
            qp.append_pair("limit", &opts.limit.to_string());
        }
        if let Some(token) = &opts.continue_token {
            // The server rejects resourceVersion together with continue.
            qp.append_pair("continue", token);
        } else if !opts.resource_version.is_empty() {
            qp.append_pair("resourceVersion", &opts.resource_version);
            if let Some(m) = opts.resource_version_match {
                qp.append_pair("resourceVersionMatch", m.as_str());
            }
        }
        qp.finish()
    }

    /// The URL of a WATCH request (exposed for tests).
    pub fn watch_url(&self, opts: &WatchOptions) -> String {
        let mut qp = self.query();
        qp.append_pair("watch", "true");
        if opts.timeout_seconds > 0 {
            qp.append_pair("timeoutSeconds", &opts.timeout_seconds.to_string());
        }
        if opts.allow_bookmarks || opts.send_initial_events {
            qp.append_pair("allowWatchBookmarks", "true");
        }
        if opts.send_initial_events {
            qp.append_pair("sendInitialEvents", "true");
            qp.append_pair("resourceVersionMatch", "NotOlderThan");
        }
        if !opts.resource_version.is_empty() || opts.send_initial_events {
            qp.append_pair("resourceVersion", &opts.resource_version);
        }
        qp.finish()
    }
}

fn get_request(url: String) -> Result<http::Request<Vec<u8>>, kube::Error> {
    http::Request::get(url)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)
}

impl<K: Watchable> ListerWatcher<K> for ApiListerWatcher<K> {
    fn list(&self, opts: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, kube::Error>> {
        let url = self.list_url(opts);
        let sharded = self.shard_selector.is_some() || opts.shard_selector.is_some();
        async move {
            let mut req = get_request(url)?;
            req.extensions_mut().insert("list");
            if !sharded {
                return self.client.request::<ObjectList<K>>(req).await;
            }
            // Sharded: read the server's echo of the selector besides the items.
            let text = self.client.request_text(req).await?;
            let applied = shard_info_selector(text.as_bytes()).is_some();
            self.note_server_filtering(applied);
            serde_json::from_str::<ObjectList<K>>(&text).map_err(kube::Error::SerdeError)
        }
        .boxed()
    }

    fn watch(&self, opts: &WatchOptions) -> BoxFuture<'_, Result<WatchStream<K>, kube::Error>> {
        let url = self.watch_url(opts);
        async move {
            let mut req = get_request(url)?;
            req.extensions_mut().insert("watch");
            let stream = self.client.request_events::<K>(req).await?;
            Ok(stream.boxed())
        }
        .boxed()
    }

    fn set_shard_selector(&mut self, selector: Option<String>) {
        self.shard_selector = selector.filter(|s| !s.is_empty());
    }
}

impl<K, L> ListerWatcher<K> for std::sync::Arc<L>
where
    L: ListerWatcher<K> + ?Sized,
{
    fn list(&self, opts: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, kube::Error>>
    where
        K: Clone,
    {
        (**self).list(opts)
    }

    fn watch(&self, opts: &WatchOptions) -> BoxFuture<'_, Result<WatchStream<K>, kube::Error>> {
        (**self).watch(opts)
    }
}
