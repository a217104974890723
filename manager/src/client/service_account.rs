//! `--use-service-account-credentials`: each controller talks to the API server as its own
//! service account in kube-system (`system:serviceaccount:kube-system:deployment-controller`),
//! as kube-controller-manager's dynamic client builder does. The service account is created if
//! missing; tokens come from the TokenRequest API, last an hour and are renewed when a fifth
//! of their lifetime is left.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::HeaderValue;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

/// The namespace of the controllers' service accounts.
pub const NAMESPACE: &str = "kube-system";
/// Lifetime requested for each token, as upstream.
const EXPIRATION_SECONDS: i64 = 3600;
/// Renew when this percentage of a token's lifetime is left, as upstream.
const LEEWAY_PERCENT: u32 = 20;
/// Wait before retrying a failed renewal.
const RETRY: Duration = Duration::from_secs(10);

/// Why a service account's credentials could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Reading or creating the service account failed.
    #[error("service account {NAMESPACE}/{name}")]
    ServiceAccount {
        /// The service account.
        name: String,
        /// What the API server said.
        #[source]
        source: kube::Error,
    },
    /// The TokenRequest failed or answered without a token.
    #[error("token request for service account {NAMESPACE}/{name}")]
    Token {
        /// The service account.
        name: String,
        /// What went wrong.
        #[source]
        source: kube::Error,
    },
}

/// The service account `name` in kube-system, created if it does not exist.
pub async fn get_or_create(root: &kube::Client, name: &str) -> Result<(), TokenError> {
    let api: Api<ServiceAccount> = Api::namespaced(root.clone(), NAMESPACE);
    let err = |source| TokenError::ServiceAccount {
        name: name.to_string(),
        source,
    };
    if api.get_opt(name).await.map_err(err)?.is_some() {
        return Ok(());
    }
    let account = ServiceAccount {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(NAMESPACE.to_string()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &account).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(err(e)),
    }
}

/// A token of service account `name` and how long to use it before renewing.
async fn request_token(
    root: &kube::Client,
    name: &str,
) -> Result<(HeaderValue, Duration), TokenError> {
    let api: Api<ServiceAccount> = Api::namespaced(root.clone(), NAMESPACE);
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(EXPIRATION_SECONDS),
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = |source| TokenError::Token {
        name: name.to_string(),
        source,
    };
    let answer = api
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .map_err(err)?;
    let status = answer.status.ok_or_else(|| {
        err(kube::Error::Service(
            "the TokenRequest answer has no status".into(),
        ))
    })?;
    let (Some(token), Some(expiration)) = (status.token, status.expiration_timestamp) else {
        return Err(err(kube::Error::Service(
            "the TokenRequest answer has no token or no expirationTimestamp".into(),
        )));
    };
    let header = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|e| err(kube::Error::Service(Box::new(e))))?;
    let lifetime = (expiration.0 - jiff::Timestamp::now())
        .total(jiff::Unit::Second)
        .unwrap_or(0.0)
        .max(0.0);
    let lifetime = Duration::from_secs_f64(lifetime);
    let renew_after = lifetime.mul_f64(f64::from(100 - LEEWAY_PERCENT) / 100.0);
    Ok((header, renew_after))
}

/// The current token of one service account, renewed in the background until `cancel` fires.
#[derive(Clone)]
pub struct TokenSource {
    header: Arc<RwLock<HeaderValue>>,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource").finish_non_exhaustive()
    }
}

impl TokenSource {
    /// Ensures the service account exists, gets a first token and starts renewing it.
    pub async fn start(
        root: kube::Client,
        name: &str,
        cancel: CancellationToken,
    ) -> Result<TokenSource, TokenError> {
        get_or_create(&root, name).await?;
        let (header, mut renew_after) = request_token(&root, name).await?;
        let source = TokenSource {
            header: Arc::new(RwLock::new(header)),
        };
        let shared = source.header.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(renew_after) => {}
                }
                match request_token(&root, &name).await {
                    Ok((header, next)) => {
                        *shared.write() = header;
                        renew_after = next;
                    }
                    Err(e) => {
                        tracing::warn!(error = %crate::error_chain::display(&e), "renewing a controller's service account token; retrying");
                        renew_after = RETRY;
                    }
                }
            }
        });
        Ok(source)
    }

    /// A layer that sets `Authorization` on every request to the current token.
    pub fn layer(&self) -> BearerLayer {
        BearerLayer {
            header: self.header.clone(),
        }
    }
}

/// A tower layer adding the current bearer token to each request.
#[derive(Clone)]
pub struct BearerLayer {
    header: Arc<RwLock<HeaderValue>>,
}

impl std::fmt::Debug for BearerLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerLayer").finish_non_exhaustive()
    }
}

impl<S> tower::Layer<S> for BearerLayer {
    type Service = Bearer<S>;
    fn layer(&self, inner: S) -> Bearer<S> {
        Bearer {
            inner,
            header: self.header.clone(),
        }
    }
}

/// The service made by [`BearerLayer`].
#[derive(Clone)]
pub struct Bearer<S> {
    inner: S,
    header: Arc<RwLock<HeaderValue>>,
}

impl<S> std::fmt::Debug for Bearer<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bearer").finish_non_exhaustive()
    }
}

impl<S, B> tower::Service<http::Request<B>> for Bearer<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let mut value = self.header.read().clone();
        value.set_sensitive(true);
        request
            .headers_mut()
            .insert(http::header::AUTHORIZATION, value);
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::{Service, ServiceExt};

    #[tokio::test]
    async fn bearer_layer_sets_the_current_token() {
        let header = Arc::new(RwLock::new(HeaderValue::from_static("Bearer one")));
        let layer = BearerLayer {
            header: header.clone(),
        };
        let inner = tower::service_fn(|r: http::Request<()>| async move {
            Ok::<_, std::convert::Infallible>(r.headers().get("authorization").cloned())
        });
        let mut svc = tower::Layer::layer(&layer, inner);
        let req = || http::Request::get("/api").body(()).expect("request");
        let got = svc.ready().await.expect("ready").call(req()).await;
        assert_eq!(got, Ok(Some(HeaderValue::from_static("Bearer one"))));
        *header.write() = HeaderValue::from_static("Bearer two");
        let got = svc.ready().await.expect("ready").call(req()).await;
        assert_eq!(got, Ok(Some(HeaderValue::from_static("Bearer two"))));
    }
}
