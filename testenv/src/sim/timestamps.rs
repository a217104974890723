//! Timestamps in the API's wire formats (metav1.Time and metav1.MicroTime), as the simulated components write them.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t = now_time();
        assert_eq!(t.len(), "2025-01-02T03:04:05Z".len(), "{t}");
        assert!(t.ends_with('Z'));
        let m = now_micro();
        assert_eq!(m.len(), "2025-01-02T03:04:05.123456Z".len(), "{m}");
    }
}
