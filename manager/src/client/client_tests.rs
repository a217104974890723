//! kcm's API clients against a fake API server: a User-Agent per client as upstream, and
//! `--use-service-account-credentials` (service account created, TokenRequest, bearer token).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use tokio_util::sync::CancellationToken;

use super::ClientFactory;
use crate::metrics::Metrics;
use crate::test_support::fake_apiserver::{FakeApiServer, Seen, status};

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

/// client-go's retries (`rest/with_retry.go`): a 429 or 5xx with `Retry-After` is sent again
/// after that many seconds, each attempt through the rate limiter and counted; without the header,
/// or for a write that broke its connection, the error goes back to the caller at once.
#[tokio::test]
async fn requests_are_retried_only_when_the_server_says_when() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let fake = FakeApiServer::start_with_headers(Arc::new(move |seen: &Seen| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let (code, body) = match seen.path.as_str() {
            // Twice "come back in 0 s", then the answer.
            "/apis/apps/v1/namespaces/default/deployments/retried" if n < 2 => {
                let (c, b) = status(503, "ServiceUnavailable");
                return (c, vec![("Retry-After", "0".to_string())], b);
            }
            "/apis/apps/v1/namespaces/default/deployments/throttled" => {
                status(429, "TooManyRequests")
            }
            _ => status(404, "NotFound"),
        };
        (code, Vec::new(), body)
    }))
    .await;
    let config = kube::Config::new(fake.url().parse().expect("url"));
    let metrics = Metrics::new();
    let clients = ClientFactory::new(config, 20.0, 30, metrics.clone()).expect("factory");
    let api: Api<Deployment> = Api::namespaced(clients.client("test").expect("client"), "default");

    assert!(api.get_opt("retried").await.expect("retried get").is_none());
    assert_eq!(calls.load(Ordering::SeqCst), 3, "two retries, then the 404");

    calls.store(0, Ordering::SeqCst);
    let err = api
        .get("throttled")
        .await
        .expect_err("429 without Retry-After");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 429),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "no Retry-After: no retry");

    let mut registry = prometheus_client::registry::Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
    let host = fake.addr.to_string();
    for line in [
        format!("rest_client_requests_total{{code=\"503\",host=\"{host}\",method=\"GET\"}} 2\n"),
        format!(
            "rest_client_request_retries_total{{code=\"503\",host=\"{host}\",verb=\"GET\"}} 1\n"
        ),
        format!(
            "rest_client_request_retries_total{{code=\"404\",host=\"{host}\",verb=\"GET\"}} 1\n"
        ),
        format!("rest_client_requests_total{{code=\"429\",host=\"{host}\",method=\"GET\"}} 1\n"),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
}
