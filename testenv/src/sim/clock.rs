//! Timestamps in the API's wire formats.

/// Now as a metav1.Time (RFC 3339, second precision, UTC).
pub(crate) fn now_time() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Now as a metav1.MicroTime (RFC 3339 with microseconds, UTC).
pub(crate) fn now_micro() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

/// A Go-style rendering of a duration as `time.Duration.String` prints whole seconds and
/// milliseconds (`10s`, `1m20s`, `5m0s`, `500ms`).
pub(crate) fn go_duration_string(d: std::time::Duration) -> String {
    let total_ms = d.as_millis();
    if total_ms < 1000 {
        return format!("{total_ms}ms");
    }
    let secs = d.as_secs();
    let ms = d.subsec_millis();
    let frac = if ms == 0 {
        String::new()
    } else {
        format!(".{ms:03}").trim_end_matches('0').to_string()
    };
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if h > 0 {
        format!("{h}h{m}m{s}{frac}s")
    } else if m > 0 {
        format!("{m}m{s}{frac}s")
    } else {
        format!("{s}{frac}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats() {
        let t = now_time();
        assert_eq!(t.len(), "2025-01-02T03:04:05Z".len(), "{t}");
        assert!(t.ends_with('Z'));
        let m = now_micro();
        assert_eq!(m.len(), "2025-01-02T03:04:05.123456Z".len(), "{m}");
        for (d, want) in [
            (Duration::from_millis(500), "500ms"),
            (Duration::from_secs(10), "10s"),
            (Duration::from_secs(80), "1m20s"),
            (Duration::from_secs(300), "5m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_secs(3600), "1h0m0s"),
        ] {
            assert_eq!(go_duration_string(d), want);
        }
    }
}
