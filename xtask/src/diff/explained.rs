//! Differences between upstream and kcm that are intended or understood, each with its reason
//! (docs/fidelity.md says more). A difference is explained when its description contains the
//! pattern.

/// `(pattern in the difference's description, reason)`.
pub const EXPLAINED: &[(&str, &str)] = &[
    (
        "writes ",
        "measured, not matched: how many status writes (and 409s) a controller makes depends on \
         how many intermediate states it observes; issue 15 sets kcm's target at or below upstream's",
    ),
    (
        "event Normal ScalingReplicaSet",
        "rollout step sizes follow pod readiness timing (how many pods became available between \
         two syncs); every step keeps the same maxSurge/maxUnavailable bounds (the invariant \
         checker) and unit tests pin each decision to upstream's",
    ),
    (
        "order of ReplicaSet scale writes",
        "rollout step sizes follow pod readiness timing (see ScalingReplicaSet)",
    ),
    (
        ".metadata.generation",
        "one per ReplicaSet scale write: follows the number of rollout steps (timing)",
    ),
    (
        ".status.observedGeneration",
        "one per ReplicaSet scale write: follows the number of rollout steps (timing)",
    ),
];

/// The reason a difference is explained, if it is.
pub fn reason(what: &str) -> Option<&'static str> {
    EXPLAINED
        .iter()
        .find(|(pattern, _)| what.contains(pattern))
        .map(|(_, reason)| *reason)
}
