//! The injector: per-request decisions from a seeded RNG, watch drops, timers and counters.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::spec::{FaultKind, FaultRule, FaultSpec};

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
            FaultKind::Conflict | FaultKind::BareConflict => (
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
    counters: [AtomicU64; 9],
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
    /// Random numbers are drawn in a fixed order (latency rules, then throttle, 503, 500, conflict and
    /// bare-conflict rules in spec order), only for rules whose scope matches, and the first error drawn
    /// wins.
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
            FaultKind::BareConflict,
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
            FaultKind::Conflict | FaultKind::BareConflict => (409, "Conflict", None),
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
