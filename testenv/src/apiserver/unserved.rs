//! Loud failures: a request kcm-testenv does not serve gets kube-apiserver's answer (Go's
//! plain-text 404, a 404/405/406/415 Status) and one warning in the log naming the method, the
//! path and what is missing, so a test author sees at once why a client got nowhere.

use http::Method;
use serde_json::json;

use super::restful;
use crate::registry::ResourceInfo;
use crate::registry::api_status::ApiError;

/// Why a verb has no handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unserved {
    /// kube-apiserver does not serve it either (its answer is the same 405).
    Upstream,
    /// An item path of a resource served only by collection verbs (`bindings`, the reviews):
    /// kube-apiserver registers no route for it (a 404).
    NoItemRoutes,
    /// A watch of a resource that is only listed (`componentstatuses`): kube-apiserver's 405
    /// naming the resource.
    WatchOfList,
    /// kube-apiserver serves it; kcm-testenv does not implement it.
    Testenv,
}

/// The answer to a verb without a handler: kube-apiserver's own where it refuses the verb too
/// (go-restful's 405 or 404 for a built-in resource, the CRD handler's 405 for a custom one,
/// `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go` for the list-only watch), a 405
/// naming kcm-testenv where kube-apiserver would have served it.
pub fn refusal(res: &ResourceInfo, verb: &str, sub: Option<&str>, why: Unserved) -> ApiError {
    match why {
        Unserved::Upstream if res.is_custom() => restful::method_not_supported(res, verb),
        Unserved::Upstream => restful::method_not_allowed(),
        Unserved::NoItemRoutes => ApiError::path_not_found(),
        Unserved::WatchOfList => ApiError::new(
            405,
            "MethodNotAllowed",
            format!(
                "watch is not supported on resources of kind {:?}",
                res.plural
            ),
        )
        .with_details(json!({"kind": res.plural})),
        Unserved::Testenv => {
            let target = match sub {
                Some(s) => format!("{}/{s}", res.plural),
                None => res.plural.to_string(),
            };
            ApiError::new(
                405,
                "MethodNotAllowed",
                format!("{verb} is not supported on resources of kind {target:?} by kcm-testenv"),
            )
        }
    }
}

/// Log a request kcm-testenv did not serve.
pub fn warn(method: &Method, path: &str, code: u16, what: &str) {
    tracing::warn!(
        %method,
        path,
        status = code,
        "kcm-testenv did not serve {method} {path} ({code}): {what}"
    );
}

/// What is missing when a verb has no handler.
pub fn verb(res: &ResourceInfo, verb: &str, sub: Option<&str>, why: Unserved) -> String {
    let target = match sub {
        Some(s) => format!("{}/{s}", res.qualified_resource()),
        None => res.qualified_resource(),
    };
    match why {
        Unserved::Upstream | Unserved::WatchOfList => {
            format!("{target} does not serve the verb {verb:?}")
        }
        Unserved::NoItemRoutes => format!("{target} is served by collection verbs only"),
        Unserved::Testenv => format!(
            "the verb {verb:?} of {target} is served by kube-apiserver but not implemented by kcm-testenv"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn texts_name_the_resource_and_the_verb() {
        let ns = registry::find("", "v1", "namespaces").expect("namespaces");
        assert_eq!(
            verb(ns, "deletecollection", None, Unserved::Upstream),
            "namespaces does not serve the verb \"deletecollection\""
        );
        let d = registry::find("apps", "v1", "deployments").expect("deployments");
        assert_eq!(
            verb(d, "create", Some("rollback"), Unserved::Testenv),
            "the verb \"create\" of deployments.apps/rollback is served by kube-apiserver but not implemented by kcm-testenv"
        );
    }
}
