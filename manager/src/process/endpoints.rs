//! The first phase: the metrics and health endpoints, and the HTTPS server that serves them
//! before anything else starts (as kube-controller-manager serves before it elects).

use tokio_util::sync::CancellationToken;

use crate::client::ClientFactory;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::process_metrics::ProcessMetrics;
use crate::serving::{self, Endpoints, debug::Debugging};

/// The endpoints: `metrics` and the process's `process_*` series at `/metrics` (and `metrics`
/// installed as the process-wide sink of work-queue and sync metrics), and with `--profiling`
/// the debugging endpoints.
pub(super) fn configure(options: &Options, metrics: &Metrics) -> Endpoints {
    let endpoints = Endpoints::new();
    metrics.register(&mut endpoints.registry().write());
    endpoints
        .registry()
        .write()
        .register_collector(Box::new(ProcessMetrics));
    if !metrics.install_global() {
        tracing::warn!(
            "work-queue or sync metrics were already installed by someone else; /metrics lacks them"
        );
    }
    if options.profiling {
        endpoints.enable_debugging(Debugging::new(crate::logging::installed()));
    }
    endpoints
}

/// Serves `endpoints` over HTTPS on `--bind-address:--secure-port` (nothing with port 0) until
/// `cancel` fires.
pub(super) async fn serve(
    options: &Options,
    endpoints: &Endpoints,
    clients: &ClientFactory,
    cancel: CancellationToken,
) -> anyhow::Result<()> {
    let rate = (options.kube_api_qps, options.kube_api_burst);
    let bound = serving::start(&options.serving, endpoints.clone(), clients, rate, cancel).await?;
    if let Some(address) = bound {
        tracing::info!(%address, "serving /metrics, /healthz, /livez and /readyz over HTTPS");
    }
    Ok(())
}
