//! One log line per write to the API server.
//!
//! Every create, update, patch and delete the controllers send is logged at debug level
//! (`kcm -v=2`, where kube-controller-manager logs its writes too) with the verb, the
//! resource, the object key, why the controller wrote, and how it ended: `ok`, `error`, or
//! `fenced` when the leader's write fence refused it and it was never sent
//! ([`kcm_leaderelection::WriteFence`]). An operator can then
//! answer "who changed this object, and why?" from the logs alone:
//!
//! ```text
//! DEBUG kcm_controller::api_write: API write verb="update" resource="replicasets"
//!     object="default/web-5d4f8b9c7" reason="scale up from 3 to 5 for deployment default/web" result="ok"
//! ```
//!
//! ```
//! use kcm_controller::api_write::log_write;
//!
//! let outcome: Result<(), String> = Err("pods \"web-x1\" not found".into());
//! log_write(
//!     "delete",
//!     "pods",
//!     "default",
//!     "web-x1",
//!     "too many replicas for ReplicaSet default/web",
//!     outcome.as_ref().map(|_| ()),
//! );
//! ```

use std::fmt::Display;

/// Logs one finished write: `verb` (`create`, `update`, `patch`, `delete`), the plural
/// `resource` (with `/status` for the status subresource), the object's namespace and name
/// (for `generateName` creates that failed, the prefix), `reason`, and the result.
pub fn log_write<E: Display + ?Sized>(
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    reason: impl Display,
    result: Result<(), &E>,
) {
    // Callers pass lazy `format_args!` reasons; build nothing when -v=2 is off.
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let object = if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    };
    match result {
        Ok(()) => tracing::debug!(
            verb,
            resource,
            object = %object,
            reason = %reason,
            result = "ok",
            "API write"
        ),
        Err(error) => {
            let error = error.to_string();
            // A write refused by the leader's fence was never sent: say so.
            let result = if error.contains(kcm_leaderelection::FENCED_PREFIX) {
                "fenced"
            } else {
                "error"
            };
            tracing::debug!(
                verb,
                resource,
                object = %object,
                reason = %reason,
                result,
                error = %error,
                "API write"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};

    use super::*;

    /// Collects the fields of every event as `name=value` strings.
    #[derive(Default, Clone)]
    struct Fields(Arc<Mutex<Vec<Vec<String>>>>);

    struct Visitor<'a>(&'a mut Vec<String>);
    impl Visit for Visitor<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0.push(format!("{}={value:?}", field.name()));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.push(format!("{}={value}", field.name()));
        }
    }

    impl tracing::Subscriber for Fields {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let mut fields = vec![format!("level={}", event.metadata().level())];
            event.record(&mut Visitor(&mut fields));
            if let Ok(mut all) = self.0.lock() {
                all.push(fields);
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn logs_verb_resource_key_reason_and_result_at_debug() {
        let fields = Fields::default();
        tracing::subscriber::with_default(fields.clone(), || {
            log_write::<str>(
                "update",
                "replicasets",
                "default",
                "web-1",
                "scale up from 1 to 3",
                Ok(()),
            );
            log_write(
                "delete",
                "pods",
                "default",
                "web-1-x",
                "too many replicas",
                Err("conflict"),
            );
            let fenced = kube::Error::Service(Box::new(kcm_leaderelection::Fenced {
                lease: "kube-system/kcm".into(),
                why: "the lease is not held".into(),
            }));
            log_write(
                "create",
                "pods",
                "default",
                "web-1-",
                "too few replicas",
                Err(&fenced),
            );
        });
        let all = fields.0.lock().expect("lock").clone();
        assert_eq!(
            all,
            vec![
                vec![
                    "level=DEBUG",
                    "message=API write",
                    "verb=update",
                    "resource=replicasets",
                    "object=default/web-1",
                    "reason=scale up from 1 to 3",
                    "result=ok",
                ],
                vec![
                    "level=DEBUG",
                    "message=API write",
                    "verb=delete",
                    "resource=pods",
                    "object=default/web-1-x",
                    "reason=too many replicas",
                    "result=error",
                    "error=conflict",
                ],
                vec![
                    "level=DEBUG",
                    "message=API write",
                    "verb=create",
                    "resource=pods",
                    "object=default/web-1-",
                    "reason=too few replicas",
                    "result=fenced",
                    "error=ServiceError: write fenced: the lease kube-system/kcm may have passed \
                     to another holder (the lease is not held); not sent",
                ],
            ]
        );
    }
}
