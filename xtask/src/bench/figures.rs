//! The rows of each comparison table (client-go for the primitives, kube-controller-manager
//! for the controllers): which field, from which lines of each side.

use super::table::{Better, Figure};

const fn fig(
    label: &'static str,
    field: &'static str,
    peer: &'static [(&'static str, &'static str)],
    ours: &'static [(&'static str, &'static str)],
    better: Better,
) -> Figure {
    Figure {
        label,
        field,
        peer,
        ours,
        better,
    }
}

use Better::{Higher, Lower, Neither};

const CHURN_GO: &[(&str, &str)] = &[("workload", "churn"), ("impl", "client-go")];
const CHURN_RS: &[(&str, &str)] = &[("workload", "churn"), ("impl", "kcm-workqueue")];
const CHURN_TASKS_RS: &[(&str, &str)] = &[("workload", "churn"), ("impl", "kcm-workqueue-tasks")];
const CHURN_BY_VALUE_RS: &[(&str, &str)] =
    &[("workload", "churn"), ("impl", "kcm-workqueue-by-value")];
const DELAY_GO: &[(&str, &str)] = &[("workload", "delay"), ("impl", "client-go")];
const DELAY_RS: &[(&str, &str)] = &[("workload", "delay"), ("impl", "kcm-workqueue")];
const RL_GO: &[(&str, &str)] = &[("workload", "ratelimit"), ("impl", "client-go")];
const RL_RS: &[(&str, &str)] = &[("workload", "ratelimit"), ("impl", "kcm-workqueue")];

/// `cargo xtask bench workqueue`.
pub const WORKQUEUE: &[Figure] = &[
    fig("churn: adds/s", "adds_per_s", CHURN_GO, CHURN_RS, Higher),
    fig("churn: wall ms", "wall_ms", CHURN_GO, CHURN_RS, Lower),
    fig("churn: process CPU ms", "cpu_ms", CHURN_GO, CHURN_RS, Lower),
    fig(
        "churn: peak RSS KiB",
        "peak_rss_kb",
        CHURN_GO,
        CHURN_RS,
        Lower,
    ),
    // How many adds the workers saw (the rest were merged into a key still queued).
    fig("churn: gets", "gets", CHURN_GO, CHURN_RS, Neither),
    // The same producers adding by value (`add(key.clone())`: a reference count touched twice
    // per add, which a Go string copy does not do).
    fig(
        "churn, add by value: adds/s",
        "adds_per_s",
        CHURN_GO,
        CHURN_BY_VALUE_RS,
        Higher,
    ),
    fig(
        "churn, add by value: process CPU ms",
        "cpu_ms",
        CHURN_GO,
        CHURN_BY_VALUE_RS,
        Lower,
    ),
    fig(
        "churn, add by value: gets",
        "gets",
        CHURN_GO,
        CHURN_BY_VALUE_RS,
        Neither,
    ),
    // The tokio-shaped variant (task producers yielding every 256 adds, String keys), as context.
    fig(
        "churn, task producers: adds/s",
        "adds_per_s",
        CHURN_GO,
        CHURN_TASKS_RS,
        Higher,
    ),
    fig(
        "churn, task producers: process CPU ms",
        "cpu_ms",
        CHURN_GO,
        CHURN_TASKS_RS,
        Lower,
    ),
    fig(
        "churn, task producers: gets",
        "gets",
        CHURN_GO,
        CHURN_TASKS_RS,
        Neither,
    ),
    fig("delay: wall ms", "wall_ms", DELAY_GO, DELAY_RS, Lower),
    fig(
        "delay: lateness p50 µs",
        "lateness_p50_us",
        DELAY_GO,
        DELAY_RS,
        Lower,
    ),
    fig(
        "delay: lateness p99 µs",
        "lateness_p99_us",
        DELAY_GO,
        DELAY_RS,
        Lower,
    ),
    fig(
        "delay: lateness max µs",
        "lateness_max_us",
        DELAY_GO,
        DELAY_RS,
        Lower,
    ),
    fig("delay: process CPU ms", "cpu_ms", DELAY_GO, DELAY_RS, Lower),
    fig(
        "delay: peak RSS KiB",
        "peak_rss_kb",
        DELAY_GO,
        DELAY_RS,
        Lower,
    ),
    fig("ratelimit: wall ms", "wall_ms", RL_GO, RL_RS, Lower),
    fig("ratelimit: process CPU ms", "cpu_ms", RL_GO, RL_RS, Lower),
    fig(
        "ratelimit: peak RSS KiB",
        "peak_rss_kb",
        RL_GO,
        RL_RS,
        Lower,
    ),
];

const STORE_GO: &[(&str, &str)] = &[("workload", "store"), ("impl", "client-go")];
const STORE_RS: &[(&str, &str)] = &[("workload", "store"), ("impl", "kcm-store")];

const fn store(label: &'static str, field: &'static str, better: Better) -> Figure {
    fig(label, field, STORE_GO, STORE_RS, better)
}

/// `cargo xtask bench store`.
pub const STORE: &[Figure] = &[
    store("insert 100k: wall ms", "insert_ms", Lower),
    store("insert 100k: CPU ms", "insert_cpu_ms", Lower),
    store("get by key: ops/s", "get_ops_per_s", Higher),
    store("get by key: ops/CPU s", "get_ops_per_cpu_s", Higher),
    // kcm-store's lending read (`with`), against the same client-go figure (its `GetByKey`
    // returns a pointer and touches nothing: it lends already).
    store("get by key, lending: ops/s", "get_lend_ops_per_s", Higher),
    store(
        "get by key, lending: ops/CPU s",
        "get_lend_ops_per_cpu_s",
        Higher,
    ),
    store("list all: wall ms", "list_all_ms", Lower),
    store("list all: CPU ms", "list_all_cpu_ms", Lower),
    store(
        "by namespace index: ops/s",
        "by_index_namespace_ops_per_s",
        Higher,
    ),
    store(
        "by namespace index: ops/CPU s",
        "by_index_namespace_ops_per_cpu_s",
        Higher,
    ),
    store("by node index: ops/s", "by_index_node_ops_per_s", Higher),
    store(
        "by node index: ops/CPU s",
        "by_index_node_ops_per_cpu_s",
        Higher,
    ),
    store(
        "namespaced list + selector: ops/s",
        "namespaced_list_selector_ops_per_s",
        Higher,
    ),
    store(
        "namespaced list + selector: ops/CPU s",
        "namespaced_list_selector_ops_per_cpu_s",
        Higher,
    ),
    store("update 100k: wall ms", "update_ms", Lower),
    store("update 100k: process CPU ms", "update_cpu_ms", Lower),
    // kcm-store with deferred drops (`Store::set_deferred_drop`): the replaced Pods freed on a
    // background thread, waited for in the span (process CPU includes it); client-go's row is
    // its update (its collector frees on other threads too, counted as far as it runs).
    store(
        "update 100k, deferred drop: wall ms",
        "update_deferred_ms",
        Lower,
    ),
    store(
        "update 100k, deferred drop: process CPU ms",
        "update_deferred_cpu_ms",
        Lower,
    ),
    store(
        "update 100k, deferred drop: writer thread CPU ms",
        "update_deferred_writer_cpu_ms",
        Lower,
    ),
    store(
        "concurrent get (2 threads): ops/s",
        "concurrent_get_ops_per_s",
        Higher,
    ),
    store(
        "concurrent get: ops/CPU s",
        "concurrent_get_ops_per_cpu_s",
        Higher,
    ),
    store(
        "concurrent get, lending: ops/s",
        "concurrent_get_lend_ops_per_s",
        Higher,
    ),
    store(
        "concurrent get, lending: ops/CPU s",
        "concurrent_get_lend_ops_per_cpu_s",
        Higher,
    ),
    store("resident bytes per object", "bytes_per_object", Lower),
    store(
        "store overhead bytes per object",
        "store_overhead_bytes_per_object",
        Lower,
    ),
    store(
        "peak RSS after insert KiB",
        "peak_rss_after_insert_kb",
        Lower,
    ),
    store("peak RSS KiB", "peak_rss_kb", Lower),
];

const INF_GO: &[(&str, &str)] = &[("bench", "informer"), ("mode", "client-go")];
const INF_GO_LIST: &[(&str, &str)] = &[("bench", "informer"), ("mode", "client-go-list")];
const INF_RS: &[(&str, &str)] = &[("bench", "informer"), ("mode", "informer")];
const INF_COMPACT: &[(&str, &str)] = &[("bench", "informer"), ("mode", "informer-compact")];

/// `cargo xtask bench informer`: client-go's pod informer against `SharedIndexInformer<Pod>`
/// (full objects, no transform, on both sides). client-go as it comes starts with a streaming
/// list; the `(list)` rows turn that off for the LIST kcm-informer starts with.
pub const INFORMER: &[Figure] = &[
    fig(
        "initial sync s (client-go: list)",
        "initial_sync_s",
        INF_GO_LIST,
        INF_RS,
        Lower,
    ),
    fig(
        "process CPU until synced ms (client-go: list)",
        "sync_cpu_ms",
        INF_GO_LIST,
        INF_RS,
        Lower,
    ),
    fig(
        "peak RSS MiB (client-go: list)",
        "peak_rss_mib",
        INF_GO_LIST,
        INF_RS,
        Lower,
    ),
    fig(
        "initial sync s (client-go: streaming list)",
        "initial_sync_s",
        INF_GO,
        INF_RS,
        Lower,
    ),
    fig(
        "process CPU until synced ms (client-go: streaming list)",
        "sync_cpu_ms",
        INF_GO,
        INF_RS,
        Lower,
    ),
    fig(
        "peak RSS MiB (client-go: streaming list)",
        "peak_rss_mib",
        INF_GO,
        INF_RS,
        Lower,
    ),
    fig(
        "steady RSS MiB, 3 s after sync (client-go: streaming list)",
        "steady_rss_mib",
        INF_GO,
        INF_RS,
        Lower,
    ),
    fig(
        "baseline RSS MiB (before the client starts)",
        "baseline_rss_mib",
        INF_GO,
        INF_RS,
        Lower,
    ),
    // Full objects kept as `Compact<Pod>` (metadata decoded, the rest as JSON until read).
    fig(
        "Compact<Pod>: initial sync s (client-go: list)",
        "initial_sync_s",
        INF_GO_LIST,
        INF_COMPACT,
        Lower,
    ),
    fig(
        "Compact<Pod>: process CPU until synced ms (client-go: list)",
        "sync_cpu_ms",
        INF_GO_LIST,
        INF_COMPACT,
        Lower,
    ),
    fig(
        "Compact<Pod>: peak RSS MiB (client-go: list)",
        "peak_rss_mib",
        INF_GO_LIST,
        INF_COMPACT,
        Lower,
    ),
    fig(
        "Compact<Pod>: steady RSS MiB (client-go: list)",
        "steady_rss_mib",
        INF_GO_LIST,
        INF_COMPACT,
        Lower,
    ),
];

const UPSTREAM: &[(&str, &str)] = &[("impl", "upstream")];
const KCM: &[(&str, &str)] = &[("impl", "kcm")];

const fn controllers(label: &'static str, field: &'static str, better: Better) -> Figure {
    fig(label, field, UPSTREAM, KCM, better)
}

/// `cargo xtask bench controllers`: kube-controller-manager's Deployment and ReplicaSet
/// controllers (`upstream`) against kcm's. The API server rows are kube-apiserver's and etcd's
/// own CPU over the same phase (the real control plane only).
pub const CONTROLLERS: &[Figure] = &[
    controllers("time until all complete: create (s)", "create_s", Lower),
    controllers("time until all complete: rollout (s)", "rollout_s", Lower),
    controllers("pods per second: create", "pods_per_s_create", Higher),
    controllers("pods per second: rollout", "pods_per_s_rollout", Higher),
    controllers("controller CPU: create (s)", "cpu_create_s", Lower),
    controllers("controller CPU: rollout (s)", "cpu_rollout_s", Lower),
    controllers("controller peak RSS (MiB)", "peak_rss_mib", Lower),
    controllers(
        "kube-apiserver CPU: create (s)",
        "apiserver_cpu_create_s",
        Lower,
    ),
    controllers(
        "kube-apiserver CPU: rollout (s)",
        "apiserver_cpu_rollout_s",
        Lower,
    ),
    controllers("etcd CPU: create (s)", "etcd_cpu_create_s", Lower),
    controllers("etcd CPU: rollout (s)", "etcd_cpu_rollout_s", Lower),
    controllers("API writes without events: create", "writes_create", Lower),
    controllers(
        "API writes without events: rollout",
        "writes_rollout",
        Lower,
    ),
    controllers(
        "status writes at create: Deployment",
        "deploy_status_create",
        Lower,
    ),
    controllers(
        "status writes at create: ReplicaSet",
        "rs_status_create",
        Lower,
    ),
    controllers("409 conflicts: create", "conflicts_create", Lower),
    controllers("409 conflicts: rollout", "conflicts_rollout", Lower),
    controllers(
        "change → RS write p50 (ms): create",
        "lat_create_p50_ms",
        Lower,
    ),
    controllers(
        "change → RS write p99 (ms): create",
        "lat_create_p99_ms",
        Lower,
    ),
    controllers(
        "change → RS write p50 (ms): rollout",
        "lat_rollout_p50_ms",
        Lower,
    ),
    controllers(
        "change → RS write p99 (ms): rollout",
        "lat_rollout_p99_ms",
        Lower,
    ),
];
