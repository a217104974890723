//! Exposition checks: names, label, help texts, buckets.

use super::*;
use crate::{DelayingQueue, QueueConfig};
use std::sync::Arc;
use std::time::Duration;

fn config(name: &str, provider: &PrometheusMetricsProvider) -> QueueConfig {
    QueueConfig {
        name: name.into(),
        metrics_provider: Some(Arc::new(provider.clone())),
    }
}

#[tokio::test(start_paused = true)]
async fn exposes_client_go_series() {
    let provider = PrometheusMetricsProvider::new();
    let q: DelayingQueue<String> = DelayingQueue::with_config(config("deployment", &provider));
    q.add("a".into());
    q.add("a".into());
    q.add("b".into());
    q.add_after("c".into(), Duration::from_millis(5));
    let item = q.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await; // refreshed at 1.0 s
    let text = provider.render();

    for (name, help) in [
        ("workqueue_depth", DEPTH_HELP),
        ("workqueue_adds", ADDS_HELP),
        ("workqueue_queue_duration_seconds", LATENCY_HELP),
        ("workqueue_work_duration_seconds", WORK_DURATION_HELP),
        ("workqueue_unfinished_work_seconds", UNFINISHED_HELP),
        ("workqueue_longest_running_processor_seconds", LONGEST_HELP),
        ("workqueue_retries", RETRIES_HELP),
    ] {
        let line = format!("# HELP {name} {help}\n");
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    // "c" became ready after 5 ms: 3 adds in total, "a" handed out.
    assert!(
        text.contains("workqueue_depth{name=\"deployment\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_adds_total{name=\"deployment\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_retries_total{name=\"deployment\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_longest_running_processor_seconds{name=\"deployment\"} 1.0\n"),
        "{text}"
    );
    assert!(text.contains("# TYPE workqueue_queue_duration_seconds histogram\n"));
    assert!(
        text.contains("workqueue_queue_duration_seconds_count{name=\"deployment\"} 1\n"),
        "{text}"
    );
    q.done(&item);
    let text = provider.render();
    assert!(
        text.contains("workqueue_work_duration_seconds_count{name=\"deployment\"} 1\n"),
        "{text}"
    );
    q.shutdown();
}

#[test]
fn help_texts_are_exact() {
    assert_eq!(DEPTH_HELP, "[ALPHA] Current depth of workqueue");
    assert_eq!(
        ADDS_HELP,
        "[ALPHA] Total number of adds handled by workqueue"
    );
    assert_eq!(
        RETRIES_HELP,
        "[ALPHA] Total number of retries handled by workqueue"
    );
    assert!(UNFINISHED_HELP.ends_with("observing the rate at which this increases."));
}

#[test]
fn histogram_buckets_are_upstreams() {
    let provider = PrometheusMetricsProvider::new();
    provider.new_latency_metric("q").observe(0.5);
    let text = provider.render();
    let les: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("workqueue_queue_duration_seconds_bucket"))
        .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(les.len(), 11, "{text}");
    assert_eq!(les[10], "+Inf");
    let values: Vec<f64> = les[..10].iter().map(|v| v.parse().unwrap()).collect();
    let expected = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0];
    for (v, e) in values.iter().zip(expected) {
        assert!((v / e - 1.0).abs() < 1e-9, "{v} vs {e}");
    }
}

#[test]
fn unnamed_queues_export_nothing() {
    let provider = PrometheusMetricsProvider::new();
    let q: crate::Queue<u32> = crate::Queue::with_config(config("", &provider));
    q.add(1);
    assert!(!provider.render().contains("name="));
}
