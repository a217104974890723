//! `resource.Quantity` canonical form (apimachinery `Quantity.CanonicalizeBytes`), with the
//! defaulting round-up to milli precision (`SetDefaults_ResourceList`), on kcm-util's
//! [`Quantity`], the one parser of the workspace.
//!
//! The stored form matters: the Deployment controller hashes the stored pod template, so
//! `cpu: 0.5` must be stored as `500m` and `memory: 1024Mi` as `1Gi`, exactly as upstream.

use kcm_util::quantity::Quantity;

/// The canonical string of a quantity after rounding up to milli precision, or `None`
/// when it does not parse (the original is then kept).
pub fn canonical(s: &str) -> Option<String> {
    let mut q: Quantity = s.parse().ok()?;
    q.round_up(-3);
    Some(q.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        // after upstream quantity_test.go TestQuantityParse/TestQuantityString cases
        for (input, want) in [
            ("0", "0"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("100m", "100m"),
            ("2000", "2k"),
            ("100", "100"),
            ("1", "1"),
            ("1.5", "1500m"),
            ("0.0001", "1m"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1.5Gi", "1536Mi"),
            ("512Ki", "512Ki"),
            ("100Mi", "100Mi"),
            ("1Ki", "1Ki"),
            ("0.5Ki", "512"),
            ("128M", "128M"),
            ("1000M", "1G"),
            ("1e3", "1e3"),
            // Go keeps the string it parsed when it is already canonical, the exponent's case
            // included (quantity.go, ParseQuantity)
            ("1E6", "1E6"),
            ("12e2", "1200"),
            ("-1", "-1"),
            ("-0.5", "-500m"),
            ("10G", "10G"),
        ] {
            assert_eq!(canonical(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(canonical("abc"), None);
        assert_eq!(canonical("1Xi"), None);
    }
}
