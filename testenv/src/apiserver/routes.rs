//! URL → route: which endpoint, which resource, namespace, name and subresource.

use std::collections::HashMap;

use crate::registry::{ResourceInfo, ServedResources, resources::is_builtin_group};

/// A resource request target.
#[derive(Debug, Clone)]
pub struct Target {
    /// The resource.
    pub res: &'static ResourceInfo,
    /// Namespace from the URL (`None` for all-namespaces or cluster-scoped requests).
    pub namespace: Option<String>,
    /// Object name for item requests.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, `binding`, `finalize`).
    pub sub: Option<String>,
}

/// A parsed route.
#[derive(Debug, Clone)]
pub enum Route {
    /// `/version`
    Version,
    /// `/healthz`, `/livez`, `/readyz` (and sub-paths)
    Health,
    /// `/metrics`
    Metrics,
    /// `/api`
    Api,
    /// `/apis`
    Apis,
    /// `/apis/{group}`
    ApiGroup(String),
    /// `/api/v1` or `/apis/{group}/{version}`
    ResourceList(String, String),
    /// `/openapi/v2`
    OpenApiV2,
    /// `/openapi/v3` and below
    OpenApiV3,
    /// A resource request.
    Resource(Target),
    /// Nothing here, under an API prefix that is served (`/api`, `/apis/{served group}`,
    /// `/version`): a 404 Status.
    NotFound,
    /// No handler at all (`/nope`, a group that is not served): Go's plain-text 404, as
    /// kube-apiserver's last handler answers.
    NoHandler,
}

/// Parse a request path against the resources served now.
pub fn parse(path: &str, served: &ServedResources) -> Route {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz", ..] | ["livez", ..] | ["readyz", ..] => Route::Health,
        ["metrics"] => Route::Metrics,
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3", ..] => Route::OpenApiV3,
        ["api", "v1"] => Route::ResourceList(String::new(), "v1".into()),
        ["apis", g] if served.serves_group(g) => Route::ApiGroup(g.to_string()),
        ["apis", g, v] if served.serves_group_version(g, v) => {
            Route::ResourceList(g.to_string(), v.to_string())
        }
        ["api", "v1", rest @ ..] => resource(served, "", "v1", rest),
        ["apis", g, v, rest @ ..] if served.serves_group(g) => {
            match resource(served, g, v, rest) {
                // in a custom resources' group the CRD handler passes what it does not serve
                // on to the last handler: Go's plain-text 404
                Route::NotFound if !is_builtin_group(g) => Route::NoHandler,
                r => r,
            }
        }
        ["api", ..] | ["version", ..] => Route::NotFound,
        ["apis", g, ..] if served.serves_group(g) => Route::NotFound,
        _ => Route::NoHandler,
    }
}

fn resource(served: &ServedResources, group: &str, version: &str, rest: &[&str]) -> Route {
    let t = |plural: &str, ns: Option<&str>, name: Option<&str>, sub: Option<&str>| -> Route {
        let Some(res) = served.find(group, version, plural) else {
            return Route::NotFound;
        };
        if ns.is_some() && !res.namespaced {
            return Route::NotFound;
        }
        if !res.namespaced || ns.is_some() || name.is_none() {
            // a custom resource's unknown subresource is the object's 404 (dispatch answers it)
            if let Some(s) = sub
                && !res.has_subresource(s)
                && !res.is_custom()
            {
                return Route::NotFound;
            }
            if res.namespaced && ns.is_none() && name.is_some() {
                return Route::NotFound;
            }
            Route::Resource(Target {
                res,
                namespace: ns.map(str::to_string),
                name: name.map(str::to_string),
                sub: sub.map(str::to_string),
            })
        } else {
            Route::NotFound
        }
    };
    match rest {
        [plural] => t(plural, None, None, None),
        ["namespaces", name, sub]
            if group.is_empty() && (*sub == "status" || *sub == "finalize") =>
        {
            t("namespaces", None, Some(name), Some(sub))
        }
        ["namespaces", ns, plural] => t(plural, Some(ns), None, None),
        ["namespaces", ns, plural, name] => t(plural, Some(ns), Some(name), None),
        ["namespaces", ns, plural, name, sub] => t(plural, Some(ns), Some(name), Some(sub)),
        [plural, name] => t(plural, None, Some(name), None),
        [plural, name, sub] => t(plural, None, Some(name), Some(sub)),
        _ => Route::NotFound,
    }
}

/// What a path that routes nowhere lacks, in words, for the log of a loud 404.
pub fn describe_missing(path: &str, served: &ServedResources) -> String {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g] if !served.serves_group(g) => return format!("no API group {g:?} is served"),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        ["api" | "apis" | "version", ..] => return "no such path under a served API".to_string(),
        _ => return "no handler serves this path (not an API path kcm-testenv knows)".to_string(),
    };
    if !group.is_empty() && !served.serves_group(group) {
        return format!("no API group {group:?} is served");
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let core_v1 = group.is_empty() && version == "v1";
    if !core_v1 && !served.serves_group_version(group, version) {
        return format!("the API version {gv} is not served");
    }
    let (plural, sub) = match rest {
        ["namespaces", _, plural, _, sub, ..] => (*plural, Some(*sub)),
        ["namespaces", _, plural, ..] => (*plural, None),
        [plural, _, sub, ..] => (*plural, Some(*sub)),
        [plural, ..] => (*plural, None),
        [] => return format!("no such path in {gv}"),
    };
    match (served.find(group, version, plural), sub) {
        (None, _) => format!("{gv} serves no resource {plural:?}"),
        (Some(r), Some(s)) if !r.has_subresource(s) => {
            format!("{} has no subresource {s:?}", r.qualified_resource())
        }
        (Some(r), _) => format!(
            "no such path for {} ({})",
            r.qualified_resource(),
            if r.namespaced {
                "namespaced"
            } else {
                "cluster-scoped"
            }
        ),
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-decode a query component (`+` is a space, as in Go's `url.ParseQuery`).
pub fn decode_component(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                }
                _ => {
                    out.push(b'%');
                    i += 1;
                }
            },
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse a query string; the first value of a repeated key wins.
pub fn parse_query(q: Option<&str>) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for pair in q.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        m.entry(decode_component(k))
            .or_insert_with(|| decode_component(v));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &str) -> Route {
        super::parse(p, &ServedResources::default())
    }

    fn target(p: &str) -> Target {
        match parse(p) {
            Route::Resource(t) => t,
            other => panic!("{p}: {other:?}"),
        }
    }

    #[test]
    fn resource_paths() {
        let t = target("/apis/apps/v1/namespaces/t1/deployments/web/scale");
        assert_eq!(
            (
                t.res.plural,
                t.namespace.as_deref(),
                t.name.as_deref(),
                t.sub.as_deref()
            ),
            ("deployments", Some("t1"), Some("web"), Some("scale"))
        );
        let t = target("/api/v1/namespaces/t1");
        assert_eq!(
            (t.res.plural, t.name.as_deref()),
            ("namespaces", Some("t1"))
        );
        let t = target("/api/v1/namespaces/t1/status");
        assert_eq!(
            (t.res.plural, t.sub.as_deref()),
            ("namespaces", Some("status"))
        );
        let t = target("/api/v1/namespaces/t1/pods");
        assert_eq!(
            (t.res.plural, t.namespace.as_deref(), t.name),
            ("pods", Some("t1"), None)
        );
        let t = target("/api/v1/pods");
        assert_eq!((t.res.plural, t.namespace), ("pods", None));
        let t = target("/api/v1/nodes/n1/status");
        assert_eq!((t.res.plural, t.sub.as_deref()), ("nodes", Some("status")));
        assert!(matches!(parse("/api/v1/pods/x"), Route::NotFound));
        assert!(matches!(
            parse("/apis/apps/v1/namespaces/a/deployments/x/binding"),
            Route::NotFound
        ));
        assert!(matches!(parse("/apis/batch/v1/jobs"), Route::Resource(_)));
        assert!(matches!(
            parse("/apis/nope.example.com/v1/things"),
            Route::NoHandler
        ));
        assert!(matches!(parse("/nope"), Route::NoHandler));
        assert!(matches!(parse("/apis/apps/v2"), Route::NotFound));
        assert!(matches!(parse("/api/v2"), Route::NotFound));
        assert!(matches!(parse("/apis/apps/v1"), Route::ResourceList(..)));
    }

    #[test]
    fn missing_things_named() {
        let d = |p: &str| describe_missing(p, &ServedResources::default());
        assert_eq!(
            d("/apis/nope.example.com/v1/things"),
            "no API group \"nope.example.com\" is served"
        );
        assert_eq!(d("/apis/apps/v2"), "the API version apps/v2 is not served");
        assert_eq!(
            d("/api/v1/namespaces/a/nopes"),
            "v1 serves no resource \"nopes\""
        );
        assert_eq!(
            d("/apis/apps/v1/namespaces/a/deployments/x/rollback"),
            "deployments.apps has no subresource \"rollback\""
        );
        assert_eq!(d("/api/v1/pods/x"), "no such path for pods (namespaced)");
        assert!(d("/nope").starts_with("no handler serves this path"));
    }

    #[test]
    fn query_decoding() {
        let q = parse_query(Some(
            "labelSelector=app%20in%20(web,db),!tier&fieldSelector=metadata.name%3Dx&a=b+c",
        ));
        assert_eq!(q["labelSelector"], "app in (web,db),!tier");
        assert_eq!(q["fieldSelector"], "metadata.name=x");
        assert_eq!(q["a"], "b c");
    }
}
