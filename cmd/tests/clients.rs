//! kcm's API clients against a fake API server: a User-Agent per client as upstream, and
//! `--use-service-account-credentials` (service account created, TokenRequest, bearer token).

mod common;

use std::sync::Arc;

use common::fake_apiserver::{FakeApiServer, Seen, status};
use k8s_openapi::api::apps::v1::Deployment;
use kcm::client::ClientFactory;
use kcm::metrics::Metrics;
use kube::api::Api;
use tokio_util::sync::CancellationToken;

fn answer(seen: &Seen) -> (u16, serde_json::Value) {
    let sa_path = "/api/v1/namespaces/kube-system/serviceaccounts";
    match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", p) if p.starts_with(sa_path) => status(404, "NotFound"),
        ("POST", p) if p == sa_path => (201, seen.body.clone()),
        ("POST", p) if p.ends_with("/token") => {
            let name = p.split('/').nth(6).unwrap_or_default();
            let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
            (
                201,
                serde_json::json!({
                    "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"audiences": [], "expirationSeconds": 3600},
                    "status": {"token": format!("tok-{name}"), "expirationTimestamp": expires.to_string()},
                }),
            )
        }
        _ => status(404, "NotFound"),
    }
}

async fn get_deployment(client: kube::Client) {
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let got = api.get_opt("web").await.expect("get");
    assert!(got.is_none());
}

#[tokio::test]
async fn each_client_names_itself_in_the_user_agent() {
    let fake = FakeApiServer::start(Arc::new(answer)).await;
    let config = kube::Config::new(fake.url().parse().expect("url"));
    let clients = ClientFactory::new(config, 20.0, 30, Metrics::new()).expect("factory");
    get_deployment(clients.client("shared-informers").expect("client")).await;
    get_deployment(
        clients
            .controller_client("deployment-controller")
            .await
            .expect("client"),
    )
    .await;
    let seen = fake.requests();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (request, name) in seen
        .iter()
        .zip(["shared-informers", "deployment-controller"])
    {
        let ua = &request.user_agent;
        // The program name is the test binary's here, `kcm` in production.
        assert!(ua.contains(&format!("/v{version} (")), "{ua}");
        assert!(
            ua.ends_with(&format!(") kubernetes/unknown/{name}")),
            "{ua}"
        );
        assert_eq!(request.authorization, "");
    }
}

#[tokio::test]
async fn service_account_credentials_use_a_token_per_controller() {
    let fake = FakeApiServer::start(Arc::new(answer)).await;
    let mut config = kube::Config::new(fake.url().parse().expect("url"));
    config.auth_info.token = Some("root-token".to_string().into());
    let mut clients = ClientFactory::new(config, 20.0, 30, Metrics::new()).expect("factory");
    let cancel = CancellationToken::new();
    clients
        .use_service_account_credentials(cancel.clone())
        .expect("service accounts");
    let client = clients
        .controller_client("replicaset-controller")
        .await
        .expect("controller client");
    get_deployment(client).await;
    cancel.cancel();

    let seen = fake.requests();
    let steps: Vec<(String, String, String)> = seen
        .iter()
        .map(|s| (s.method.clone(), s.path.clone(), s.authorization.clone()))
        .collect();
    let sa = "/api/v1/namespaces/kube-system/serviceaccounts";
    let want = [
        (
            "GET",
            format!("{sa}/replicaset-controller"),
            "Bearer root-token",
        ),
        ("POST", sa.to_string(), "Bearer root-token"),
        (
            "POST",
            format!("{sa}/replicaset-controller/token"),
            "Bearer root-token",
        ),
        (
            "GET",
            "/apis/apps/v1/namespaces/default/deployments/web".to_string(),
            "Bearer tok-replicaset-controller",
        ),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(m, p, a)| (m.to_string(), p.clone(), a.to_string()))
        .collect();
    assert_eq!(steps, want);
    assert_eq!(seen[1].body["metadata"]["name"], "replicaset-controller");
    assert_eq!(seen[2].body["spec"]["expirationSeconds"], 3600);
    assert!(
        seen[0].user_agent.ends_with("/kcm"),
        "{}",
        seen[0].user_agent
    );
    assert!(
        seen[3]
            .user_agent
            .ends_with("/system:serviceaccount:kube-system:replicaset-controller"),
        "{}",
        seen[3].user_agent
    );
}
