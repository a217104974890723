//! Serving `/metrics`, `/healthz`, `/livez` and `/readyz` as kube-controller-manager does:
//! HTTPS on `--bind-address:--secure-port` ([`tls`]), delegated authentication ([`authn`])
//! and authorization ([`authz`]) through the API server (both post their reviews with
//! [`review`]), health checks and metrics ([`endpoints`]), and with `--profiling` the debugging
//! endpoints ([`debug`]). `--secure-port 0` serves nothing.

pub mod authn;
pub mod authz;
pub mod debug;
pub mod endpoints;
pub mod lookup;
pub mod review;
pub mod server;
pub mod tls;
pub mod ttl_cache;

#[cfg(test)]
mod serving_tests;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

pub use endpoints::{Endpoints, Probe};
pub use server::{Server, serve};

use crate::client::{ClientError, ClientFactory, load_config};
use crate::options::ServingOptions;

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServingError {
    /// TLS could not be set up.
    #[error("secure serving")]
    Tls(#[from] tls::TlsError),
    /// The client for TokenReviews or SubjectAccessReviews could not be built.
    #[error("delegated authentication/authorization client")]
    Client(#[from] ClientError),
    /// The in-cluster authentication configuration could not be read (and
    /// `--authentication-tolerate-lookup-failure` is off).
    #[error("reading configmap {}/{}", lookup::NAMESPACE, lookup::NAME)]
    Lookup(#[source] kube::Error),
    /// The port could not be bound.
    #[error("listening on {0}")]
    Bind(SocketAddr, #[source] std::io::Error),
}

/// The client for delegated checks: from `kubeconfig` if given, else the main one's
/// configuration, with User-Agent `.../<name>`.
async fn delegation_client(
    kubeconfig: Option<&std::path::Path>,
    clients: &ClientFactory,
    qps_burst: (f32, i32),
    name: &str,
) -> Result<kube::Client, ClientError> {
    match kubeconfig {
        Some(path) => {
            let loaded = load_config(Some(path), None).await?;
            ClientFactory::new(loaded.config, qps_burst.0, qps_burst.1, clients.metrics())?
                .client(name)
        }
        None => clients.client(name),
    }
}

/// Fills the CAs and request-header settings the flags left out from the ConfigMap.
fn apply_lookup(
    found: lookup::InClusterAuthentication,
    cas: &mut tls::ClientCas,
    request_header: &mut authn::RequestHeaderConfig,
) -> Result<(), tls::TlsError> {
    if cas.client_ca.is_none()
        && let Some(pem) = &found.client_ca
    {
        cas.client_ca = Some(tls::parse_certs(pem, "client-ca-file")?);
    }
    if cas.request_header.is_none()
        && let Some(pem) = &found.request_header_ca
    {
        cas.request_header = Some(tls::parse_certs(pem, "requestheader-client-ca-file")?);
        *request_header = authn::RequestHeaderConfig {
            allowed_names: found.allowed_names,
            username_headers: found.username_headers,
            uid_headers: found.uid_headers,
            group_headers: found.group_headers,
            extra_prefixes: found.extra_prefixes,
        };
    }
    Ok(())
}

/// Starts the HTTPS server for `endpoints` (unless `--secure-port` is 0); returns the bound
/// address. Client CAs the flags leave out are looked up in the cluster ([`lookup`]).
pub async fn start(
    options: &ServingOptions,
    endpoints: Endpoints,
    clients: &ClientFactory,
    qps_burst: (f32, i32),
    shutdown: CancellationToken,
) -> Result<Option<SocketAddr>, ServingError> {
    if options.secure_port == 0 {
        return Ok(None);
    }
    let authn_client = delegation_client(
        options.authentication_kubeconfig.as_deref(),
        clients,
        qps_burst,
        "authentication",
    )
    .await?;
    let authz_client = delegation_client(
        options.authorization_kubeconfig.as_deref(),
        clients,
        qps_burst,
        "authorization",
    )
    .await?;
    let mut cas = tls::ClientCas::from_files(options)?;
    let mut request_header = authn::RequestHeaderConfig {
        allowed_names: options.requestheader_allowed_names.clone(),
        username_headers: options.requestheader_username_headers.clone(),
        uid_headers: options.requestheader_uid_headers.clone(),
        group_headers: options.requestheader_group_headers.clone(),
        extra_prefixes: options.requestheader_extra_headers_prefix.clone(),
    };
    let missing = cas.client_ca.is_none() || cas.request_header.is_none();
    if missing && !options.authentication_skip_lookup {
        match lookup::read(&authn_client).await {
            Ok(Some(found)) => apply_lookup(found, &mut cas, &mut request_header)?,
            Ok(None) => tracing::warn!(
                configmap = format!("{}/{}", lookup::NAMESPACE, lookup::NAME),
                "no in-cluster authentication configuration; client certificates are accepted only with --client-ca-file and --requestheader-client-ca-file"
            ),
            Err(e) if options.authentication_tolerate_lookup_failure => tracing::warn!(
                error = %crate::error_chain::display(&e),
                "looking up the in-cluster authentication configuration failed; continuing without it"
            ),
            Err(e) => return Err(ServingError::Lookup(e)),
        }
    }
    let server = Server {
        endpoints,
        tls: tls::build(options, &cas)?,
        authenticator: authn::Authenticator::new(
            authn_client,
            request_header,
            options.authentication_token_webhook_cache_ttl,
        ),
        authorizer: authz::Authorizer::new(
            authz_client,
            options.authorization_always_allow_paths.clone(),
            options.authorization_webhook_cache_authorized_ttl,
            options.authorization_webhook_cache_unauthorized_ttl,
        ),
    };
    let addr = SocketAddr::new(options.bind_address, options.secure_port);
    let (bound, _) = serve(addr, Arc::new(server), shutdown)
        .await
        .map_err(|e| ServingError::Bind(addr, e))?;
    Ok(Some(bound))
}
