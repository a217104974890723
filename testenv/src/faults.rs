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
//! | `compact-every` | Go duration | period of forced compactions (a watch resumed from before one gets 410; open watches keep going, as kube-apiserver's watch cache serves them) |
//! | `conflict` | probability | 409 `Conflict` with a concurrent change (default scope: verb `update`) |
//! | `conflict-bare` | probability | 409 `Conflict` and no change at all (default scope: verb `update`) |
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
//! A real 409 means another client changed the object first, and a watcher sees that change. So an
//! injected `conflict` on an `update` or `patch` of a named object comes with one: the object is
//! rewritten unchanged just before the 409 is answered (its resourceVersion moves, watchers get a
//! MODIFIED event). This needs the server, so it happens once the injector is installed with
//! [`FaultInjector::attach`]. `conflict-bare` answers 409 without the change: it models a
//! conflict whose watch event is lost, which a controller must survive without any event.
//!
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

mod hook;
mod injector;
mod spec;

pub use hook::FaultArgs;
pub use injector::{FaultDecision, FaultInjector, FaultTimerEvent, InjectedError};
pub use spec::{FAULT_NAMES, FaultKind, FaultRule, FaultSpec, FaultSpecError, Scope};
