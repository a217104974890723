//! Ages as `kubectl get` prints them (upstream `apimachinery/pkg/util/duration`).

use serde_json::Value;

use crate::registry::meta;

/// Upstream `duration.HumanDuration`.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Age of a timestamp, `<unknown>` when absent.
pub fn since(ts: Option<&Value>) -> String {
    match ts.and_then(Value::as_str).and_then(meta::parse_time) {
        None => "<unknown>".into(),
        Some(t) => {
            let d = jiff::Timestamp::now().as_second() - t.as_second();
            human_duration(d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_table() {
        // upstream TestHumanDuration cases
        for (secs, want) in [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 60 * 60, "47h"),
            (49 * 60 * 60, "2d1h"),
            ((8 * 24 + 2) * 60 * 60, "8d"),
            (367 * 24 * 60 * 60, "367d"),
            ((365 * 2 + 10) * 24 * 60 * 60, "2y10d"),
            ((365 * 8 + 10) * 24 * 60 * 60, "8y"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (120, "2m"),
            (5 * 3600 + 60 * 5, "5h5m"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }
}
