//! Fixtures shared by the reflector's integration tests: objects, lists and errors as a
//! lister-watcher hands them over, shards of named namespaces, and the test cluster.
#![allow(dead_code)]

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kcm_reflector::{BackoffConfig, ShardScope};
use kcm_testenv::TestCluster;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::core::{ObjectList, Status, TypeMeta};

/// A ConfigMap `ns/name` at resourceVersion `rv`.
pub fn cm(ns: &str, name: &str, rv: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// One page of a ConfigMap list at `rv`, with the continue token of the next page, if any.
pub fn page(
    rv: &str,
    continue_token: Option<&str>,
    items: Vec<ConfigMap>,
) -> ObjectList<ConfigMap> {
    ObjectList {
        types: TypeMeta {
            api_version: "v1".into(),
            kind: "ConfigMapList".into(),
        },
        metadata: ListMeta {
            resource_version: Some(rv.into()),
            continue_: continue_token.map(str::to_owned),
            ..ListMeta::default()
        },
        items,
    }
}

/// An API error as the server would answer it (`Status` with `code` and `reason`).
pub fn api_error(code: u16, reason: &str) -> kube::Error {
    kube::Error::Api(
        Status {
            code,
            reason: reason.into(),
            message: format!("{reason} (injected)"),
            ..Status::default()
        }
        .boxed(),
    )
}

/// A Lease `ns/name` without a spec.
pub fn lease(ns: &str, name: &str) -> Lease {
    Lease {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: None,
    }
}

/// `namespace/name` of a Lease.
pub fn key(o: &Lease) -> String {
    format!(
        "{}/{}",
        o.metadata.namespace.as_deref().unwrap_or_default(),
        o.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The resourceVersion of a Lease.
pub fn rv(o: &Lease) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

/// A shard of the namespaces `names`, whose selector names them (`only(a,b)`: kcm-testenv
/// ignores it; a scripted lister-watcher and the tests read it back from the requests).
pub fn only(names: &'static [&'static str]) -> ShardScope {
    ShardScope::new(
        format!("only({})", names.join(",")),
        move |m: &ObjectMeta| m.namespace.as_deref().is_some_and(|ns| names.contains(&ns)),
    )
}

/// Creates the namespaces `names`.
pub async fn create_namespaces(client: &kube::Client, names: &[&str]) {
    let api: Api<Namespace> = Api::all(client.clone());
    for ns in names {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some((*ns).into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        api.create(&PostParams::default(), &namespace)
            .await
            .expect("namespace");
    }
}

/// Retries 20 ms apart at first, never more than 100 ms.
pub fn fast_backoff() -> BackoffConfig {
    BackoffConfig {
        initial: Duration::from_millis(20),
        cap: Duration::from_millis(100),
        ..BackoffConfig::default()
    }
}

/// A test cluster of the API server alone, with the tests' logs (`RUST_LOG`).
pub async fn cluster() -> TestCluster {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts")
}
