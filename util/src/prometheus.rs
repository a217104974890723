//! One metric family written by a custom prometheus-client collector (feature `prometheus`):
//! the way kcm-rs exports Kubernetes' series with their help texts exactly as upstream's
//! (component-base `metrics`), which `Registry::register` would end with an added period.
//!
//! ```
//! use kcm_util::prometheus::encode_family;
//! use prometheus_client::collector::Collector;
//! use prometheus_client::encoding::DescriptorEncoder;
//! use prometheus_client::metrics::gauge::ConstGauge;
//! use prometheus_client::registry::Registry;
//!
//! #[derive(Debug)]
//! struct Depth;
//!
//! impl Collector for Depth {
//!     fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
//!         let help = "[ALPHA] Current depth of workqueue";
//!         encode_family(&mut encoder, "workqueue_depth", help, &ConstGauge::new(3))
//!     }
//! }
//!
//! let mut registry = Registry::default();
//! registry.register_collector(Box::new(Depth));
//! let mut text = String::new();
//! prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
//! assert!(text.contains("# HELP workqueue_depth [ALPHA] Current depth of workqueue\n"));
//! assert!(text.contains("workqueue_depth 3\n"));
//! ```

use std::fmt;

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};

/// Writes `metric` (a family, or one constant value) under `name` with `help` as given. The
/// text encoder adds `_total` to a counter's samples, so a counter is named without it.
pub fn encode_family<M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: &M,
) -> fmt::Result {
    let descriptor = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(descriptor)
}
