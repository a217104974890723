//! `--feature-gates`: the gates that a binary's controllers declare ([`FeatureGate`], with
//! [`crate::Controller::feature_gates`]) and the manager's own, resolved from the flag as
//! component-base resolves them (`featuregate/feature_gate.go`): upstream's default for a gate
//! not named, `AllAlpha`/`AllBeta` for every alpha/beta gate not named. Gates nobody declared
//! are accepted (a kubeadm manifest passes one list to every component) and named in one
//! warning at start.

use std::fmt;

use crate::options::parse_bool;

/// How mature a gate is (component-base's pre-release stage): `AllAlpha` and `AllBeta` set every
/// gate of their stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Alpha: off by default in upstream; `AllAlpha` sets it.
    Alpha,
    /// Beta: `AllBeta` sets it.
    Beta,
    /// Generally available.
    Ga,
    /// Deprecated.
    Deprecated,
}

/// A feature gate a controller consults, as upstream declares it (`pkg/features`): its name,
/// stage and default in the Kubernetes version the binary follows.
///
/// ```
/// use kcm_manager::{FeatureGate, Stage};
///
/// const POD_DELETION_COST: FeatureGate = FeatureGate {
///     name: "PodDeletionCost",
///     stage: Stage::Beta,
///     default: true,
/// };
/// assert_eq!(POD_DELETION_COST.to_string(), "PodDeletionCost");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGate {
    /// The name `--feature-gates` uses, e.g. `PodDeletionCost`.
    pub name: &'static str,
    /// Its stage.
    pub stage: Stage,
    /// Whether it is on when `--feature-gates` does not name it.
    pub default: bool,
}

impl fmt::Display for FeatureGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The manager's own gate: with it, a leader that is stopped gives its Lease up once its
/// controllers have stopped (alpha since v1.36, off).
pub(crate) const RELEASE_LEADER_ELECTION_LOCK_ON_EXIT: FeatureGate = FeatureGate {
    name: "ControllerManagerReleaseLeaderElectionLockOnExit",
    stage: Stage::Alpha,
    default: false,
};

/// The gates of a process after `--feature-gates`: one value for each declared gate.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    values: Vec<(&'static str, bool)>,
}

impl FeatureGates {
    /// Whether `gate` is on: as `--feature-gates` set it, else its default. A gate no
    /// registered controller declared is at its default (and `--feature-gates` naming it was
    /// warned about as unused).
    pub fn enabled(&self, gate: &FeatureGate) -> bool {
        self.values
            .iter()
            .find(|(name, _)| *name == gate.name)
            .map_or(gate.default, |(_, on)| *on)
    }
}

impl fmt::Debug for FeatureGates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.values.iter().map(|(name, on)| (name, on)))
            .finish()
    }
}

/// The declared gates once each, by name, in declaration order (the first declaration of a
/// name counts).
pub(crate) fn distinct(gates: impl IntoIterator<Item = FeatureGate>) -> Vec<FeatureGate> {
    let mut out: Vec<FeatureGate> = Vec::new();
    for gate in gates {
        if !out.iter().any(|g| g.name == gate.name) {
            out.push(gate);
        }
    }
    out
}

/// Parses `--feature-gates` (`name=bool,...`, pflag's mapStringBool) into pairs.
pub(crate) fn parse_pairs(value: &str) -> Result<Vec<(String, bool)>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, enabled) = pair
                .split_once('=')
                .ok_or_else(|| format!("missing bool value for {pair}"))?;
            let enabled = parse_bool(enabled.trim())?;
            Ok((name.trim().to_string(), enabled))
        })
        .collect()
}

/// The value of each `declared` gate under `--feature-gates` `value`, and the names given that
/// no declared gate has. `AllAlpha`/`AllBeta` set every alpha/beta gate that is not named.
pub(crate) fn resolve(
    declared: &[FeatureGate],
    value: Option<&str>,
) -> Result<(FeatureGates, Vec<String>), String> {
    let pairs = match value {
        Some(v) => parse_pairs(v)?,
        None => Vec::new(),
    };
    let given = |name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, on)| *on)
    };
    let values = declared
        .iter()
        .map(|gate| {
            let all = match gate.stage {
                Stage::Alpha => given("AllAlpha"),
                Stage::Beta => given("AllBeta"),
                Stage::Ga | Stage::Deprecated => None,
            };
            let on = given(gate.name).or(all).unwrap_or(gate.default);
            (gate.name, on)
        })
        .collect();
    let unused = pairs
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            !matches!(name.as_str(), "AllAlpha" | "AllBeta")
                && !declared.iter().any(|g| g.name == name)
        })
        .collect();
    Ok((FeatureGates { values }, unused))
}

/// `--feature-gates`'s help: which gates `binary` consults.
pub(crate) fn help(binary: &str, declared: &[FeatureGate]) -> String {
    let names: Vec<&str> = declared.iter().map(|g| g.name).collect();
    let list = match names.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no gates".to_string(),
    };
    format!(
        "A set of key=value pairs that describe feature gates for alpha/experimental features. \
         {binary} consults {list} (v1.37's defaults); other gates are checked for syntax and \
         named in one warning"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERMINATING: FeatureGate = FeatureGate {
        name: "DeploymentReplicaSetTerminatingReplicas",
        stage: Stage::Beta,
        default: true,
    };
    const STALE: FeatureGate = FeatureGate {
        name: "StaleControllerConsistencyReplicaSet",
        stage: Stage::Beta,
        default: true,
    };
    const GA: FeatureGate = FeatureGate {
        name: "SomethingGA",
        stage: Stage::Ga,
        default: true,
    };
    const DECLARED: &[FeatureGate] =
        &[TERMINATING, STALE, GA, RELEASE_LEADER_ELECTION_LOCK_ON_EXIT];

    fn on(gates: &FeatureGates) -> Vec<bool> {
        DECLARED.iter().map(|g| gates.enabled(g)).collect()
    }

    #[test]
    fn gates_resolve_as_component_base() {
        // (--feature-gates, terminating, stale, GA, release lock, unused names)
        type Case<'a> = (Option<&'a str>, [bool; 4], &'a [&'a str]);
        let cases: &[Case] = &[
            (None, [true, true, true, false], &[]),
            (
                Some("DeploymentReplicaSetTerminatingReplicas=false"),
                [false, true, true, false],
                &[],
            ),
            (
                Some(
                    "StaleControllerConsistencyReplicaSet=false,RotateKubeletServerCertificate=true",
                ),
                [true, false, true, false],
                &["RotateKubeletServerCertificate"],
            ),
            // A named gate wins over AllBeta, wherever it stands; GA gates ignore AllBeta.
            (
                Some("AllBeta=false,StaleControllerConsistencyReplicaSet=true"),
                [false, true, true, false],
                &[],
            ),
            (
                Some("StaleControllerConsistencyReplicaSet=true,AllBeta=false"),
                [false, true, true, false],
                &[],
            ),
            (
                Some("ControllerManagerReleaseLeaderElectionLockOnExit=true"),
                [true, true, true, true],
                &[],
            ),
            (
                Some("AllAlpha=true,AllBeta=false"),
                [false, false, true, true],
                &[],
            ),
            // pflag's map: the last value of a name counts.
            (
                Some("AllAlpha=true,AllAlpha=false, SomethingGA=false "),
                [true, true, false, false],
                &[],
            ),
        ];
        for (flag, want, unused) in cases {
            let (gates, rest) = resolve(DECLARED, *flag).expect("valid");
            assert_eq!(on(&gates), *want, "{flag:?}");
            assert_eq!(rest, *unused, "{flag:?}");
        }
        assert_eq!(
            resolve(DECLARED, Some("PodDeletionCost=maybe")),
            Err("strconv.ParseBool: parsing \"maybe\": invalid syntax".into())
        );
        assert_eq!(
            resolve(DECLARED, Some("PodDeletionCost")),
            Err("missing bool value for PodDeletionCost".into())
        );
    }

    #[test]
    fn an_undeclared_gate_is_at_its_default() {
        let (gates, _) = resolve(&[STALE], Some("SomethingGA=false")).expect("valid");
        assert!(gates.enabled(&GA));
        assert_eq!(
            format!("{gates:?}"),
            "{\"StaleControllerConsistencyReplicaSet\": true}"
        );
    }

    #[test]
    fn each_gate_is_declared_once_and_named_in_the_help() {
        let gates = distinct([
            TERMINATING,
            STALE,
            TERMINATING,
            RELEASE_LEADER_ELECTION_LOCK_ON_EXIT,
        ]);
        assert_eq!(
            gates,
            [TERMINATING, STALE, RELEASE_LEADER_ELECTION_LOCK_ON_EXIT]
        );
        assert_eq!(
            help("kcm", &gates),
            "A set of key=value pairs that describe feature gates for alpha/experimental \
             features. kcm consults DeploymentReplicaSetTerminatingReplicas, \
             StaleControllerConsistencyReplicaSet and \
             ControllerManagerReleaseLeaderElectionLockOnExit (v1.37's defaults); other gates \
             are checked for syntax and named in one warning"
        );
        assert!(help("x", &[GA]).contains(" x consults SomethingGA (v1.37's"));
    }
}
