//! Where kcm's client configuration comes from, resolved as kube-controller-manager does
//! (`clientcmd.BuildConfigFromFlags`): `--kubeconfig` (its current context; `--master`
//! overrides the server), else `--master` alone (no credentials), else the in-cluster service
//! account. Unlike kubectl, `KUBECONFIG` and `~/.kube/config` are not consulted.

use std::path::Path;

use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig};

use super::ClientError;

/// A loaded configuration and a description of where it came from, for the start-up log.
#[derive(Clone)]
pub struct LoadedConfig {
    /// The configuration.
    pub config: kube::Config,
    /// e.g. `kubeconfig /etc/kubernetes/controller-manager.conf (context
    /// system:kube-controller-manager@kubernetes)`, `--master`, `in-cluster`.
    pub source: String,
}

impl std::fmt::Debug for LoadedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedConfig")
            .field("server", &self.config.cluster_url.to_string())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Loads the client configuration (see the module documentation).
pub async fn load_config(
    kubeconfig: Option<&Path>,
    master: Option<&str>,
) -> Result<LoadedConfig, ClientError> {
    let (mut config, source) = match (kubeconfig, master) {
        (Some(path), _) => {
            let kubeconfig_error = |source| ClientError::Kubeconfig {
                path: path.display().to_string(),
                source,
            };
            let file = Kubeconfig::read_from(path).map_err(kubeconfig_error)?;
            let context = file.current_context.clone().unwrap_or_default();
            let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(kubeconfig_error)?;
            let source = format!("kubeconfig {} (context {context:?})", path.display());
            (config, source)
        }
        (None, Some(master)) => {
            let url = parse_master(master)?;
            (
                kube::Config::new(url),
                "--master, no credentials".to_string(),
            )
        }
        (None, None) => {
            let config = kube::Config::incluster().map_err(ClientError::InCluster)?;
            (config, "in-cluster service account".to_string())
        }
    };
    if let (Some(master), Some(_)) = (master, kubeconfig) {
        config.cluster_url = parse_master(master)?;
    }
    Ok(LoadedConfig { config, source })
}

fn parse_master(master: &str) -> Result<http::Uri, ClientError> {
    master
        .parse()
        .map_err(|e: http::uri::InvalidUri| ClientError::Master(master.into(), e.to_string()))
}

/// What kind of credentials a configuration carries (never the secret itself).
pub fn credentials(auth: &AuthInfo) -> &'static str {
    if auth.client_certificate.is_some() || auth.client_certificate_data.is_some() {
        "client certificate"
    } else if auth.token.is_some() {
        "bearer token"
    } else if auth.token_file.is_some() {
        "bearer token file"
    } else if auth.exec.is_some() {
        "exec plugin"
    } else if auth.auth_provider.is_some() {
        "auth provider"
    } else if auth.username.is_some() {
        "basic auth"
    } else {
        "none (anonymous)"
    }
}

/// Logs who the API server says kcm is (a SelfSubjectReview); if the server cannot answer
/// (older than 1.28, or not allowed), logs that instead. Never fails.
pub async fn log_identity(client: &kube::Client) {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    let review = SelfSubjectReview::default();
    let result: Result<SelfSubjectReview, kube::Error> = async {
        let body = serde_json::to_vec(&review).map_err(kube::Error::SerdeError)?;
        let request = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body)
            .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e)))?;
        client.request(request).await
    }
    .await;
    match result {
        Ok(review) => {
            let user = review.status.and_then(|s| s.user_info).unwrap_or_default();
            tracing::info!(
                user = user.username.unwrap_or_default(),
                groups = user.groups.unwrap_or_default().join(","),
                "authenticated to the API server"
            );
        }
        Err(e) => tracing::info!(
            error = %e,
            "cannot ask the API server who kcm is (SelfSubjectReview)"
        ),
    }
}
