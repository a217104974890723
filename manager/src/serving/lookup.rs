//! The in-cluster authentication configuration: the ConfigMap
//! `kube-system/extension-apiserver-authentication` that kube-apiserver publishes, read when
//! `--client-ca-file` or `--requestheader-client-ca-file` is not given (unless
//! `--authentication-skip-lookup`), as kube-controller-manager does. kcm reads it once at start;
//! upstream also follows later changes.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;

/// Where kube-apiserver publishes its client authentication configuration.
pub const NAMESPACE: &str = "kube-system";
/// See [`NAMESPACE`].
pub const NAME: &str = "extension-apiserver-authentication";

/// What the ConfigMap holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InClusterAuthentication {
    /// PEM of the client CA (`client-ca-file`).
    pub client_ca: Option<String>,
    /// PEM of the front-proxy CA (`requestheader-client-ca-file`).
    pub request_header_ca: Option<String>,
    /// `requestheader-allowed-names`
    pub allowed_names: Vec<String>,
    /// `requestheader-username-headers`
    pub username_headers: Vec<String>,
    /// `requestheader-uid-headers`
    pub uid_headers: Vec<String>,
    /// `requestheader-group-headers`
    pub group_headers: Vec<String>,
    /// `requestheader-extra-headers-prefix`
    pub extra_prefixes: Vec<String>,
}

/// Reads the ConfigMap's data; a missing key reads as empty. The list keys hold JSON arrays.
pub fn parse(data: &std::collections::BTreeMap<String, String>) -> InClusterAuthentication {
    let text = |key: &str| data.get(key).filter(|v| !v.trim().is_empty()).cloned();
    let list = |key: &str| -> Vec<String> {
        data.get(key)
            .and_then(|v| serde_json::from_str(v).ok())
            .unwrap_or_default()
    };
    InClusterAuthentication {
        client_ca: text("client-ca-file"),
        request_header_ca: text("requestheader-client-ca-file"),
        allowed_names: list("requestheader-allowed-names"),
        username_headers: list("requestheader-username-headers"),
        uid_headers: list("requestheader-uid-headers"),
        group_headers: list("requestheader-group-headers"),
        extra_prefixes: list("requestheader-extra-headers-prefix"),
    }
}

/// Reads the ConfigMap; `None` when it does not exist.
pub async fn read(client: &kube::Client) -> Result<Option<InClusterAuthentication>, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let map = api.get_opt(NAME).await?;
    Ok(map.map(|m| parse(&m.data.unwrap_or_default())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configmap_data_parses_as_kube_apiserver_writes_it() {
        let data: std::collections::BTreeMap<String, String> = [
            ("client-ca-file", "-----BEGIN CERTIFICATE-----\n..."),
            (
                "requestheader-client-ca-file",
                "-----BEGIN CERTIFICATE-----\n,,,",
            ),
            ("requestheader-allowed-names", "[\"front-proxy-client\"]"),
            ("requestheader-username-headers", "[\"X-Remote-User\"]"),
            ("requestheader-group-headers", "[\"X-Remote-Group\"]"),
            (
                "requestheader-extra-headers-prefix",
                "[\"X-Remote-Extra-\"]",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let parsed = parse(&data);
        assert!(parsed.client_ca.is_some() && parsed.request_header_ca.is_some());
        assert_eq!(parsed.allowed_names, ["front-proxy-client"]);
        assert_eq!(parsed.username_headers, ["X-Remote-User"]);
        assert_eq!(parsed.extra_prefixes, ["X-Remote-Extra-"]);
        assert!(parsed.uid_headers.is_empty());
        assert_eq!(
            parse(&Default::default()),
            InClusterAuthentication::default()
        );
    }
}
