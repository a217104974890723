//! Structured logs with tracing: text by default, JSON with `--logging-format=json`.
//!
//! `-v` maps klog verbosity onto tracing levels: 0–1 → info, 2–4 → debug (writes to the API
//! server are logged at `-v=2`, as kube-controller-manager does), 5+ → trace. `RUST_LOG`
//! overrides the mapping when set.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The tracing level for a klog verbosity.
pub fn level_for(verbosity: u8) -> tracing::Level {
    match verbosity {
        0 | 1 => tracing::Level::INFO,
        2..=4 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    }
}

/// Installs the global subscriber; a second call is a no-op.
pub fn init(verbosity: u8, format: &str) {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| {
            let level = level_for(verbosity).as_str().to_ascii_lowercase();
            // Our crates at the chosen level; dependencies stay quieter.
            EnvFilter::new(format!(
                "warn,kcm={level},kcm_store={level},kcm_workqueue={level},kcm_reflector={level},\
                 kcm_informer={level},kcm_controller={level},kcm_replicaset={level},\
                 kcm_deployment={level}"
            ))
        });
    // Colours only on a terminal: logs collected from a pod or a file stay plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let result = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    // Already installed (tests, or a second call): keep the first.
    let _ = result;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_maps_to_levels() {
        let cases = [
            (0, tracing::Level::INFO),
            (1, tracing::Level::INFO),
            (2, tracing::Level::DEBUG),
            (4, tracing::Level::DEBUG),
            (5, tracing::Level::TRACE),
            (10, tracing::Level::TRACE),
        ];
        for (v, level) in cases {
            assert_eq!(level_for(v), level, "-v={v}");
        }
    }
}
