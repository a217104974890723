//! The rows of each comparison table (client-go for the primitives, kube-controller-manager
//! for the controllers): which field, from which lines of each side.

use super::table::{Better, Figure};

use Better::{Higher, Lower, Neither};

/// The lines each side of a row is read from: every `(key, value)` pair must match.
#[derive(Clone, Copy)]
struct Sides {
    peer: &'static [(&'static str, &'static str)],
    ours: &'static [(&'static str, &'static str)],
}

/// A row: `field` of the lines `sides` select, labelled `label`.
const fn fig(sides: Sides, label: &'static str, field: &'static str, better: Better) -> Figure {
    Figure {
        label,
        field,
        peer: sides.peer,
        ours: sides.ours,
        better,
    }
}

const fn sides(
    peer: &'static [(&'static str, &'static str)],
    ours: &'static [(&'static str, &'static str)],
) -> Sides {
    Sides { peer, ours }
}

const CHURN_GO: &[(&str, &str)] = &[("workload", "churn"), ("impl", "client-go")];
const CHURN: Sides = sides(
    CHURN_GO,
    &[("workload", "churn"), ("impl", "kcm-workqueue")],
);
const CHURN_TASKS: Sides = sides(
    CHURN_GO,
    &[("workload", "churn"), ("impl", "kcm-workqueue-tasks")],
);
const CHURN_BY_VALUE: Sides = sides(
    CHURN_GO,
    &[("workload", "churn"), ("impl", "kcm-workqueue-by-value")],
);
const DELAY: Sides = sides(
    &[("workload", "delay"), ("impl", "client-go")],
    &[("workload", "delay"), ("impl", "kcm-workqueue")],
);
const RATELIMIT: Sides = sides(
    &[("workload", "ratelimit"), ("impl", "client-go")],
    &[("workload", "ratelimit"), ("impl", "kcm-workqueue")],
);

/// `cargo xtask bench workqueue`.
#[rustfmt::skip]
pub const WORKQUEUE: &[Figure] = &[
    fig(CHURN, "churn: adds/s", "adds_per_s", Higher),
    fig(CHURN, "churn: wall ms", "wall_ms", Lower),
    fig(CHURN, "churn: process CPU ms", "cpu_ms", Lower),
    fig(CHURN, "churn: peak RSS KiB", "peak_rss_kb", Lower),
    // How many adds the workers saw (the rest were merged into a key still queued).
    fig(CHURN, "churn: gets", "gets", Neither),
    // The same producers adding by value (`add(key.clone())`: a reference count touched twice
    // per add, which a Go string copy does not do).
    fig(CHURN_BY_VALUE, "churn, add by value: adds/s", "adds_per_s", Higher),
    fig(CHURN_BY_VALUE, "churn, add by value: process CPU ms", "cpu_ms", Lower),
    fig(CHURN_BY_VALUE, "churn, add by value: gets", "gets", Neither),
    // The tokio-shaped variant (task producers yielding every 256 adds, String keys), as context.
    fig(CHURN_TASKS, "churn, task producers: adds/s", "adds_per_s", Higher),
    fig(CHURN_TASKS, "churn, task producers: process CPU ms", "cpu_ms", Lower),
    fig(CHURN_TASKS, "churn, task producers: gets", "gets", Neither),
    fig(DELAY, "delay: wall ms", "wall_ms", Lower),
    fig(DELAY, "delay: lateness p50 µs", "lateness_p50_us", Lower),
    fig(DELAY, "delay: lateness p99 µs", "lateness_p99_us", Lower),
    fig(DELAY, "delay: lateness max µs", "lateness_max_us", Lower),
    fig(DELAY, "delay: process CPU ms", "cpu_ms", Lower),
    fig(DELAY, "delay: peak RSS KiB", "peak_rss_kb", Lower),
    fig(RATELIMIT, "ratelimit: wall ms", "wall_ms", Lower),
    fig(RATELIMIT, "ratelimit: process CPU ms", "cpu_ms", Lower),
    fig(RATELIMIT, "ratelimit: peak RSS KiB", "peak_rss_kb", Lower),
];

const STORE_SIDES: Sides = sides(
    &[("workload", "store"), ("impl", "client-go")],
    &[("workload", "store"), ("impl", "kcm-store")],
);

/// `cargo xtask bench store`.
#[rustfmt::skip]
pub const STORE: &[Figure] = &[
    fig(STORE_SIDES, "insert 100k: wall ms", "insert_ms", Lower),
    fig(STORE_SIDES, "insert 100k: CPU ms", "insert_cpu_ms", Lower),
    fig(STORE_SIDES, "get by key: ops/s", "get_ops_per_s", Higher),
    fig(STORE_SIDES, "get by key: ops/CPU s", "get_ops_per_cpu_s", Higher),
    // kcm-store's lending read (`with`), against the same client-go figure (its `GetByKey`
    // returns a pointer and touches nothing: it lends already).
    fig(STORE_SIDES, "get by key, lending: ops/s", "get_lend_ops_per_s", Higher),
    fig(STORE_SIDES, "get by key, lending: ops/CPU s", "get_lend_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "list all: wall ms", "list_all_ms", Lower),
    fig(STORE_SIDES, "list all: CPU ms", "list_all_cpu_ms", Lower),
    fig(STORE_SIDES, "by namespace index: ops/s", "by_index_namespace_ops_per_s", Higher),
    fig(STORE_SIDES, "by namespace index: ops/CPU s", "by_index_namespace_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "by node index: ops/s", "by_index_node_ops_per_s", Higher),
    fig(STORE_SIDES, "by node index: ops/CPU s", "by_index_node_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "namespaced list + selector: ops/s", "namespaced_list_selector_ops_per_s", Higher),
    fig(STORE_SIDES, "namespaced list + selector: ops/CPU s", "namespaced_list_selector_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "update 100k: wall ms", "update_ms", Lower),
    fig(STORE_SIDES, "update 100k: process CPU ms", "update_cpu_ms", Lower),
    // kcm-store with deferred drops (`Store::set_deferred_drop`): the replaced Pods freed on a
    // background thread, waited for in the span (process CPU includes it); client-go's row is
    // its update (its collector frees on other threads too, counted as far as it runs).
    fig(STORE_SIDES, "update 100k, deferred drop: wall ms", "update_deferred_ms", Lower),
    fig(STORE_SIDES, "update 100k, deferred drop: process CPU ms", "update_deferred_cpu_ms", Lower),
    fig(STORE_SIDES, "update 100k, deferred drop: writer thread CPU ms", "update_deferred_writer_cpu_ms", Lower),
    fig(STORE_SIDES, "concurrent get (2 threads): ops/s", "concurrent_get_ops_per_s", Higher),
    fig(STORE_SIDES, "concurrent get: ops/CPU s", "concurrent_get_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "concurrent get, lending: ops/s", "concurrent_get_lend_ops_per_s", Higher),
    fig(STORE_SIDES, "concurrent get, lending: ops/CPU s", "concurrent_get_lend_ops_per_cpu_s", Higher),
    fig(STORE_SIDES, "resident bytes per object", "bytes_per_object", Lower),
    fig(STORE_SIDES, "store overhead bytes per object", "store_overhead_bytes_per_object", Lower),
    fig(STORE_SIDES, "peak RSS after insert KiB", "peak_rss_after_insert_kb", Lower),
    fig(STORE_SIDES, "peak RSS KiB", "peak_rss_kb", Lower),
];

const INFORMER_GO_LIST: &[(&str, &str)] = &[("bench", "informer"), ("mode", "client-go-list")];
const INFORMER_RS: &[(&str, &str)] = &[("bench", "informer"), ("mode", "informer")];
const INFORMER_LIST: Sides = sides(INFORMER_GO_LIST, INFORMER_RS);
const INFORMER_STREAMING: Sides =
    sides(&[("bench", "informer"), ("mode", "client-go")], INFORMER_RS);
const INFORMER_COMPACT: Sides = sides(
    INFORMER_GO_LIST,
    &[("bench", "informer"), ("mode", "informer-compact")],
);

/// `cargo xtask bench informer`: client-go's pod informer against `SharedIndexInformer<Pod>`
/// (full objects, no transform, on both sides). client-go as it comes starts with a streaming
/// list; the `(list)` rows turn that off for the LIST kcm-informer starts with.
#[rustfmt::skip]
pub const INFORMER: &[Figure] = &[
    fig(INFORMER_LIST, "initial sync s (client-go: list)", "initial_sync_s", Lower),
    fig(INFORMER_LIST, "process CPU until synced ms (client-go: list)", "sync_cpu_ms", Lower),
    fig(INFORMER_LIST, "peak RSS MiB (client-go: list)", "peak_rss_mib", Lower),
    fig(INFORMER_STREAMING, "initial sync s (client-go: streaming list)", "initial_sync_s", Lower),
    fig(INFORMER_STREAMING, "process CPU until synced ms (client-go: streaming list)", "sync_cpu_ms", Lower),
    fig(INFORMER_STREAMING, "peak RSS MiB (client-go: streaming list)", "peak_rss_mib", Lower),
    fig(INFORMER_STREAMING, "steady RSS MiB, 3 s after sync (client-go: streaming list)", "steady_rss_mib", Lower),
    fig(INFORMER_STREAMING, "baseline RSS MiB (before the client starts)", "baseline_rss_mib", Lower),
    // Full objects kept as `Compact<Pod>` (metadata decoded, the rest as JSON until read).
    fig(INFORMER_COMPACT, "Compact<Pod>: initial sync s (client-go: list)", "initial_sync_s", Lower),
    fig(INFORMER_COMPACT, "Compact<Pod>: process CPU until synced ms (client-go: list)", "sync_cpu_ms", Lower),
    fig(INFORMER_COMPACT, "Compact<Pod>: peak RSS MiB (client-go: list)", "peak_rss_mib", Lower),
    fig(INFORMER_COMPACT, "Compact<Pod>: steady RSS MiB (client-go: list)", "steady_rss_mib", Lower),
];

const CONTROLLER_SIDES: Sides = sides(&[("impl", "upstream")], &[("impl", "kcm")]);

/// `cargo xtask bench controllers`: kube-controller-manager's Deployment and ReplicaSet
/// controllers (`upstream`) against kcm's. The API server rows are kube-apiserver's and etcd's
/// own CPU over the same phase (the real control plane only).
#[rustfmt::skip]
pub const CONTROLLERS: &[Figure] = &[
    fig(CONTROLLER_SIDES, "time until all complete: create (s)", "create_s", Lower),
    fig(CONTROLLER_SIDES, "time until all complete: rollout (s)", "rollout_s", Lower),
    fig(CONTROLLER_SIDES, "pods per second: create", "pods_per_s_create", Higher),
    fig(CONTROLLER_SIDES, "pods per second: rollout", "pods_per_s_rollout", Higher),
    fig(CONTROLLER_SIDES, "controller CPU: create (s)", "cpu_create_s", Lower),
    fig(CONTROLLER_SIDES, "controller CPU: rollout (s)", "cpu_rollout_s", Lower),
    fig(CONTROLLER_SIDES, "controller peak RSS (MiB)", "peak_rss_mib", Lower),
    fig(CONTROLLER_SIDES, "kube-apiserver CPU: create (s)", "apiserver_cpu_create_s", Lower),
    fig(CONTROLLER_SIDES, "kube-apiserver CPU: rollout (s)", "apiserver_cpu_rollout_s", Lower),
    fig(CONTROLLER_SIDES, "etcd CPU: create (s)", "etcd_cpu_create_s", Lower),
    fig(CONTROLLER_SIDES, "etcd CPU: rollout (s)", "etcd_cpu_rollout_s", Lower),
    fig(CONTROLLER_SIDES, "API writes without events: create", "writes_create", Lower),
    fig(CONTROLLER_SIDES, "API writes without events: rollout", "writes_rollout", Lower),
    fig(CONTROLLER_SIDES, "status writes at create: Deployment", "deploy_status_create", Lower),
    fig(CONTROLLER_SIDES, "status writes at create: ReplicaSet", "rs_status_create", Lower),
    fig(CONTROLLER_SIDES, "409 conflicts: create", "conflicts_create", Lower),
    fig(CONTROLLER_SIDES, "409 conflicts: rollout", "conflicts_rollout", Lower),
    fig(CONTROLLER_SIDES, "change → RS write p50 (ms): create", "lat_create_p50_ms", Lower),
    fig(CONTROLLER_SIDES, "change → RS write p99 (ms): create", "lat_create_p99_ms", Lower),
    fig(CONTROLLER_SIDES, "change → RS write p50 (ms): rollout", "lat_rollout_p50_ms", Lower),
    fig(CONTROLLER_SIDES, "change → RS write p99 (ms): rollout", "lat_rollout_p99_ms", Lower),
];
