//! The fence at the wire over real HTTP against the embedded test cluster: a write that passed
//! the [`FenceLayer`]'s check while the fence was open, and whose connection was made only after
//! it closed (as when the process is stopped between the two), never reaches the server; the
//! caller gets the same [`Fenced`](kcm_leaderelection::Fenced) refusal as from the layer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use k8s_openapi::api::coordination::v1::Lease;
use kcm_leaderelection::{FenceLayer, FencedConnector, WriteFence, is_fenced};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, PostParams};
use kube::client::ConfigExt;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// A TCP connector that connects only once a permit is released: holds a request between the
/// fence layer's check and its first byte.
#[derive(Clone)]
struct Gated {
    inner: HttpConnector,
    gate: Arc<Semaphore>,
}

impl tower::Service<http::Uri> for Gated {
    type Response = <HttpConnector as tower::Service<http::Uri>>::Response;
    type Error = <HttpConnector as tower::Service<http::Uri>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<http::Uri>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let mut inner = self.inner.clone();
        let gate = self.gate.clone();
        Box::pin(async move {
            if let Ok(permit) = gate.acquire().await {
                permit.forget();
            }
            tower::Service::call(&mut inner, uri).await
        })
    }
}

fn lease(name: &str) -> Lease {
    Lease {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn a_write_whose_bytes_would_leave_after_the_fence_closed_is_not_sent() {
    let env = TestEnv::start(TestEnvConfig::default())
        .await
        .expect("testenv");
    let config = kube::Config::new(env.url().parse().expect("url"));
    let fence = WriteFence::new("default/wire");
    let gate = Arc::new(Semaphore::new(0));
    let connector = FencedConnector::new(
        Gated {
            inner: HttpConnector::new(),
            gate: gate.clone(),
        },
        fence.clone(),
    );
    let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build::<_, kube::client::Body>(connector);
    let service = tower::ServiceBuilder::new()
        .layer(FenceLayer::new(fence.clone()))
        .layer(config.base_uri_layer())
        .service(hyper);
    let client = kube::Client::new(service, "default");
    let fenced: Api<Lease> = Api::namespaced(client, "default");
    let plain: Api<Lease> = Api::namespaced(env.client(), "default");

    // Open: the layer lets the create through; it waits for its connection.
    fence.open_until(Instant::now() + Duration::from_secs(60));
    let late = tokio::spawn({
        let fenced = fenced.clone();
        async move { fenced.create(&PostParams::default(), &lease("late")).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!late.is_finished(), "the create waits for its connection");
    // The lease may have passed on (the process was stopped): the fence closes, then the
    // connection is made.
    fence.close();
    gate.add_permits(1);
    let refused = late
        .await
        .expect("task")
        .expect_err("the fence closed before the first byte");
    assert!(is_fenced(&refused), "{refused}");
    assert!(
        refused.to_string().contains("write fenced"),
        "the refusal reads like the layer's: {refused}"
    );
    assert!(
        plain.get_opt("late").await.expect("get").is_none(),
        "the server never received the create"
    );

    // Open again: the same client writes (a new connection).
    fence.open_until(Instant::now() + Duration::from_secs(60));
    gate.add_permits(8);
    fenced
        .create(&PostParams::default(), &lease("on-time"))
        .await
        .expect("an open fence lets the bytes leave");
    assert!(plain.get_opt("on-time").await.expect("get").is_some());
}
