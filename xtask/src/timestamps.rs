//! Timestamps as the API server writes them (RFC 3339: `metav1.Time`, `MicroTime`, audit
//! events' `requestReceivedTimestamp`) to and from the Unix epoch, through jiff, and the
//! current time in the units the harness records.

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;

/// Seconds since the Unix epoch of an RFC 3339 timestamp (any offset, any fraction);
/// `None` for anything else.
pub(crate) fn unix_seconds(text: &str) -> Option<f64> {
    let t: Timestamp = text.parse().ok()?;
    Some(t.as_second() as f64 + f64::from(t.subsec_nanosecond()) / 1e9)
}

/// Microseconds since the Unix epoch of an RFC 3339 timestamp (a finer fraction truncated);
/// `None` for anything else.
pub(crate) fn unix_micros(text: &str) -> Option<i64> {
    let t: Timestamp = text.parse().ok()?;
    Some(t.as_microsecond())
}

/// `t` as an RFC 3339 UTC timestamp with whole seconds, as the API serialises `metav1.Time`
/// (`2026-11-27T09:10:11Z`); before the epoch, the epoch.
pub(crate) fn rfc3339_seconds(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let t = i64::try_from(secs)
        .ok()
        .and_then(|s| Timestamp::from_second(s).ok())
        .unwrap_or(Timestamp::UNIX_EPOCH);
    t.to_string()
}

/// Seconds since the Unix epoch now.
pub(crate) fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Microseconds since the Unix epoch now.
pub(crate) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rfc3339_table() {
        let cases: &[(&str, Option<f64>)] = &[
            ("1970-01-01T00:00:00Z", Some(0.0)),
            ("1970-01-01T00:00:00.000000Z", Some(0.0)),
            ("2000-03-01T00:00:00Z", Some(951_868_800.0)),
            ("2000-03-01T00:00:01.500000Z", Some(951_868_801.5)),
            ("2024-02-29T12:34:56Z", Some(1_709_210_096.0)),
            ("2024-02-29T12:34:56.500000Z", Some(1_709_210_096.5)),
            ("2024-02-29T14:34:56+02:00", Some(1_709_210_096.0)),
            ("2024-02-29T10:04:56-02:30", Some(1_709_210_096.0)),
            ("2026-11-27T09:10:11.250000Z", Some(1_795_770_611.25)),
            ("2024-13-01T00:00:00Z", None),
            ("2024-01-01T25:00:00Z", None),
            ("2024-01-01", None),
            ("", None),
            ("yesterday", None),
        ];
        for (ts, want) in cases {
            assert_eq!(unix_seconds(ts), *want, "{ts}");
        }
    }

    #[test]
    fn timestamps_read_as_the_api_server_writes_them() {
        // 2026-11-25 is day 20,782 after 1970-01-01.
        let day = 20_782 * 86_400;
        assert_eq!(
            unix_micros("2026-11-25T05:23:00.5Z"),
            Some((day + 5 * 3600 + 23 * 60) * 1_000_000 + 500_000)
        );
        assert_eq!(
            unix_micros("2026-11-25T05:23:00.123456789Z"),
            Some((day + 5 * 3600 + 23 * 60) * 1_000_000 + 123_456)
        );
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(unix_seconds("1970-01-02T01:00:00+01:00"), Some(86_400.0));
        assert_eq!(unix_seconds("1970-01-01t00:00:01.25z"), Some(1.25));
        // A leap year's last day, and the day after.
        assert_eq!(
            unix_seconds("2024-12-31T00:00:00Z").zip(unix_seconds("2025-01-01T00:00:00Z")),
            Some((1_735_603_200.0, 1_735_689_600.0))
        );
        for bad in [
            "",
            "2026-11-25",
            "2026-13-01T00:00:00Z",
            "2026-11-25T05:23:00",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
            assert_eq!(unix_micros(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps_write_as_metav1_time() {
        let at = |s: u64| rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_764_233_411), "2025-11-27T08:50:11Z");
        assert_eq!(
            rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(1_500)),
            "1970-01-01T00:00:01Z"
        );
        for s in [0, 59, 86_399, 951_782_400, 1_764_233_411] {
            assert_eq!(unix_seconds(&at(s)), Some(s as f64));
        }
    }
}
