//! Every injected fault is counted in `/metrics`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kcm_testenv::TestCluster;
use kcm_testenv::faults::{FaultInjector, FaultSpec};
use kube::api::{Api, PostParams};

#[tokio::test]
async fn injected_faults_appear_in_metrics() {
    let spec = FaultSpec::parse("error500=1@create:namespaces").expect("spec");
    let cluster = TestCluster::builder()
        .faults(Arc::new(FaultInjector::new(spec, 1)))
        .start()
        .await
        .expect("test cluster");

    let api: Api<Namespace> = Api::all(cluster.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("x".into());
    let err = api
        .create(&PostParams::default(), &ns)
        .await
        .expect_err("500 injected");
    assert!(
        err.to_string().contains("500") || err.to_string().contains("InternalError"),
        "{err}"
    );

    let req = http::Request::get("/metrics")
        .body(Vec::new())
        .expect("request");
    let text = cluster.client().request_text(req).await.expect("metrics");
    let line = text
        .lines()
        .find(|l| l.starts_with("testenv_faults_injected_total{kind=\"error500\"}"))
        .unwrap_or_else(|| panic!("fault counter missing from /metrics:\n{text}"));
    let count: u64 = line
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("count");
    assert!(count >= 1, "{line}");

    cluster.shutdown().await;
}
