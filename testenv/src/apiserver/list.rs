//! List: resourceVersion semantics, limit/continue with consistent snapshots, label and
//! field selectors (`staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go`, `GetList`;
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go`, `ListResource`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use http::Response;
use kcm_store::Selector;
use serde_json::{Value, json};

use super::http::{Body, Ctx, json_response, view_json};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::api_status::{ApiError, ApiResult, FieldError, go_quote};
use crate::registry::field_selector::FieldSelector;
use crate::storage::{Obj, ObjRef, Page, TooOld};

/// Parsed selectors plus the namespace of a request, as one object filter.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Label selector (apimachinery's `labels.Parse`; its errors are the 400 messages).
    pub labels: Selector,
    /// Field selector.
    pub fields: FieldSelector,
}

impl Filter {
    /// Parse `labelSelector` and `fieldSelector` (400 on errors).
    pub fn from_ctx(t: &Target, ctx: &Ctx) -> ApiResult<Filter> {
        let labels = Selector::parse(ctx.q("labelSelector"))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse_for(ctx.q("fieldSelector"), t.res)
            .map_err(ApiError::bad_request)?;
        Ok(Filter { labels, fields })
    }

    /// Whether a stored object matches (from its extracted labels and fields, no parsing).
    pub fn matches_obj(&self, o: &Obj) -> bool {
        self.labels.matches_labels(o) && self.fields.matches_with(|f| o.field(f))
    }

    /// Whether there is no selector at all.
    pub fn is_empty(&self) -> bool {
        self.labels.is_everything() && self.fields.is_empty()
    }
}

/// The storage key prefix of a request: `ns/`, an exact pinned key, or everything.
pub fn prefix_of(t: &Target, f: &Filter) -> String {
    let ns = t.namespace.as_deref().unwrap_or("");
    if t.res.namespaced && !ns.is_empty() {
        match f.fields.pinned_name() {
            Some(n) => format!("{ns}/{n}"),
            None => format!("{ns}/"),
        }
    } else if !t.res.namespaced
        && let Some(n) = f.fields.pinned_name()
    {
        n.to_string()
    } else {
        String::new()
    }
}

/// An opaque continue token (upstream's shape: base64 JSON with the list RV and the next key).
pub fn encode_continue(rv: u64, last_key: &str) -> String {
    let v = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{last_key}\u{0}")});
    B64.encode(crate::registry::go_json::to_vec(&v).unwrap_or_default())
}

fn decode_continue(s: &str) -> ApiResult<(u64, String)> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {s}"));
    let raw = B64.decode(s).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .to_string();
    Ok((rv, start))
}

/// The options of a list request after validation.
#[derive(Debug)]
pub struct ListPlan {
    /// Serve at this older revision (None: current).
    pub at: Option<u64>,
    /// First key.
    pub start: Option<String>,
    /// Page size.
    pub limit: Option<usize>,
    /// Whether a continue token was given.
    pub is_continue: bool,
}

/// Validate list options (`staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation`,
/// `ValidateListOptions`) and derive what to serve.
pub fn plan(srv: &ApiServer, ctx: &Ctx) -> ApiResult<ListPlan> {
    let rv = ctx.q("resourceVersion");
    let rvm = ctx.q("resourceVersionMatch");
    let cont = ctx.q("continue");
    let mut errs = Vec::new();
    if ctx.query.contains_key("sendInitialEvents") {
        errs.push(FieldError::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if !rvm.is_empty() {
        if rv.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !cont.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        match rvm {
            "Exact" if rv == "0" => errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            )),
            "Exact" | "NotOlderThan" => {}
            other => errs.push(FieldError::not_supported(
                "resourceVersionMatch",
                go_quote(other),
                &["Exact", "NotOlderThan"],
            )),
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid_list_options(&errs));
    }
    let limit = match ctx.q("limit") {
        "" => None,
        l => match l.parse::<i64>() {
            Ok(n) if n > 0 => usize::try_from(n).ok(),
            Ok(_) => None,
            Err(_) => return Err(ApiError::bad_request(format!("invalid limit: {l}"))),
        },
    };
    if !cont.is_empty() {
        if !rv.is_empty() && rv != "0" {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (crv, start) = decode_continue(cont)?;
        return Ok(ListPlan {
            at: Some(crv),
            start: Some(start),
            limit,
            is_continue: true,
        });
    }
    let current = srv.store.rv();
    let at = match rv {
        "" | "0" => None,
        n => {
            let n: u64 = n
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {n}")))?;
            if n > current {
                let mut e = ApiError::new(
                    504,
                    "Timeout",
                    format!("Timeout: Too large resource version: {n}, current: {current}"),
                );
                e.details = Some(
                    json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}),
                );
                return Err(e);
            }
            let exact = rvm == "Exact" || (rvm.is_empty() && limit.is_some());
            if exact { Some(n) } else { None }
        }
    };
    Ok(ListPlan {
        at,
        start: None,
        limit,
        is_continue: false,
    })
}

/// The expired-continue 410 (its Status carries a fresh "inconsistent" continue token).
pub fn expired_continue(srv: &ApiServer, start: &str) -> ApiError {
    let mut e = ApiError::new(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    let key = start.trim_end_matches('\u{0}');
    e.metadata = Some(json!({"continue": encode_continue(srv.store.rv(), key)}));
    e
}

/// Run a list and return the page.
pub fn fetch(srv: &ApiServer, t: &Target, ctx: &Ctx, f: &Filter) -> ApiResult<Page> {
    let p = plan(srv, ctx)?;
    let prefix = prefix_of(t, f);
    let filter = |o: &Obj| f.matches_obj(o);
    let count = f.is_empty();
    match srv.store.list_page(
        t.res.storage,
        &prefix,
        p.start.as_deref(),
        p.at,
        &filter,
        p.limit,
        count,
        p.is_continue,
    ) {
        Ok(page) => Ok(page),
        Err(TooOld { .. }) if p.is_continue => {
            Err(expired_continue(srv, p.start.as_deref().unwrap_or("")))
        }
        Err(TooOld { .. }) => Err(ApiError::new(
            410,
            "Expired",
            "The resourceVersion for the provided list is too old.",
        )),
    }
}

/// The list metadata of a page.
pub fn list_meta(page: &Page) -> Value {
    let mut m = json!({"resourceVersion": page.rv.to_string()});
    if let Some(k) = &page.last_key {
        m["continue"] = json!(encode_continue(page.rv, k));
    }
    if let Some(n) = page.remaining {
        m["remainingItemCount"] = json!(n);
    }
    m
}

/// Serialize a list response from shared item bytes.
pub fn render(t: &Target, page: &Page, items: &[ObjRef]) -> Vec<u8> {
    let mut meta = list_meta(page);
    let kind = match t.res.custom {
        Some(cv) => {
            // an unstructured list always carries its continue token, empty at the end
            if meta.get("continue").is_none() {
                meta["continue"] = json!("");
            }
            cv.list_kind.clone()
        }
        None => format!("{}List", t.res.kind),
    };
    let head = json!({"kind": kind, "apiVersion": t.res.api_version(), "metadata": meta});
    let mut out = crate::registry::go_json::to_vec(&head).unwrap_or_default();
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"items\":[");
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&view_json(t.res, o));
    }
    out.extend_from_slice(b"]}");
    out
}

/// GET on a collection.
pub fn list(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let f = Filter::from_ctx(t, ctx)?;
    let page = fetch(srv, t, ctx, &f)?;
    Ok(json_response(200, render(t, &page, &page.items)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{self, StorageId};

    fn filter(label_selector: &str) -> ApiResult<Filter> {
        let t = Target {
            res: registry::find("", "v1", "pods").expect("pods"),
            namespace: Some("default".into()),
            name: None,
            sub: None,
        };
        let mut ctx = Ctx::default();
        ctx.query
            .insert("labelSelector".into(), label_selector.into());
        Filter::from_ctx(&t, &ctx)
    }

    /// Selectors as apimachinery's `labels.Parse` reads them, matched against a stored
    /// object's extracted labels (cases of upstream `TestSelectorMatches` and the old
    /// testenv parser's table).
    #[test]
    fn label_selectors_match_stored_labels() {
        let pod = Obj::at(
            StorageId::PODS,
            serde_json::json!({"metadata": {"name": "p", "namespace": "default",
                "labels": {"app": "web", "tier": "fe", "replicas": "3"}}}),
            1,
        );
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app = web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web,db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("missing notin (db)", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app in (web, db),!missing", true),
            ("app=web,tier=be", false),
            ("app=web , tier=fe", true),
            // integer comparisons, which the old parser took for keys named `replicas>2`
            ("replicas>2", true),
            ("replicas<3", false),
            ("app>1", false),
        ];
        for (s, want) in cases {
            let f = filter(s).unwrap_or_else(|e| panic!("{s}: {}", e.message));
            assert_eq!(f.matches_obj(&pod), *want, "{s}");
        }
    }

    /// A malformed `labelSelector` is a 400 whose message is `labels.Parse`'s error, as
    /// kube-apiserver v1.37.2 answers (texts from apimachinery v0.37.2).
    #[test]
    fn malformed_label_selectors_are_upstream_400s() {
        let cases = [
            ("app=web,", "found '', expected: identifier after ','"),
            (
                "app in web",
                "unable to parse requirement: found 'web' expected: '('",
            ),
            (
                "a=(b)",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "a>x",
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
            (
                "toolongtoolongtoolongtoolongtoolongtoolongtoolongtoolongtoolong1234=x",
                "unable to parse requirement: <nil>: Invalid value: \"toolongtoolongtoolongtoolongtoolongtoolongtoolongtoolongtoolong1234\": name part must be no more than 63 bytes",
            ),
        ];
        for (s, want) in cases {
            let e = filter(s).expect_err(s);
            assert_eq!((e.code, e.message.as_str()), (400, want), "{s}");
        }
    }
}
