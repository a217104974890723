//! Loud failures: a request kcm-testenv does not serve gets kube-apiserver's answer (Go's
//! plain-text 404, a 404/405/406/415 Status) and one warning in the log naming the method, the
//! path and what is missing, so a test author sees at once why a client got nowhere.

use http::Method;

use crate::registry::ResourceInfo;

/// Why a verb has no handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unserved {
    /// kube-apiserver does not serve it either (its answer is the same 405).
    Upstream,
    /// kube-apiserver serves it; kcm-testenv does not implement it.
    Testenv,
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
        Unserved::Upstream => format!("{target} does not serve the verb {verb:?}"),
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
