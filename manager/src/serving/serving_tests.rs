//! kcm's HTTPS endpoints against a fake API server answering TokenReviews and
//! SubjectAccessReviews: health is open to all, `/metrics` needs a user the API server allows
//! (401 anonymous or with an unknown token, 403 when not allowed), by bearer token or by a
//! client certificate of `--client-ca-file`.

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_util::sync::CancellationToken;

use super::debug::Debugging;
use super::{Endpoints, start};
use crate::client::ClientFactory;
use crate::logging::{VModule, Verbosity};
use crate::metrics::Metrics;
use crate::test_support::fake_apiserver::{FakeApiServer, Seen, status};
use crate::test_support::https::{get, request};
use crate::{Manager, NoFlags};

fn answer(seen: &Seen) -> (u16, serde_json::Value) {
    match seen.path.as_str() {
        "/apis/authentication.k8s.io/v1/tokenreviews" => {
            let token = seen.body["spec"]["token"].as_str().unwrap_or_default();
            let user = match token {
                "alice-token" => Some("alice"),
                "bob-token" => Some("bob"),
                "erin-token" => Some("erin"),
                _ => None,
            };
            let status = match user {
                Some(name) => serde_json::json!({
                    "authenticated": true,
                    "user": {"username": name, "groups": ["system:authenticated"]},
                }),
                None => serde_json::json!({"authenticated": false}),
            };
            (
                201,
                serde_json::json!({
                    "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                    "spec": seen.body["spec"].clone(), "status": status,
                }),
            )
        }
        "/apis/authorization.k8s.io/v1/subjectaccessreviews" => {
            let spec = &seen.body["spec"];
            let user = spec["user"].as_str().unwrap_or_default();
            let path = spec["nonResourceAttributes"]["path"]
                .as_str()
                .unwrap_or_default();
            let verb = spec["nonResourceAttributes"]["verb"]
                .as_str()
                .unwrap_or_default();
            let allowed = match user {
                "alice" | "carol" | "dave" => path == "/metrics" && verb == "get",
                // May debug: profiles and the verbosity.
                "erin" => path.starts_with("/debug/") && matches!(verb, "get" | "put"),
                _ => false,
            };
            (
                201,
                serde_json::json!({
                    "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                    "spec": spec.clone(), "status": {"allowed": allowed},
                }),
            )
        }
        _ => status(404, "NotFound"),
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A CA written to `dir/<file>`, and a client certificate it signed for `cn` in `org`.
fn client_ca(
    dir: &std::path::Path,
    file: &str,
    cn: &str,
    org: &str,
) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let mut ca_params = rcgen::CertificateParams::new(vec![]).expect("params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("{file}-ca"));
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let ca_cert = ca_params.self_signed(&ca_key).expect("ca");
    std::fs::write(dir.join(file), ca_cert.pem()).expect("write ca");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let mut params = rcgen::CertificateParams::new(vec![]).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, org);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &issuer).expect("client cert");
    let key = PrivateKeyDer::try_from(key.serialize_der()).expect("key der");
    (vec![cert.der().clone()], key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_endpoints_authenticate_and_authorize_through_the_api_server() {
    let fake = FakeApiServer::start(Arc::new(answer)).await;
    let dir = std::env::temp_dir().join(format!("kcm-serving-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let carol = client_ca(&dir, "ca.crt", "carol", "ops");
    let proxy = client_ca(&dir, "front-proxy-ca.crt", "front-proxy-client", "");
    // Signed by the same CA as the front proxy, but not an allowed name.
    let other_proxy = client_ca(&dir, "other-ca.crt", "someone-else", "");
    let port = free_port();
    let args = [
        "kcm".to_string(),
        "--bind-address=127.0.0.1".into(),
        format!("--secure-port={port}"),
        format!("--client-ca-file={}", dir.join("ca.crt").display()),
        format!(
            "--requestheader-client-ca-file={}",
            dir.join("front-proxy-ca.crt").display()
        ),
        "--requestheader-allowed-names=front-proxy-client".into(),
    ];
    let (parsed, NoFlags {}) = Manager::new("kcm").parse_args(args).expect("flags");
    let options = parsed.options;
    let clients = ClientFactory::new(
        kube::Config::new(fake.url().parse().expect("url")),
        20.0,
        30,
        Metrics::new(),
    )
    .expect("clients");
    let endpoints = Endpoints::new();
    endpoints
        .registry()
        .write()
        .register_collector(Box::new(crate::process_metrics::ProcessMetrics));
    let verbosity = Arc::new(Verbosity::new(0, VModule::default()));
    endpoints.enable_debugging(Debugging::new(Some(verbosity.clone())));
    let stop = CancellationToken::new();
    let bound = start(
        &options.serving,
        endpoints,
        &clients,
        (20.0, 30),
        stop.clone(),
    )
    .await
    .expect("serving")
    .expect("a port");
    assert_eq!(bound.port(), port);

    let bearer = |t: &'static str| vec![("authorization", format!("Bearer {t}"))];
    type Case<'a> = (&'a str, Vec<(&'a str, String)>, u16);
    let cases: &[Case] = &[
        ("/healthz", vec![], 200),
        ("/readyz", vec![], 200),
        ("/livez", vec![], 200),
        ("/metrics", vec![], 401),
        ("/metrics", bearer("nobody-token"), 401),
        ("/metrics", bearer("bob-token"), 403),
        ("/metrics", bearer("alice-token"), 200),
        // Only the listed paths are always allowed; per-check paths need permission.
        ("/healthz/ping", vec![], 401),
        ("/healthz/ping", bearer("alice-token"), 403),
    ];
    for (path, headers, want) in cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (got, response) = get(port, path, &headers, None).await;
        assert_eq!(got, *want, "{path} {headers:?}\n{response}");
    }

    // The debugging endpoints (--profiling) need permission for their path and verb.
    let put_v = |token: Option<&'static str>, body: &'static str| {
        let headers: Vec<(&str, String)> = token
            .map(|t| vec![("authorization", format!("Bearer {t}"))])
            .unwrap_or_default();
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            request(port, "PUT", "/debug/flags/v", &headers, body, None).await
        }
    };
    assert_eq!(put_v(None, "4").await.0, 401);
    assert_eq!(put_v(Some("alice-token"), "4").await.0, 403);
    assert_eq!(verbosity.global(), 0, "a refused request changes nothing");
    let (code, response) = put_v(Some("erin-token"), "4").await;
    assert_eq!(code, 200, "{response}");
    assert!(
        response.ends_with("successfully set klog.logging.verbosity to 4"),
        "{response}"
    );
    assert_eq!(verbosity.global(), 4);
    let (code, response) = put_v(Some("erin-token"), "four").await;
    assert_eq!(code, 400, "{response}");
    let erin = [("authorization", "Bearer erin-token")];
    let (code, response) = get(port, "/debug/pprof/", &erin, None).await;
    assert_eq!(code, 200, "{response}");
    assert!(response.contains("href='profile'"), "{response}");
    let (code, response) = get(port, "/debug/pprof", &erin, None).await;
    assert_eq!(code, 302, "{response}");
    assert!(response.contains("location: /debug/pprof/"), "{response}");
    let (code, _) = get(port, "/debug/pprof/heap", &erin, None).await;
    assert_eq!(code, 404);
    let (code, _) = get(port, "/debug/pprof/", &[], None).await;
    assert_eq!(code, 401);
    let (code, response) = get(
        port,
        "/metrics",
        &[("authorization", "Bearer alice-token")],
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert!(
        response.contains("content-type: text/plain; version=0.0.4"),
        "{response}"
    );
    assert!(
        response.contains("\nprocess_cpu_seconds_total "),
        "{response}"
    );
    assert!(
        response.contains("\nprocess_start_time_seconds "),
        "{response}"
    );

    // A client certificate of --client-ca-file names the user and groups.
    let (code, response) = get(port, "/metrics", &[], Some(carol)).await;
    assert_eq!(code, 200, "{response}");
    let reviews: Vec<Seen> = fake
        .requests()
        .into_iter()
        .filter(|s| s.path.ends_with("subjectaccessreviews"))
        .collect();
    let last = reviews.last().expect("a review");
    assert_eq!(last.body["spec"]["user"], "carol");
    assert_eq!(last.body["spec"]["groups"], serde_json::json!(["ops"]));
    assert!(
        last.user_agent.ends_with("/authorization"),
        "{}",
        last.user_agent
    );

    // A front-proxy certificate of --requestheader-client-ca-file: the headers name the user.
    let remote = [("x-remote-user", "dave"), ("x-remote-group", "team")];
    let (code, response) = get(port, "/metrics", &remote, Some(proxy)).await;
    assert_eq!(code, 200, "{response}");
    let reviews: Vec<Seen> = fake
        .requests()
        .into_iter()
        .filter(|s| s.path.ends_with("subjectaccessreviews"))
        .collect();
    let last = reviews.last().expect("a review");
    assert_eq!(last.body["spec"]["user"], "dave");
    assert_eq!(last.body["spec"]["groups"], serde_json::json!(["team"]));
    // A certificate no configured CA signed is not trusted: the handshake fails.
    let (code, _) = get(port, "/metrics", &remote, Some(other_proxy)).await;
    assert_ne!(code, 200);

    // Answers are cached: asking again does not review the token again.
    let token_reviews = |fake: &FakeApiServer| {
        fake.requests()
            .iter()
            .filter(|s| s.path.ends_with("tokenreviews"))
            .count()
    };
    let before = token_reviews(&fake);
    let (code, _) = get(
        port,
        "/metrics",
        &[("authorization", "Bearer alice-token")],
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(token_reviews(&fake), before);
    stop.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_cas_missing_from_the_flags_come_from_the_cluster() {
    let dir = std::env::temp_dir().join(format!("kcm-serving-lookup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let carol = client_ca(&dir, "ca.crt", "carol", "ops");
    let ca_pem = std::fs::read_to_string(dir.join("ca.crt")).expect("ca");
    let configmap = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
        "data": {"client-ca-file": ca_pem},
    });
    let fake = FakeApiServer::start(Arc::new(move |seen: &Seen| {
        if seen.path
            == "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
        {
            (200, configmap.clone())
        } else {
            answer(seen)
        }
    }))
    .await;
    let forbidden = FakeApiServer::start(Arc::new(|_: &Seen| status(403, "Forbidden"))).await;
    let clients_of = |fake: &FakeApiServer| {
        let config = kube::Config::new(fake.url().parse().expect("url"));
        ClientFactory::new(config, 20.0, 30, Metrics::new()).expect("clients")
    };
    let options = |port: u16, extra: &[&str]| {
        let mut args = vec![
            "kcm".to_string(),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={port}"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        Manager::new("kcm")
            .parse_args::<NoFlags, _, _>(args)
            .expect("flags")
            .0
            .options
    };
    let stop = CancellationToken::new();

    let port = free_port();
    start(
        &options(port, &[]).serving,
        Endpoints::new(),
        &clients_of(&fake),
        (20.0, 30),
        stop.clone(),
    )
    .await
    .expect("serving")
    .expect("a port");
    let (code, response) = get(port, "/metrics", &[], Some(carol)).await;
    assert_eq!(code, 200, "{response}");

    // A lookup the API server refuses stops kcm, unless tolerated.
    let refused = start(
        &options(free_port(), &[]).serving,
        Endpoints::new(),
        &clients_of(&forbidden),
        (20.0, 30),
        stop.clone(),
    )
    .await;
    let error = refused.expect_err("lookup refused");
    assert!(
        crate::error_chain::display(&error).contains("extension-apiserver-authentication"),
        "{error}"
    );
    for extra in [
        "--authentication-tolerate-lookup-failure",
        "--authentication-skip-lookup",
    ] {
        let started = start(
            &options(free_port(), &[extra]).serving,
            Endpoints::new(),
            &clients_of(&forbidden),
            (20.0, 30),
            stop.clone(),
        )
        .await;
        assert!(matches!(started, Ok(Some(_))), "{extra}: {started:?}");
    }
    stop.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}
