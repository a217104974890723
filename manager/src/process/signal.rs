//! SIGTERM and SIGINT: what stops a manager started by [`crate::Manager::run_main`].

/// Resolves when SIGTERM or SIGINT arrives.
pub(crate) async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = terminate => tracing::info!("received SIGTERM, shutting down"),
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => tracing::info!("received SIGINT, shutting down"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGINT");
                std::future::pending::<()>().await;
            }
        },
    }
}
