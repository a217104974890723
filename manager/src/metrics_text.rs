//! Prometheus' text exposition format 0.0.4 from prometheus-client's OpenMetrics output, for
//! scrapers that do not ask for OpenMetrics (kube-controller-manager answers them with 0.0.4).
//!
//! The differences that matter: OpenMetrics names a counter family without `_total` in its
//! `# HELP`/`# TYPE` lines (samples keep it), has `# UNIT` lines, `unknown` for untyped, and
//! ends with `# EOF`.

/// Rewrites an OpenMetrics exposition as text format 0.0.4.
pub fn to_text_0_0_4(open_metrics: &str) -> String {
    let counters: Vec<&str> = open_metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let rewritten = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            let name = if counters.contains(&name) && !name.ends_with("_total") {
                format!("{name}_total")
            } else {
                name.to_string()
            };
            let tail = if *prefix == "# TYPE " && tail == "unknown" {
                "untyped"
            } else {
                tail
            };
            Some(format!("{prefix}{name} {tail}"))
        });
        out.push_str(rewritten.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_units_and_eof_follow_0_0_4() {
        let open = "# HELP rest_client_requests Number of HTTP requests.\n\
                    # TYPE rest_client_requests counter\n\
                    rest_client_requests_total{code=\"200\"} 3\n\
                    # HELP process_cpu_seconds Total user and system CPU time spent in seconds.\n\
                    # TYPE process_cpu_seconds counter\n\
                    # UNIT process_cpu_seconds seconds\n\
                    process_cpu_seconds_total 1.5\n\
                    # HELP workqueue_depth Current depth of workqueue.\n\
                    # TYPE workqueue_depth gauge\n\
                    workqueue_depth{name=\"deployment\"} 0\n\
                    # TYPE thing unknown\n\
                    thing 1\n\
                    # EOF\n";
        let want = "# HELP rest_client_requests_total Number of HTTP requests.\n\
                    # TYPE rest_client_requests_total counter\n\
                    rest_client_requests_total{code=\"200\"} 3\n\
                    # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n\
                    # TYPE process_cpu_seconds_total counter\n\
                    process_cpu_seconds_total 1.5\n\
                    # HELP workqueue_depth Current depth of workqueue.\n\
                    # TYPE workqueue_depth gauge\n\
                    workqueue_depth{name=\"deployment\"} 0\n\
                    # TYPE thing untyped\n\
                    thing 1\n";
        assert_eq!(to_text_0_0_4(open), want);
    }
}
