//! A tower layer that puts every write of a `kube::Client` behind a [`WriteFence`].
//!
//! Requests with a writing method (POST, PUT, PATCH, DELETE) pass [`WriteFence::check`] when
//! the layer's service is called; reads and watches pass untouched. A refused request is
//! answered with a [`Fenced`] error (kube-client returns it as
//! `kube::Error::Service`, see [`is_fenced`](crate::is_fenced)) and is never sent.
//!
//! Put the layer as close to the wire as the stack allows: inside any client-side rate
//! limiter and retry policy, so that the check happens after their waits and again for each
//! retry. kcm's clients place it right under the rate limiter, above the request metrics, so
//! a refused write is not counted as a request.
//!
//! ```no_run
//! # async fn demo(config: kube::Config) -> Result<(), kube::Error> {
//! use kcm_leaderelection::{FenceLayer, WriteFence};
//!
//! let fence = WriteFence::new("kube-system/my-controller");
//! let client = kube::client::ClientBuilder::try_from(config)?
//!     .with_layer(&FenceLayer::new(fence.clone()))
//!     .build();
//! // Hand `fence` to a LeaderElector::with_fence and `client` to the controller.
//! # let _ = client; Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Method;
use tower::BoxError;

use crate::fence::{Fenced, WriteFence, find_fenced};
use crate::member::gate::{ShardGate, namespace_of_path};

/// Wraps a client's service so that writes pass the fence (see the [crate documentation](crate)).
#[derive(Clone, Debug)]
pub struct FenceLayer {
    fence: WriteFence,
    gate: Option<ShardGate>,
}

impl FenceLayer {
    /// A layer checking `fence` before every write.
    pub fn new(fence: WriteFence) -> Self {
        FenceLayer { fence, gate: None }
    }

    /// The fence this layer checks (for a [`FencedConnector`](crate::FencedConnector) under
    /// the same client).
    pub fn fence(&self) -> &WriteFence {
        &self.fence
    }

    /// Also checks every namespaced write against a sharded member's active shard, and counts
    /// it in flight until it is answered (see [`ShardGate`]). Writes outside the shard are
    /// refused with [`Fenced`]; cluster-scoped writes pass (they belong to no shard).
    #[must_use]
    pub fn with_shard(mut self, gate: ShardGate) -> Self {
        self.gate = Some(gate);
        self
    }
}

impl<S> tower::Layer<S> for FenceLayer {
    type Service = FencedService<S>;
    fn layer(&self, inner: S) -> FencedService<S> {
        FencedService {
            inner,
            fence: self.fence.clone(),
            gate: self.gate.clone(),
        }
    }
}

/// The service made by [`FenceLayer`].
#[derive(Clone, Debug)]
pub struct FencedService<S> {
    inner: S,
    fence: WriteFence,
    gate: Option<ShardGate>,
}

/// Whether a request with `method` changes something on the server.
pub(crate) fn is_write(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

impl<S, B> tower::Service<http::Request<B>> for FencedService<S>
where
    S: tower::Service<http::Request<B>>,
    S::Response: Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let mut in_flight = None;
        if is_write(request.method()) {
            let checked = self.fence.check().and_then(|()| {
                match (&self.gate, namespace_of_path(request.uri().path())) {
                    (Some(gate), Some(namespace)) => match gate.begin_write(namespace) {
                        Ok(write) => {
                            in_flight = Some(write);
                            Ok(())
                        }
                        Err(outside) => Err(Fenced {
                            lease: self.fence.lease().to_owned(),
                            why: format!(
                                "namespace {} (shard key {:016x}) is not in this member's active shard",
                                outside.namespace, outside.hash
                            ),
                        }),
                    },
                    _ => Ok(()),
                }
            });
            if let Err(refused) = checked {
                tracing::debug!(
                    method = %request.method(),
                    path = %request.uri().path(),
                    error = %refused,
                    "write refused by the fence"
                );
                return Box::pin(std::future::ready(Err(Box::new(refused) as BoxError)));
            }
        }
        let response = self.inner.call(request);
        Box::pin(async move {
            let answer = response.await.map_err(|e| {
                let e: BoxError = e.into();
                // Refused at the wire (a FencedConnector): the same refusal as above, so that
                // callers and logs see `Fenced` whatever wrapped it on the way up.
                match find_fenced(&*e) {
                    Some(fenced) => Box::new(fenced.clone()) as BoxError,
                    None => e,
                }
            });
            // Answered (or failed): no longer in flight.
            drop(in_flight);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::time::Instant;
    use tower::{Service, ServiceExt};

    use super::*;
    use crate::fence::is_fenced;
    use crate::member::gate::ShardGate;

    #[tokio::test(start_paused = true)]
    async fn writes_wait_for_an_open_fence_reads_never_do() {
        let sent = Arc::new(AtomicUsize::new(0));
        let counter = sent.clone();
        let inner = tower::service_fn(move |_: http::Request<()>| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, std::convert::Infallible>(http::Response::new(())) }
        });
        let fence = WriteFence::new("ns/lease");
        let mut svc = tower::Layer::layer(&FenceLayer::new(fence.clone()), inner);
        let request = |method: &str| {
            http::Request::builder()
                .method(method)
                .uri("/api/v1/namespaces/default/pods")
                .body(())
                .expect("request")
        };
        // Closed: every write is refused and not sent; reads go through.
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            let err = svc
                .ready()
                .await
                .expect("ready")
                .call(request(method))
                .await
                .expect_err("fenced");
            assert!(is_fenced(err.as_ref()), "{method}: {err}");
        }
        assert_eq!(sent.load(Ordering::SeqCst), 0);
        for method in ["GET", "HEAD", "OPTIONS"] {
            let ok = svc
                .ready()
                .await
                .expect("ready")
                .call(request(method))
                .await;
            assert!(ok.is_ok(), "{method}");
        }
        assert_eq!(sent.load(Ordering::SeqCst), 3);
        assert_eq!(fence.refused_total(), 4);
        // Open: writes go through until the deadline.
        fence.open_until(Instant::now() + Duration::from_secs(1));
        let mut post = async || {
            let svc = svc.ready().await.expect("ready");
            svc.call(request("POST")).await.is_ok()
        };
        assert!(post().await);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(!post().await);
        assert_eq!(sent.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_shard_refuses_writes_outside_it_and_counts_those_in_flight() {
        let release = Arc::new(tokio::sync::Semaphore::new(0));
        let held = release.clone();
        let inner = tower::service_fn(move |_: http::Request<()>| {
            let held = held.clone();
            async move {
                let _permit = held.acquire().await.expect("open semaphore");
                Ok::<_, std::convert::Infallible>(http::Response::new(()))
            }
        });
        let fence = WriteFence::new("ns/member");
        fence.open_until(Instant::now() + Duration::from_secs(60));
        let gate = ShardGate::new();
        let h = kcm_sharding::hash_field("mine");
        let mine = kcm_sharding::ShardRanges::from_ranges([kcm_sharding::ShardRange::new(
            h,
            u128::from(h) + 1,
        )
        .expect("range")]);
        gate.set_active(mine.clone());
        let layer = FenceLayer::new(fence.clone()).with_shard(gate.clone());
        let mut svc = tower::Layer::layer(&layer, inner);
        let request = |method: &str, path: &str| {
            http::Request::builder()
                .method(method)
                .uri(path)
                .body(())
                .expect("request")
        };
        let err = svc
            .ready()
            .await
            .expect("ready")
            .call(request("POST", "/api/v1/namespaces/theirs/pods"))
            .await
            .expect_err("outside the shard");
        assert!(is_fenced(err.as_ref()), "{err}");
        assert!(
            err.to_string()
                .contains("not in this member's active shard")
        );
        // Reads of any namespace, and cluster-scoped writes, pass.
        let read = svc
            .ready()
            .await
            .expect("ready")
            .call(request("GET", "/api/v1/namespaces/theirs/pods"));
        let write = svc
            .ready()
            .await
            .expect("ready")
            .call(request("DELETE", "/api/v1/namespaces/mine/pods/p"));
        assert_eq!(gate.in_flight(), 1, "the write is in flight until answered");
        assert!(!gate.is_drained(&mine));
        let drained = tokio::spawn({
            let gate = gate.clone();
            let mine = mine.clone();
            async move { gate.drained(&mine).await }
        });
        tokio::task::yield_now().await;
        release.add_permits(2);
        let (read, write) = tokio::join!(read, write);
        assert!(read.is_ok() && write.is_ok());
        tokio::time::timeout(Duration::from_secs(5), drained)
            .await
            .expect("drained once answered")
            .expect("task");
        assert_eq!(gate.in_flight(), 0);
    }
}
