//! Objects as the garbage collector and the namespace controller see them: metadata only, as
//! upstream's metadata client and metadata informers read them (`k8s.io/client-go/metadata`,
//! `metadatainformer`).
//!
//! Every request asks for `PartialObjectMetadata` (list: `PartialObjectMetadataList`) and accepts
//! plain JSON as a fallback, and [`MetadataObject`] decodes either shape (it reads `metadata`
//! and ignores everything else), so the same code works against a server that answers with the
//! metadata alone and one that sends whole objects.

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_reflector::lister_watcher::ResourceVersionMatch;
use kcm_reflector::{ListOptions, ListerWatcher, WatchOptions, WatchStream};
use kube::core::ObjectList;

/// `Accept` of a metadata GET or WATCH: `PartialObjectMetadata`, or JSON.
pub(crate) const ACCEPT_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// `Accept` of a metadata LIST: `PartialObjectMetadataList`, or JSON.
pub(crate) const ACCEPT_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// An object's metadata (`PartialObjectMetadata`, or the metadata of a whole object).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
pub(crate) struct MetadataObject {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}

impl k8s_openapi::Resource for MetadataObject {
    const API_VERSION: &'static str = "meta.k8s.io/v1";
    const GROUP: &'static str = "meta.k8s.io";
    const KIND: &'static str = "PartialObjectMetadata";
    const VERSION: &'static str = "v1";
    // Never used to build a URL: [`MetadataListerWatcher`] has the resource's own path.
    const URL_PATH_SEGMENT: &'static str = "";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for MetadataObject {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// Lists and watches one resource's metadata, for a [`kcm_reflector::Reflector`] (upstream's
/// metadata informers). The URL is the resource's collection, e.g. `/apis/apps/v1/replicasets`.
#[derive(Clone)]
pub(crate) struct MetadataListerWatcher {
    client: kube::Client,
    url_path: String,
}

impl std::fmt::Debug for MetadataListerWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataListerWatcher")
            .field("url_path", &self.url_path)
            .finish()
    }
}

impl MetadataListerWatcher {
    pub(crate) fn new(client: kube::Client, url_path: String) -> Self {
        MetadataListerWatcher { client, url_path }
    }

    fn query(&self) -> form_urlencoded::Serializer<'static, String> {
        let target = format!("{}?", self.url_path);
        let start = target.len();
        form_urlencoded::Serializer::for_suffix(target, start)
    }

    fn list_url(&self, opts: &ListOptions) -> String {
        let mut qp = self.query();
        if opts.limit > 0 {
            qp.append_pair("limit", &opts.limit.to_string());
        }
        if let Some(token) = &opts.continue_token {
            qp.append_pair("continue", token);
        } else if !opts.resource_version.is_empty() {
            qp.append_pair("resourceVersion", &opts.resource_version);
            if let Some(m) = opts.resource_version_match {
                let m = match m {
                    ResourceVersionMatch::NotOlderThan => "NotOlderThan",
                    ResourceVersionMatch::Exact => "Exact",
                };
                qp.append_pair("resourceVersionMatch", m);
            }
        }
        qp.finish()
    }

    fn watch_url(&self, opts: &WatchOptions) -> String {
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

fn get(
    url: String,
    accept: &str,
    verb: &'static str,
) -> Result<http::Request<Vec<u8>>, kube::Error> {
    let mut req = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    req.extensions_mut().insert(verb);
    Ok(req)
}

impl ListerWatcher<MetadataObject> for MetadataListerWatcher {
    fn list(
        &self,
        opts: &ListOptions,
    ) -> BoxFuture<'_, Result<ObjectList<MetadataObject>, kube::Error>> {
        let url = self.list_url(opts);
        async move {
            let req = get(url, ACCEPT_METADATA_LIST, "list")?;
            self.client.request::<ObjectList<MetadataObject>>(req).await
        }
        .boxed()
    }

    fn watch(
        &self,
        opts: &WatchOptions,
    ) -> BoxFuture<'_, Result<WatchStream<MetadataObject>, kube::Error>> {
        let url = self.watch_url(opts);
        async move {
            let req = get(url, ACCEPT_METADATA, "watch")?;
            let stream = self.client.request_events::<MetadataObject>(req).await?;
            Ok(stream.boxed())
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_partial_metadata_and_whole_objects() {
        let partial = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"name": "a", "uid": "u", "finalizers": ["x"]}});
        let whole = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "uid": "u", "finalizers": ["x"]}, "data": {"k": "v"}});
        for v in [partial, whole] {
            let o: MetadataObject = serde_json::from_value(v).expect("decodes");
            assert_eq!(o.metadata.name.as_deref(), Some("a"));
            assert_eq!(o.metadata.finalizers, Some(vec!["x".to_string()]));
        }
        let list: ObjectList<MetadataObject> = serde_json::from_value(json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": "7"},
            "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a"}}],
        }))
        .expect("list decodes");
        assert_eq!(list.items.len(), 1);
    }

    #[tokio::test]
    async fn urls() {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("static uri"));
        let client = kube::Client::try_from(config).expect("client");
        let lw = MetadataListerWatcher::new(client, "/apis/apps/v1/replicasets".into());
        let first = ListOptions {
            resource_version: "0".into(),
            limit: 500,
            ..ListOptions::default()
        };
        assert_eq!(
            lw.list_url(&first),
            "/apis/apps/v1/replicasets?limit=500&resourceVersion=0"
        );
        let next = ListOptions {
            continue_token: Some("c".into()),
            ..first
        };
        assert_eq!(
            lw.list_url(&next),
            "/apis/apps/v1/replicasets?limit=500&continue=c"
        );
        let watch = WatchOptions {
            resource_version: "12".into(),
            timeout_seconds: 300,
            allow_bookmarks: true,
            send_initial_events: false,
        };
        assert_eq!(
            lw.watch_url(&watch),
            "/apis/apps/v1/replicasets?watch=true&timeoutSeconds=300&allowWatchBookmarks=true&resourceVersion=12"
        );
    }
}
