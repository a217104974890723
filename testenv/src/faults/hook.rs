//! Wiring into the test API server: the request hook, timers applied to the server, and flags.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::injector::{FaultInjector, FaultTimerEvent};
use super::spec::{FaultKind, FaultSpec};
use crate::apiserver::{ApiServer, HookDecision, RequestHook, RequestInfo};
use crate::registry::RESOURCES;
use crate::registry::api_status::ApiError;
use crate::storage::key_of;

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
/// error is answered at once (the hook cannot do both). Installed this way (without
/// [`FaultInjector::attach`]) the injector knows no server, so its conflicts come without the
/// concurrent change (as `conflict-bare`).
impl RequestHook for FaultInjector {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        self.before_on(req, None)
    }

    fn metrics_text(&self) -> String {
        self.render_metrics()
    }
}

/// The hook [`FaultInjector::attach`] installs: the injector plus the server it may change.
/// Weak, since the server owns its hook.
#[derive(Debug)]
struct AttachedInjector {
    injector: Arc<FaultInjector>,
    server: Weak<ApiServer>,
}

impl RequestHook for AttachedInjector {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        let server = self.server.upgrade();
        self.injector.before_on(req, server.as_deref())
    }

    fn metrics_text(&self) -> String {
        self.injector.render_metrics()
    }
}

/// The concurrent change that comes with an injected `conflict` on an update or patch: another
/// client rewrites the named object unchanged, so its resourceVersion moves and watchers get a
/// MODIFIED event before the 409 is answered. Nothing happens for other verbs or a missing object.
fn touch_conflicting_object(server: &ApiServer, req: &RequestInfo) {
    if !matches!(req.verb, "update" | "patch") {
        return;
    }
    let Some(name) = req.name.as_deref() else {
        return;
    };
    let group = group_of_path(&req.path);
    // a custom resource: the served version the path names
    let version = req
        .path
        .strip_prefix("/apis/")
        .and_then(|rest| rest.split('/').nth(1))
        .unwrap_or("");
    let Some(info) = RESOURCES
        .iter()
        .find(|r| r.plural == req.resource && r.group == group)
        .or_else(|| server.crds.find(group, version, req.resource))
    else {
        return;
    };
    let key = key_of(req.namespace.as_deref().unwrap_or(""), name);
    server.store.write(|txn| {
        if let Some(current) = txn.get(info.storage, &key) {
            txn.put(info.storage, &key, current.value());
        }
    });
}

impl FaultInjector {
    /// [`RequestHook::before`](RequestHook::before) with the server to change
    /// for a `conflict` (`None`: every conflict is bare).
    fn before_on(&self, req: &RequestInfo, server: Option<&ApiServer>) -> HookDecision {
        if req.resource.is_empty() {
            return HookDecision::Continue;
        }
        let resource = match &req.subresource {
            Some(s) => format!("{}/{s}", req.resource),
            None => req.resource.to_string(),
        };
        let decision = self.decide(req.verb, &resource, is_write_verb(req.verb));
        if let Some(err) = decision.error {
            if err.kind == FaultKind::Conflict
                && let Some(server) = server
            {
                touch_conflicting_object(server, req);
            }
            let body = err.status_body(
                group_of_path(&req.path),
                req.resource,
                req.name.as_deref().unwrap_or(""),
            );
            let error = ApiError {
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
    /// Install the injector on a running server: as its request hook (an injected `conflict` then
    /// comes with a concurrent change of the object, see [`FaultKind::Conflict`]), with compactions and restarts
    /// applied from the timers (a restart closes every watch, as a kube-apiserver restart does; the
    /// storage and its revisions survive), and watch drops drawn once per second.
    ///
    /// Watch drops are drawn per server rather than per open watch here (a hit closes every watch)
    /// until the server's watch loop calls [`FaultInjector::roll_watch_drop`] itself.
    pub fn attach(
        self: &Arc<Self>,
        server: Arc<ApiServer>,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        *server.hook.write() = Some(Arc::new(AttachedInjector {
            injector: self.clone(),
            server: Arc::downgrade(&server),
        }) as Arc<dyn RequestHook>);
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
