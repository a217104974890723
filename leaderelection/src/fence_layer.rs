//! A tower layer that puts every write of a `kube::Client` behind a [`WriteFence`].
//!
//! Requests with a writing method (POST, PUT, PATCH, DELETE) pass [`WriteFence::check`] when
//! the layer's service is called; reads and watches pass untouched. A refused request is
//! answered with a [`Fenced`](crate::Fenced) error (kube-client returns it as
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

use crate::fence::WriteFence;

/// Wraps a client's service so that writes pass the fence (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct FenceLayer {
    fence: WriteFence,
}

impl FenceLayer {
    /// A layer checking `fence` before every write.
    pub fn new(fence: WriteFence) -> Self {
        FenceLayer { fence }
    }
}

impl<S> tower::Layer<S> for FenceLayer {
    type Service = FencedService<S>;
    fn layer(&self, inner: S) -> FencedService<S> {
        FencedService {
            inner,
            fence: self.fence.clone(),
        }
    }
}

/// The service made by [`FenceLayer`].
#[derive(Clone, Debug)]
pub struct FencedService<S> {
    inner: S,
    fence: WriteFence,
}

/// Whether a request with `method` changes something on the server.
pub fn is_write(method: &Method) -> bool {
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
        if is_write(request.method())
            && let Err(refused) = self.fence.check()
        {
            tracing::debug!(
                method = %request.method(),
                path = %request.uri().path(),
                error = %refused,
                "write refused by the fence"
            );
            return Box::pin(std::future::ready(Err(Box::new(refused) as BoxError)));
        }
        let response = self.inner.call(request);
        Box::pin(async move { response.await.map_err(Into::into) })
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
}
