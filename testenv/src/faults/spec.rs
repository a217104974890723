//! The fault spec: kinds, scopes, rules and the parser.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use kcm_util::go_duration::{ParseDurationError, parse_go_duration};

/// The kinds of fault, also the `kind` label of `testenv_faults_injected_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A watch closed by the server.
    WatchDrop,
    /// A forced compaction of the watch history.
    Compact,
    /// A 409 Conflict that comes with a concurrent change: before answering, the object named
    /// by the request is rewritten unchanged by "another client", so its resourceVersion moves
    /// and watchers get a MODIFIED event, as when a real write loses a race.
    Conflict,
    /// A bare 409 Conflict: nothing changed on the server. On a real cluster this is what a
    /// client sees when the change it lost against never reaches its watch (a lost watch
    /// event); kept to test that case on purpose.
    BareConflict,
    /// A 500 InternalError.
    Error500,
    /// A 503 ServiceUnavailable.
    Error503,
    /// A 429 TooManyRequests.
    Throttle,
    /// Added latency.
    Latency,
    /// A simulated server restart.
    Restart,
}

impl FaultKind {
    /// Every kind, in metrics order.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::WatchDrop,
        FaultKind::Compact,
        FaultKind::Conflict,
        FaultKind::BareConflict,
        FaultKind::Error500,
        FaultKind::Error503,
        FaultKind::Throttle,
        FaultKind::Latency,
        FaultKind::Restart,
    ];

    /// The metric label value.
    pub fn label(self) -> &'static str {
        match self {
            FaultKind::WatchDrop => "watch-drop",
            FaultKind::Compact => "compact",
            FaultKind::Conflict => "conflict",
            FaultKind::BareConflict => "conflict-bare",
            FaultKind::Error500 => "error500",
            FaultKind::Error503 => "error503",
            FaultKind::Throttle => "throttle",
            FaultKind::Latency => "latency",
            FaultKind::Restart => "restart",
        }
    }

    pub(crate) fn spec_name(self) -> &'static str {
        match self {
            FaultKind::Compact => "compact-every",
            FaultKind::Restart => "restart-every",
            other => other.label(),
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Names accepted in a spec.
pub const FAULT_NAMES: &[&str] = &[
    "watch-drop",
    "compact-every",
    "conflict",
    "conflict-bare",
    "error500",
    "error503",
    "throttle",
    "latency",
    "restart-every",
];

const VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "read",
    "write",
];

/// A spec that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultSpecError {
    /// The name is not a known fault.
    #[error("unknown fault {name:?} in {entry:?}; known faults: {}", FAULT_NAMES.join(", "))]
    UnknownFault {
        /// The name given.
        name: String,
        /// The whole entry.
        entry: String,
    },
    /// An entry without `=value`.
    #[error("fault entry {0:?} has no value; expected name=value")]
    MissingValue(String),
    /// A probability outside `[0, 1]` or not a number.
    #[error("fault {name}: probability {value:?} must be a number in [0, 1]")]
    BadProbability {
        /// The fault.
        name: String,
        /// The value given.
        value: String,
    },
    /// A malformed duration.
    #[error("fault {name}: {source}")]
    BadDuration {
        /// The fault.
        name: String,
        /// The parse error.
        #[source]
        source: ParseDurationError,
    },
    /// A period of zero.
    #[error("fault {0}: the period must be above zero")]
    ZeroPeriod(String),
    /// `MIN..MAX` with MIN above MAX.
    #[error("fault latency: minimum {min:?} is above maximum {max:?}")]
    BadLatencyRange {
        /// The minimum.
        min: Duration,
        /// The maximum.
        max: Duration,
    },
    /// An unknown verb or a scope on a timer.
    #[error("fault {name}: invalid scope {scope:?}: {reason}")]
    BadScope {
        /// The fault.
        name: String,
        /// The scope text.
        scope: String,
        /// What is wrong.
        reason: String,
    },
    /// A timer given twice.
    #[error("fault {0} is given more than once")]
    Duplicate(String),
}

/// Which requests a rule applies to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Verbs (empty: any).
    pub verbs: Vec<String>,
    /// Resources (empty: any).
    pub resources: Vec<String>,
}

impl Scope {
    /// Whether a request matches.
    pub fn matches(&self, verb: &str, resource: &str, is_write: bool) -> bool {
        let verb_ok = self.verbs.is_empty()
            || self.verbs.iter().any(|v| match v.as_str() {
                "write" => is_write,
                "read" => !is_write,
                v => v == verb,
            });
        let resource_ok = self.resources.is_empty()
            || self.resources.iter().any(|r| {
                r == resource
                    || (!r.contains('/')
                        && resource.split_once('/').is_some_and(|(main, _)| main == r))
            });
        verb_ok && resource_ok
    }

    fn parse(name: &str, text: &str) -> Result<Self, FaultSpecError> {
        let bad = |reason: String| FaultSpecError::BadScope {
            name: name.to_string(),
            scope: text.to_string(),
            reason,
        };
        let (verbs, resources) = text.split_once(':').unwrap_or((text, ""));
        let list = |s: &str| -> Vec<String> {
            if s.trim() == "*" {
                return Vec::new();
            }
            s.split('|')
                .map(|x| x.trim().to_ascii_lowercase())
                .filter(|x| !x.is_empty())
                .collect()
        };
        let verbs = list(verbs);
        if let Some(v) = verbs.iter().find(|v| !VERBS.contains(&v.as_str())) {
            return Err(bad(format!(
                "unknown verb {v:?}; known verbs: {}",
                VERBS.join(", ")
            )));
        }
        Ok(Scope {
            verbs,
            resources: list(resources),
        })
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |l: &[String]| {
            if l.is_empty() {
                "*".to_string()
            } else {
                l.join("|")
            }
        };
        write!(f, "{}:{}", join(&self.verbs), join(&self.resources))
    }
}

/// One parsed entry of a spec.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultRule {
    /// A fault drawn with probability `p` (per request, or per watch-second for watch-drop).
    Probability {
        /// WatchDrop, Conflict, Error500, Error503 or Throttle.
        kind: FaultKind,
        /// In `[0, 1]`.
        p: f64,
        /// Which requests.
        scope: Scope,
    },
    /// Added latency, uniform in `[min, max]`.
    Latency {
        /// Minimum.
        min: Duration,
        /// Maximum.
        max: Duration,
        /// Which requests.
        scope: Scope,
    },
    /// A periodic event (Compact or Restart).
    Every {
        /// Compact or Restart.
        kind: FaultKind,
        /// The period.
        period: Duration,
    },
}

/// A parsed fault specification. The default is no faults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSpec {
    /// The rules, in spec order.
    pub rules: Vec<FaultRule>,
}

impl FaultSpec {
    /// Parse a comma-separated spec (see the module documentation). An empty string means no faults.
    pub fn parse(text: &str) -> Result<Self, FaultSpecError> {
        let mut rules = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, rest) = entry
                .split_once('=')
                .ok_or_else(|| FaultSpecError::MissingValue(entry.to_string()))?;
            let name = name.trim();
            let (value, scope) = match rest.split_once('@') {
                Some((v, s)) => (v.trim(), Some(s.trim())),
                None => (rest.trim(), None),
            };
            if value.is_empty() {
                return Err(FaultSpecError::MissingValue(entry.to_string()));
            }
            let duration = |v: &str| {
                parse_go_duration(v).map_err(|source| FaultSpecError::BadDuration {
                    name: name.to_string(),
                    source,
                })
            };
            let scope_of = |kind: FaultKind| -> Result<Scope, FaultSpecError> {
                match scope {
                    Some(s) => Scope::parse(name, s),
                    None if matches!(kind, FaultKind::Conflict | FaultKind::BareConflict) => {
                        Ok(Scope {
                            verbs: vec!["update".into()],
                            resources: Vec::new(),
                        })
                    }
                    None if kind == FaultKind::WatchDrop => Ok(Scope {
                        verbs: vec!["watch".into()],
                        resources: Vec::new(),
                    }),
                    None => Ok(Scope::default()),
                }
            };
            let rule = match name {
                "watch-drop" | "conflict" | "conflict-bare" | "error500" | "error503"
                | "throttle" => {
                    let kind = match name {
                        "watch-drop" => FaultKind::WatchDrop,
                        "conflict" => FaultKind::Conflict,
                        "conflict-bare" => FaultKind::BareConflict,
                        "error500" => FaultKind::Error500,
                        "error503" => FaultKind::Error503,
                        _ => FaultKind::Throttle,
                    };
                    let p: f64 = value.parse().map_err(|_| FaultSpecError::BadProbability {
                        name: name.to_string(),
                        value: value.to_string(),
                    })?;
                    if !(0.0..=1.0).contains(&p) {
                        return Err(FaultSpecError::BadProbability {
                            name: name.to_string(),
                            value: value.to_string(),
                        });
                    }
                    FaultRule::Probability {
                        kind,
                        p,
                        scope: scope_of(kind)?,
                    }
                }
                "latency" => {
                    let (min, max) = match value.split_once("..") {
                        Some((a, b)) => (duration(a.trim())?, duration(b.trim())?),
                        None => {
                            let d = duration(value)?;
                            (d, d)
                        }
                    };
                    if min > max {
                        return Err(FaultSpecError::BadLatencyRange { min, max });
                    }
                    FaultRule::Latency {
                        min,
                        max,
                        scope: scope_of(FaultKind::Latency)?,
                    }
                }
                "compact-every" | "restart-every" => {
                    let kind = if name == "compact-every" {
                        FaultKind::Compact
                    } else {
                        FaultKind::Restart
                    };
                    if let Some(s) = scope {
                        return Err(FaultSpecError::BadScope {
                            name: name.to_string(),
                            scope: s.to_string(),
                            reason: "timers apply to the whole server and take no scope".into(),
                        });
                    }
                    let period = duration(value)?;
                    if period.is_zero() {
                        return Err(FaultSpecError::ZeroPeriod(name.to_string()));
                    }
                    if rules
                        .iter()
                        .any(|r| matches!(r, FaultRule::Every { kind: k, .. } if *k == kind))
                    {
                        return Err(FaultSpecError::Duplicate(name.to_string()));
                    }
                    FaultRule::Every { kind, period }
                }
                _ => {
                    return Err(FaultSpecError::UnknownFault {
                        name: name.to_string(),
                        entry: entry.to_string(),
                    });
                }
            };
            rules.push(rule);
        }
        Ok(FaultSpec { rules })
    }

    /// True when no rule is configured.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The period of a timer kind (Compact or Restart).
    pub fn every(&self, kind: FaultKind) -> Option<Duration> {
        self.rules.iter().find_map(|r| match r {
            FaultRule::Every { kind: k, period } if *k == kind => Some(*period),
            _ => None,
        })
    }
}

impl FromStr for FaultSpec {
    type Err = FaultSpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FaultSpec::parse(s)
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, rule) in self.rules.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match rule {
                FaultRule::Probability { kind, p, scope } => {
                    write!(f, "{}={p}@{scope}", kind.spec_name())?
                }
                FaultRule::Latency { min, max, scope } => write!(
                    f,
                    "latency={}ns..{}ns@{scope}",
                    min.as_nanos(),
                    max.as_nanos()
                )?,
                FaultRule::Every { kind, period } => {
                    write!(f, "{}={}ns", kind.spec_name(), period.as_nanos())?
                }
            }
        }
        Ok(())
    }
}
