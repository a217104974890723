//! Differences between upstream and kcm that are intended or understood, each with its reason
//! (docs/fidelity.md says more). A difference is explained when its description contains the
//! pattern.

/// `(pattern in the difference's description, reason)`.
pub const EXPLAINED: &[(&str, &str)] = &[];

/// The reason a difference is explained, if it is.
pub fn reason(what: &str) -> Option<&'static str> {
    EXPLAINED
        .iter()
        .find(|(pattern, _)| what.contains(pattern))
        .map(|(_, reason)| *reason)
}
