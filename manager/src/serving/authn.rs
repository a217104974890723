//! Delegated authentication, as kube-controller-manager's, tried in upstream's order:
//!
//! 1. a client certificate signed by `--requestheader-client-ca-file` (with a common name in
//!    `--requestheader-allowed-names`, if given): the user is named by the request headers
//!    (`X-Remote-User`, `X-Remote-Group`, `X-Remote-Uid`, `X-Remote-Extra-*` by default);
//! 2. a client certificate signed by `--client-ca-file`: the user is the certificate's common
//!    name, its groups the organizations;
//! 3. a bearer token, checked with a TokenReview at the API server (answers cached for
//!    `--authentication-token-webhook-cache-ttl`).
//!
//! A request none of these authenticates is anonymous.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};

use super::review::{UserInfo, post};
use super::ttl_cache::TtlCache;

/// Which CA verified the client certificate of a connection, and the certificate's names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientCert {
    /// Signed by `--requestheader-client-ca-file`; the certificate's common name.
    RequestHeader(String),
    /// Signed by `--client-ca-file`: common name and organizations.
    ClientCa {
        /// Subject common name.
        common_name: String,
        /// Subject organizations.
        organizations: Vec<String>,
    },
}

/// The request-header flags.
#[derive(Clone, Debug, Default)]
pub struct RequestHeaderConfig {
    /// `--requestheader-allowed-names`; empty allows any certificate of the CA.
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`
    pub username_headers: Vec<String>,
    /// `--requestheader-uid-headers`
    pub uid_headers: Vec<String>,
    /// `--requestheader-group-headers`
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`
    pub extra_prefixes: Vec<String>,
}

/// Why a request could not be authenticated.
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    /// The TokenReview could not be made.
    #[error("token review")]
    TokenReview(#[source] kube::Error),
}

/// Authenticates requests (see the module documentation).
pub struct Authenticator {
    client: kube::Client,
    request_header: RequestHeaderConfig,
    token_ttl: Duration,
    cache: TtlCache<String, Option<UserInfo>>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("request_header", &self.request_header)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An authenticator reviewing tokens through `client`.
    pub fn new(
        client: kube::Client,
        request_header: RequestHeaderConfig,
        token_ttl: Duration,
    ) -> Self {
        Authenticator {
            client,
            request_header,
            token_ttl,
            cache: TtlCache::default(),
        }
    }

    /// The user of a request with `headers` on a connection with `cert`; `None` when
    /// anonymous or the token is not accepted.
    pub async fn authenticate(
        &self,
        cert: Option<&ClientCert>,
        headers: &http::HeaderMap,
    ) -> Result<Option<UserInfo>, AuthnError> {
        match cert {
            Some(ClientCert::RequestHeader(common_name)) => {
                let names = &self.request_header.allowed_names;
                if (names.is_empty() || names.contains(common_name))
                    && let Some(user) = from_request_headers(&self.request_header, headers)
                {
                    return Ok(Some(user));
                }
            }
            Some(ClientCert::ClientCa {
                common_name,
                organizations,
            }) => {
                return Ok(Some(UserInfo {
                    username: common_name.clone(),
                    groups: organizations.clone(),
                    ..Default::default()
                }));
            }
            None => {}
        }
        let Some(token) = bearer_token(headers) else {
            return Ok(None);
        };
        if let Some(answer) = self.cache.get(&token) {
            return Ok(answer);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.clone(),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer: TokenReview = post(
            &self.client,
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &review,
        )
        .await
        .map_err(AuthnError::TokenReview)?;
        let status = answer.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => Some(UserInfo {
                username: user.username.unwrap_or_default(),
                uid: user.uid.unwrap_or_default(),
                groups: user.groups.unwrap_or_default(),
                extra: user.extra.unwrap_or_default().into_iter().collect(),
            }),
            _ => None,
        };
        self.cache.insert(token, user.clone(), self.token_ttl);
        Ok(user)
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer_token(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

/// The user named by the request headers; `None` without a user name.
pub fn from_request_headers(
    config: &RequestHeaderConfig,
    headers: &http::HeaderMap,
) -> Option<UserInfo> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let first = |names: &[String]| names.iter().flat_map(|n| values(n)).find(|v| !v.is_empty());
    let username = first(&config.username_headers)?;
    let uid = first(&config.uid_headers).unwrap_or_default();
    let groups = config
        .group_headers
        .iter()
        .flat_map(|n| values(n))
        .collect();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        let lower = name.as_str().to_ascii_lowercase();
        for prefix in &config.extra_prefixes {
            let prefix = prefix.to_ascii_lowercase();
            if let Some(key) = lower.strip_prefix(&prefix)
                && let Ok(value) = value.to_str()
            {
                extra
                    .entry(unescape(key))
                    .or_default()
                    .push(value.to_string());
            }
        }
    }
    Some(UserInfo {
        username,
        uid,
        groups,
        extra,
    })
}

/// Extra keys are percent-encoded in header names, as upstream.
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&key[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        map
    }

    #[test]
    fn bearer_tokens_are_read_from_the_authorization_header() {
        let cases = [
            ("Bearer abc", Some("abc")),
            ("bearer  abc ", Some("abc")),
            ("Basic abc", None),
            ("Bearer", None),
        ];
        for (value, want) in cases {
            let got = bearer_token(&headers(&[("authorization", value)]));
            assert_eq!(got.as_deref(), want, "{value}");
        }
        assert_eq!(bearer_token(&http::HeaderMap::new()), None);
    }

    #[test]
    fn request_headers_name_the_user() {
        let config = RequestHeaderConfig {
            username_headers: vec!["x-remote-user".into()],
            group_headers: vec!["x-remote-group".into()],
            extra_prefixes: vec!["x-remote-extra-".into()],
            ..Default::default()
        };
        let user = from_request_headers(
            &config,
            &headers(&[
                ("x-remote-user", "alice"),
                ("x-remote-group", "ops"),
                ("x-remote-group", "dev"),
                ("x-remote-extra-scopes%2fa", "x"),
            ]),
        )
        .expect("user");
        assert_eq!(user.username, "alice");
        assert_eq!(user.groups, ["ops", "dev"]);
        assert_eq!(user.extra.get("scopes/a"), Some(&vec!["x".to_string()]));
        assert_eq!(from_request_headers(&config, &headers(&[])), None);
    }

    #[tokio::test]
    async fn front_proxy_names_must_be_allowed_and_client_ca_certs_name_the_user() {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let request_header = RequestHeaderConfig {
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["x-remote-user".into()],
            ..Default::default()
        };
        let authn = Authenticator::new(client, request_header, Duration::from_secs(10));
        let remote = headers(&[("x-remote-user", "dave")]);
        let allowed = ClientCert::RequestHeader("front-proxy-client".into());
        let other = ClientCert::RequestHeader("someone-else".into());
        let user = authn
            .authenticate(Some(&allowed), &remote)
            .await
            .expect("no error");
        assert_eq!(user.map(|u| u.username).as_deref(), Some("dave"));
        // Not an allowed name, and no token to fall back to: anonymous, without asking anyone.
        let user = authn
            .authenticate(Some(&other), &remote)
            .await
            .expect("no error");
        assert_eq!(user, None);
        let carol = ClientCert::ClientCa {
            common_name: "carol".into(),
            organizations: vec!["ops".into()],
        };
        let user = authn
            .authenticate(Some(&carol), &remote)
            .await
            .expect("no error");
        assert_eq!(
            user,
            Some(UserInfo {
                username: "carol".into(),
                groups: vec!["ops".into()],
                ..Default::default()
            })
        );
    }
}
