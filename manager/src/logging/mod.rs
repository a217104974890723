//! Structured logs with tracing, written as kube-controller-manager writes them: klog's text
//! format by default ([`klog_text`]), component-base's JSON with `--logging-format=json`
//! ([`json`]), so log pipelines built for upstream keep working.
//!
//! `-v` maps klog verbosity onto tracing levels: 0–1 → info, 2–4 → debug (writes to the API
//! server are logged at `-v=2`, as kube-controller-manager does), 5+ → trace; `--vmodule`
//! raises it per source file ([`vmodule`], [`verbosity`]). `RUST_LOG` overrides both when set.

pub mod fields;
mod format;
pub mod json;
pub mod klog_text;
pub mod verbosity;
pub mod vmodule;

use std::sync::Arc;

use tracing_subscriber::filter::{EnvFilter, filter_fn};
use tracing_subscriber::layer::{Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Registry, fmt};

use format::Lines;

pub use verbosity::Verbosity;
pub use vmodule::VModule;

type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

fn format_layer(json: bool) -> BoxedLayer {
    let layer = fmt::layer().with_writer(std::io::stderr);
    if json {
        layer.event_format(Lines(json::Json)).boxed()
    } else {
        layer.event_format(Lines(klog_text::KlogText)).boxed()
    }
}

/// Installs the global subscriber (a second call installs nothing) and returns the verbosity
/// handle that `PUT /debug/flags/v` changes. `RUST_LOG`, when set and valid, replaces `-v`
/// and `--vmodule`; the handle then has no effect.
pub fn init(verbosity: u32, vmodule: VModule, format: &str) -> Arc<Verbosity> {
    let handle = Arc::new(Verbosity::new(verbosity, vmodule));
    let json = format == "json";
    let env = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok());
    let from_env = env.is_some();
    let layer = match env {
        Some(filter) => format_layer(json).with_filter(filter).boxed(),
        None => {
            let decide = handle.clone();
            let filter = filter_fn(move |metadata| decide.enabled(metadata));
            format_layer(json).with_filter(filter).boxed()
        }
    };
    // Already installed (tests, or a second call): keep the first.
    if tracing_subscriber::registry()
        .with(layer)
        .try_init()
        .is_ok()
        && !from_env
    {
        let _ = INSTALLED.set(handle.clone());
    }
    handle
}

/// The verbosity of the installed subscriber, when [`init`] installed it and `RUST_LOG` did
/// not replace `-v`.
pub fn installed() -> Option<Arc<Verbosity>> {
    INSTALLED.get().cloned()
}

static INSTALLED: std::sync::OnceLock<Arc<Verbosity>> = std::sync::OnceLock::new();

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
        // The finest level a verbosity enables.
        let finest = |v: u32| {
            [
                tracing::Level::TRACE,
                tracing::Level::DEBUG,
                tracing::Level::INFO,
            ]
            .into_iter()
            .find(|level| verbosity::needed_verbosity(level) <= v)
        };
        for (v, level) in cases {
            assert_eq!(finest(v), Some(level), "-v={v}");
        }
    }

    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn capture(json: bool, log: impl FnOnce()) -> String {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let builder = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || sink.clone());
        if json {
            tracing::subscriber::with_default(
                builder.event_format(Lines(json::Json)).finish(),
                log,
            );
        } else {
            tracing::subscriber::with_default(
                builder.event_format(Lines(klog_text::KlogText)).finish(),
                log,
            );
        }
        String::from_utf8(buffer.0.lock().clone()).expect("utf-8")
    }

    #[test]
    fn events_are_written_in_klog_and_component_base_formats() {
        let line = line!() + 2;
        let text = capture(false, || {
            tracing::warn!(holder = "b", workers = 5u64, "lease is held");
        });
        let header_end = text.find(']').expect("header");
        assert!(text.starts_with('W'), "{text}");
        assert!(
            text[..header_end].ends_with(&format!(" mod.rs:{line}")),
            "{text}"
        );
        assert!(
            text.ends_with("] \"lease is held\" holder=\"b\" workers=5\n"),
            "{text}"
        );
        let text = capture(true, || {
            tracing::debug!(error = "boom", "sync failed");
        });
        let parsed: serde_json::Value = serde_json::from_str(text.trim()).expect("JSON");
        assert_eq!(parsed["msg"], "sync failed");
        assert_eq!(parsed["v"], 2);
        assert_eq!(parsed["err"], "boom");
        assert!(
            parsed["ts"].as_f64().is_some_and(|ts| ts > 1.7e12),
            "{text}"
        );
        assert!(
            parsed["caller"]
                .as_str()
                .is_some_and(|c| c.starts_with("mod.rs:")),
            "{text}"
        );
    }
}
