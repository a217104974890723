//! Fault injection for the test API server: dropped watches, compactions, conflicts, 5xx, throttling,
//! latency and restarts, decided by a seeded RNG so that a run can be reproduced.
//!
//! # Spec syntax
//!
//! A comma-separated list of `name=value[@verbs[:resources]]`:
//!
//! | name | value | effect |
//! |---|---|---|
//! | `watch-drop` | probability | chance, per open watch and per second, that the server closes the watch |
//! | `compact-every` | Go duration | period of forced history compactions (watchers then get 410) |
//! | `conflict` | probability | 409 `Conflict` (default scope: verb `update`) |
//! | `error500` | probability | 500 `InternalError` |
//! | `error503` | probability | 503 `ServiceUnavailable` |
//! | `throttle` | probability | 429 `TooManyRequests` with `Retry-After: 1` |
//! | `latency` | `MIN..MAX` or one duration | delay added before answering, uniform in `[MIN, MAX]` |
//! | `restart-every` | Go duration | period of simulated server restarts |
//!
//! The optional scope restricts a rule: `verbs` and `resources` are `|`-separated lists, `*` or empty
//! meaning any. Verbs are the Kubernetes request verbs (`get`, `list`, `watch`, `create`, `update`,
//! `patch`, `delete`, `deletecollection`) plus `read` and `write` (any non-mutating / mutating verb).
//! A resource `pods` matches `pods` and its subresources (`pods/status`); `pods/status` matches only that.
//! Examples: `conflict=0.1@update:pods`, `error503=0.05@*:replicasets|deployments`,
//! `latency=5ms..50ms@list|watch`, `throttle=0.2@write`. The same name may appear several times with
//! different scopes, except the two timers.
//!
//! ```
//! use kcm_testenv::faults::{FaultInjector, FaultSpec};
//! let spec = FaultSpec::parse("conflict=1@update:pods,latency=1ms..2ms").unwrap();
//! let injector = FaultInjector::new(spec, 42);
//! let d = injector.decide("update", "pods", true);
//! assert_eq!(d.error.as_ref().map(|e| e.code), Some(409));
//! assert!(d.latency >= std::time::Duration::from_millis(1));
//! assert!(injector.decide("get", "pods", false).error.is_none());
//! assert!(injector.render_metrics().contains("testenv_faults_injected_total{kind=\"conflict\"} 1"));
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::sim::parse_go_duration;

/// The kinds of fault, also the `kind` label of `testenv_faults_injected_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A watch closed by the server.
    WatchDrop,
    /// A forced compaction of the watch history.
    Compact,
    /// A 409 Conflict.
    Conflict,
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
    pub const ALL: [FaultKind; 8] = [
        FaultKind::WatchDrop,
        FaultKind::Compact,
        FaultKind::Conflict,
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
            FaultKind::Error500 => "error500",
            FaultKind::Error503 => "error503",
            FaultKind::Throttle => "throttle",
            FaultKind::Latency => "latency",
            FaultKind::Restart => "restart",
        }
    }

    fn spec_name(self) -> &'static str {
        match self {
            FaultKind::Compact => "compact-every",
            FaultKind::Restart => "restart-every",
            other => other.label(),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Names accepted in a spec.
pub const FAULT_NAMES: &[&str] = &[
    "watch-drop",
    "compact-every",
    "conflict",
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
        source: crate::sim::DurationError,
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
                    None if kind == FaultKind::Conflict => Ok(Scope {
                        verbs: vec!["update".into()],
                        resources: Vec::new(),
                    }),
                    None if kind == FaultKind::WatchDrop => Ok(Scope {
                        verbs: vec!["watch".into()],
                        resources: Vec::new(),
                    }),
                    None => Ok(Scope::default()),
                }
            };
            let rule = match name {
                "watch-drop" | "conflict" | "error500" | "error503" | "throttle" => {
                    let kind = match name {
                        "watch-drop" => FaultKind::WatchDrop,
                        "conflict" => FaultKind::Conflict,
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

/// An error response to send instead of serving a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedError {
    /// Which fault.
    pub kind: FaultKind,
    /// HTTP status code (409, 500, 503, 429).
    pub code: u16,
    /// metav1 Status reason (`Conflict`, `InternalError`, `ServiceUnavailable`, `TooManyRequests`).
    pub reason: &'static str,
    /// Value of the `Retry-After` header, if any.
    pub retry_after_seconds: Option<u32>,
}

const INJECTED_CAUSE: &str = "injected fault (kcm-testenv)";

impl InjectedError {
    /// The metav1 Status body, as kube-apiserver builds it for this error. `group` is the API group of the
    /// resource (`""` for core), `resource` its plural and `name` the object name (`""` for collections).
    pub fn status_body(&self, group: &str, resource: &str, name: &str) -> Value {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let (message, details) = match self.kind {
            FaultKind::Conflict => (
                format!(
                    "Operation cannot be fulfilled on {qualified} \"{name}\": the object has been modified; \
                     please apply your changes to the latest version and try again"
                ),
                Some(json!({"name": name, "group": group, "kind": resource})),
            ),
            FaultKind::Throttle => (
                "Too many requests, please try again later.".to_string(),
                Some(json!({"retryAfterSeconds": self.retry_after_seconds.unwrap_or(1)})),
            ),
            FaultKind::Error503 => (
                format!("the server is currently unable to handle the request ({INJECTED_CAUSE})"),
                None,
            ),
            _ => (
                format!("Internal error occurred: {INJECTED_CAUSE}"),
                Some(json!({"causes": [{"message": INJECTED_CAUSE}]})),
            ),
        };
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": self.reason,
            "code": self.code,
        });
        if let (Some(d), Some(obj)) = (details, body.as_object_mut()) {
            obj.insert("details".into(), d);
        }
        body
    }
}

/// What to do with one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultDecision {
    /// Delay to add before answering (zero: none).
    pub latency: Duration,
    /// Answer with this error instead of serving the request.
    pub error: Option<InjectedError>,
}

/// A timer event the server must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTimerEvent {
    /// Compact the watch history now (open watches older than the compaction get 410).
    Compact,
    /// Simulate a restart now (close every watch and connection, keep storage and RVs).
    Restart,
}

/// Decides faults per request from a [`FaultSpec`] and a seed, and counts what it injected.
///
/// With the same seed, spec and sequence of calls the decisions are the same.
#[derive(Debug)]
pub struct FaultInjector {
    spec: RwLock<FaultSpec>,
    rng: Mutex<StdRng>,
    counters: [AtomicU64; 8],
    spec_version: watch::Sender<u64>,
    events: broadcast::Sender<FaultTimerEvent>,
}

impl FaultInjector {
    /// A new injector.
    pub fn new(spec: FaultSpec, seed: u64) -> Self {
        let (spec_version, _) = watch::channel(0);
        let (events, _) = broadcast::channel(16);
        FaultInjector {
            spec: RwLock::new(spec),
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
            counters: Default::default(),
            spec_version,
            events,
        }
    }

    /// The current spec.
    pub fn spec(&self) -> FaultSpec {
        self.spec.read().clone()
    }

    /// Replace the spec while running; timers restart from now with the new periods.
    pub fn set_spec(&self, spec: FaultSpec) {
        *self.spec.write() = spec;
        self.spec_version.send_modify(|v| *v += 1);
    }

    /// Decide the faults for one request. `verb` is the Kubernetes verb, `resource` the plural with an
    /// optional `/subresource`, `is_write` whether the request mutates.
    ///
    /// Random numbers are drawn in a fixed order (latency rules, then throttle, 503, 500 and conflict rules
    /// in spec order), only for rules whose scope matches, and the first error drawn wins.
    pub fn decide(&self, verb: &str, resource: &str, is_write: bool) -> FaultDecision {
        let spec = self.spec.read();
        if spec.rules.is_empty() {
            return FaultDecision::default();
        }
        let mut rng = self.rng.lock();
        let mut decision = FaultDecision::default();
        for rule in &spec.rules {
            if let FaultRule::Latency { min, max, scope } = rule
                && scope.matches(verb, resource, is_write)
            {
                let extra = if max > min {
                    let span = (*max - *min).as_nanos() as u64;
                    Duration::from_nanos(rng.random_range(0..=span))
                } else {
                    Duration::ZERO
                };
                decision.latency += *min + extra;
            }
        }
        if !decision.latency.is_zero() {
            self.bump(FaultKind::Latency);
        }
        for kind in [
            FaultKind::Throttle,
            FaultKind::Error503,
            FaultKind::Error500,
            FaultKind::Conflict,
        ] {
            for rule in &spec.rules {
                let FaultRule::Probability { kind: k, p, scope } = rule else {
                    continue;
                };
                if *k != kind || !scope.matches(verb, resource, is_write) {
                    continue;
                }
                let hit = rng.random_bool(*p);
                if hit && decision.error.is_none() {
                    self.bump(kind);
                    decision.error = Some(Self::error_for(kind));
                }
            }
        }
        decision
    }

    fn error_for(kind: FaultKind) -> InjectedError {
        let (code, reason, retry) = match kind {
            FaultKind::Conflict => (409, "Conflict", None),
            FaultKind::Error503 => (503, "ServiceUnavailable", None),
            FaultKind::Throttle => (429, "TooManyRequests", Some(1)),
            _ => (500, "InternalError", None),
        };
        InjectedError {
            kind,
            code,
            reason,
            retry_after_seconds: retry,
        }
    }

    /// The configured chance per second that an open watch on `resource` is dropped (0 when none).
    pub fn watch_drop_per_second(&self, resource: &str) -> f64 {
        let spec = self.spec.read();
        let keep: f64 = spec
            .rules
            .iter()
            .filter_map(|r| match r {
                FaultRule::Probability {
                    kind: FaultKind::WatchDrop,
                    p,
                    scope,
                } if scope.matches("watch", resource, false) => Some(1.0 - p),
                _ => None,
            })
            .product();
        1.0 - keep
    }

    /// Draw, for one open watch on `resource` and one elapsed second, whether to drop it. Counts drops.
    pub fn roll_watch_drop(&self, resource: &str) -> bool {
        let p = self.watch_drop_per_second(resource);
        if p <= 0.0 {
            return false;
        }
        let hit = self.rng.lock().random_bool(p.min(1.0));
        if hit {
            self.bump(FaultKind::WatchDrop);
        }
        hit
    }

    /// Subscribe to timer events (compactions and restarts).
    pub fn subscribe(&self) -> broadcast::Receiver<FaultTimerEvent> {
        self.events.subscribe()
    }

    /// Run the compact-every / restart-every timers until `shutdown`, sending events to subscribers
    /// and counting them. Spawn it once: `tokio::spawn(injector.clone().run_timers(token))`.
    pub async fn run_timers(self: Arc<Self>, shutdown: CancellationToken) {
        let mut changes = self.spec_version.subscribe();
        loop {
            let (compact, restart) = {
                let spec = self.spec.read();
                (
                    spec.every(FaultKind::Compact),
                    spec.every(FaultKind::Restart),
                )
            };
            let start = tokio::time::Instant::now();
            let mut next_compact = compact.map(|p| start + p);
            let mut next_restart = restart.map(|p| start + p);
            loop {
                let next = match (next_compact, next_restart) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let sleep = async {
                    match next {
                        Some(t) => tokio::time::sleep_until(t).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_err() { return; }
                        break;
                    }
                    _ = sleep => {
                        let now = tokio::time::Instant::now();
                        if let (Some(t), Some(p)) = (next_compact, compact) && t <= now {
                            self.bump(FaultKind::Compact);
                            let _ = self.events.send(FaultTimerEvent::Compact);
                            next_compact = Some(now + p);
                        }
                        if let (Some(t), Some(p)) = (next_restart, restart) && t <= now {
                            self.bump(FaultKind::Restart);
                            let _ = self.events.send(FaultTimerEvent::Restart);
                            next_restart = Some(now + p);
                        }
                    }
                }
            }
        }
    }

    fn bump(&self, kind: FaultKind) {
        self.counters[kind.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// How many faults of a kind were injected.
    pub fn count(&self, kind: FaultKind) -> u64 {
        self.counters[kind.index()].load(Ordering::Relaxed)
    }

    /// The counters as Prometheus text lines for `/metrics`.
    pub fn render_metrics(&self) -> String {
        let mut out = String::from(
            "# HELP testenv_faults_injected_total Faults injected by the test server, by kind.\n\
             # TYPE testenv_faults_injected_total counter\n",
        );
        for kind in FaultKind::ALL {
            out.push_str(&format!(
                "testenv_faults_injected_total{{kind=\"{}\"}} {}\n",
                kind.label(),
                self.count(kind)
            ));
        }
        out
    }
}

/// The API group named by a request path (`/apis/apps/v1/...` → `apps`, `/api/v1/...` → `""`).
fn group_of_path(path: &str) -> &str {
    path.strip_prefix("/apis/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or("")
}

fn is_write_verb(verb: &str) -> bool {
    matches!(
        verb,
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

/// The injector as the API server's request hook. Non-resource requests (discovery, `/version`,
/// `/healthz`, `/metrics`) are never faulted. When a request draws both latency and an error, the
/// error is answered at once (the hook cannot do both).
impl crate::server::RequestHook for FaultInjector {
    fn before(&self, req: &crate::server::RequestInfo) -> crate::server::HookDecision {
        use crate::server::HookDecision;
        if req.resource.is_empty() {
            return HookDecision::Continue;
        }
        let resource = match &req.subresource {
            Some(s) => format!("{}/{s}", req.resource),
            None => req.resource.to_string(),
        };
        let decision = self.decide(req.verb, &resource, is_write_verb(req.verb));
        if let Some(err) = decision.error {
            let body = err.status_body(
                group_of_path(&req.path),
                req.resource,
                req.name.as_deref().unwrap_or(""),
            );
            let error = crate::status::ApiError {
                code: err.code,
                reason: err.reason,
                message: body["message"].as_str().unwrap_or_default().to_string(),
                details: body.get("details").cloned(),
                metadata: None,
            };
            return HookDecision::Fail {
                error,
                retry_after: err.retry_after_seconds.map(u64::from),
            };
        }
        if decision.latency.is_zero() {
            HookDecision::Continue
        } else {
            HookDecision::Delay(decision.latency)
        }
    }
}

impl FaultInjector {
    /// Install the injector on a running server: as its request hook, with compactions and restarts
    /// applied from the timers (a restart closes every watch, as a kube-apiserver restart does; the
    /// storage and its revisions survive), and watch drops drawn once per second.
    ///
    /// Watch drops are drawn per server rather than per open watch here (a hit closes every watch)
    /// until the server's watch loop calls [`FaultInjector::roll_watch_drop`] itself.
    pub fn attach(
        self: &Arc<Self>,
        server: Arc<crate::server::ApiServer>,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        *server.hook.write() = Some(self.clone() as Arc<dyn crate::server::RequestHook>);
        let timers = tokio::spawn(self.clone().run_timers(shutdown.clone()));
        let injector = self.clone();
        let mut events = self.subscribe();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    ev = events.recv() => match ev {
                        Ok(FaultTimerEvent::Compact) => server.store.compact(),
                        Ok(FaultTimerEvent::Restart) => server.store.drop_watches(),
                        Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                    _ = tick.tick() => {
                        if injector.roll_watch_drop("") {
                            server.store.drop_watches();
                        }
                    }
                }
            }
            let _ = timers.await;
        })
    }
}

/// Command-line flags for fault injection, to `#[command(flatten)]` into a binary's arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct FaultArgs {
    /// Faults to inject, e.g. `conflict=0.1@update:pods,latency=5ms..50ms,compact-every=30s`.
    #[arg(long, value_parser = FaultSpec::parse)]
    pub faults: Option<FaultSpec>,
    /// Seed of the fault RNG (same seed + same requests = same faults).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl FaultArgs {
    /// The injector, or None without `--faults`.
    pub fn injector(&self) -> Option<Arc<FaultInjector>> {
        self.faults
            .clone()
            .map(|spec| Arc::new(FaultInjector::new(spec, self.seed)))
    }
}
