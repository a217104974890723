//! The connections of fenced clients: with the `rustls-tls` feature, a controller client
//! behind a [`FenceLayer`](kcm_leaderelection::FenceLayer) also checks the fence before every
//! byte it writes to the socket ([`FencedConnector`](kcm_leaderelection::FencedConnector)), so
//! that a process stopped between the layer's check and the send cannot deliver the write
//! after its lease may have passed on. The stack is kube-client's default one (TLS from the
//! kubeconfig, connect/read/write timeouts, base URI, authentication, extra headers) with that
//! connector under TLS. Configurations it does not cover (a proxy, an exec credential plugin)
//! and builds without the feature keep kube-client's stack and the layer's check alone.

use kcm_leaderelection::WriteFence;
use kube::client::{ClientBuilder, DynBody};
use tower::BoxError;
use tower::util::BoxService;

use super::ClientError;

/// kube-client's boxed service type (`ClientBuilder<GenericService>`).
pub(super) type Generic =
    BoxService<http::Request<kube::client::Body>, http::Response<Box<DynBody>>, BoxError>;

/// A client builder whose connections write only while `fence` is open, or `None` where this
/// build or `config` keeps kube-client's own stack.
#[cfg(feature = "rustls-tls")]
pub(super) fn fenced_builder(
    config: &kube::Config,
    fence: &WriteFence,
) -> Result<Option<ClientBuilder<Generic>>, ClientError> {
    use hyper_util::client::legacy::connect::HttpConnector;
    use kcm_leaderelection::FencedConnector;
    use kube::client::ConfigExt;
    use tower::ServiceExt;

    if config.proxy_url.is_some() || config.auth_info.exec.is_some() {
        return Ok(None);
    }
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    let tls = config
        .rustls_https_connector_with_connector(FencedConnector::new(tcp, fence.clone()))
        .map_err(ClientError::Build)?;
    let mut timeouts = hyper_timeout::TimeoutConnector::new(tls);
    timeouts.set_connect_timeout(config.connect_timeout);
    timeouts.set_read_timeout(config.read_timeout);
    timeouts.set_write_timeout(config.write_timeout);
    timeouts.set_reset_reader_on_write(config.reset_reader_on_write);
    let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build::<_, kube::client::Body>(timeouts);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().map_err(ClientError::Build)?)
        .layer(config.extra_headers_layer().map_err(ClientError::Build)?)
        .map_err(BoxError::from)
        .service(hyper)
        .map_response(|response| {
            response.map(|body| {
                Box::new(http_body_util::BodyExt::map_err(body, BoxError::from)) as Box<DynBody>
            })
        })
        .boxed();
    Ok(Some(ClientBuilder::new(
        service,
        config.default_namespace.clone(),
    )))
}

/// Without the `rustls-tls` feature: kube-client's own stack (see the module docs).
#[cfg(not(feature = "rustls-tls"))]
pub(super) fn fenced_builder(
    _config: &kube::Config,
    _fence: &WriteFence,
) -> Result<Option<ClientBuilder<Generic>>, ClientError> {
    Ok(None)
}
