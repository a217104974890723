//! Content negotiation: which media type, and which conversion (`as=Table`,
//! `as=PartialObjectMetadata`, `as=APIGroupDiscoveryList`), an `Accept` header asks of an
//! endpoint, as kube-apiserver negotiates it.
//!
//! Ported behaviour: the clause parsing and order of `github.com/munnerz/goautoneg`
//! (`autoneg.go`), the clause matching of
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go`, and the
//! endpoint restrictions of `handlers/rest.go` (resources) and
//! `endpoints/discovery/aggregated/negotiation.go` (aggregated discovery).

use crate::registry::api_status::ApiError;

/// A media type of kube-apiserver's serializers, in their order of preference (the first is
/// the answer to `*/*` or no `Accept` at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    /// `application/json`
    Json,
    /// `application/yaml`
    Yaml,
    /// `application/vnd.kubernetes.protobuf`
    Protobuf,
}

impl MediaType {
    /// The serializers of built-in resources and discovery (CBOR is an alpha gate, off).
    pub const ALL: &'static [MediaType] = &[MediaType::Json, MediaType::Yaml, MediaType::Protobuf];
    /// What kcm-testenv writes: JSON and YAML (protobuf bodies are read, never written).
    pub const WRITTEN: &'static [MediaType] = &[MediaType::Json, MediaType::Yaml];

    /// The full media type.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Json => "application/json",
            MediaType::Yaml => "application/yaml",
            MediaType::Protobuf => "application/vnd.kubernetes.protobuf",
        }
    }

    fn subtype(self) -> &'static str {
        match self {
            MediaType::Json => "json",
            MediaType::Yaml => "yaml",
            MediaType::Protobuf => "vnd.kubernetes.protobuf",
        }
    }

    /// Whether watch events can be written in it (YAML has no stream serializer).
    pub fn streams(self) -> bool {
        self != MediaType::Yaml
    }
}

/// One clause of an `Accept` header.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// `application` in `application/json`.
    pub kind: String,
    /// `json` in `application/json`.
    pub subtype: String,
    /// The `q` parameter (1 when absent, 0 when unparsable).
    pub q: f64,
    /// Every other parameter, in header order (a repeated key's last value counts, as in the
    /// map Go reads them into).
    pub params: Vec<(String, String)>,
}

/// Parse an `Accept` header into clauses sorted as goautoneg sorts them: by `q`, then concrete
/// types before wildcards (a stable sort: equal clauses keep the header's order). Clauses that
/// are not `type/subtype` (or `*`) are dropped, as are parameters without one `=`.
pub fn parse_accept(header: &str) -> Vec<Clause> {
    let mut out = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or("");
        let (kind, subtype) = match media.split_once('/') {
            None if media.trim_matches(' ') == "*" => ("*".to_string(), "*".to_string()),
            None => continue,
            Some((_, rest)) if rest.contains('/') => continue,
            Some((t, s)) => (
                t.trim_matches(' ').to_string(),
                s.trim_matches(' ').to_string(),
            ),
        };
        let mut clause = Clause {
            kind,
            subtype,
            q: 1.0,
            params: Vec::new(),
        };
        for p in pieces {
            let mut kv = p.split('=');
            let (Some(k), Some(v), None) = (kv.next(), kv.next(), kv.next()) else {
                continue;
            };
            let k = k.trim_matches(' ');
            if k == "q" {
                clause.q = v.parse::<f32>().map_or(0.0, f64::from);
            } else {
                clause
                    .params
                    .push((k.to_string(), v.trim_matches(' ').to_string()));
            }
        }
        out.push(clause);
    }
    out.sort_by(|a, b| {
        if less(a, b) {
            std::cmp::Ordering::Less
        } else if less(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    out
}

fn less(a: &Clause, b: &Clause) -> bool {
    a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.subtype != "*" && b.subtype == "*")
}

/// A conversion target named by a clause's `g`, `v` and `as` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversion {
    /// `g`
    pub group: String,
    /// `v`
    pub version: String,
    /// `as`
    pub kind: String,
}

impl Conversion {
    /// Whether this is a `meta.k8s.io` `v1` or `v1beta1` kind.
    pub fn is_meta(&self, kind: &str) -> bool {
        self.group == "meta.k8s.io"
            && (self.version == "v1" || self.version == "v1beta1")
            && self.kind == kind
    }

    /// `meta.k8s.io/v1`
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// The negotiated answer: the media type to write and the conversion asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// What to write.
    pub media: MediaType,
    /// `as`/`g`/`v`, when the clause named any.
    pub conversion: Option<Conversion>,
    /// The `stream` parameter (`watch`).
    pub stream: String,
}

impl Default for Negotiated {
    fn default() -> Self {
        Negotiated {
            media: MediaType::Json,
            conversion: None,
            stream: String::new(),
        }
    }
}

impl Negotiated {
    /// Whether the clause asked for `kind` of `meta.k8s.io` (`Table`,
    /// `PartialObjectMetadata`, `PartialObjectMetadataList`).
    pub fn converts_to(&self, kind: &str) -> bool {
        self.conversion.as_ref().is_some_and(|c| c.is_meta(kind))
    }
}

/// What an endpoint allows beyond plain media types (upstream's `EndpointRestrictions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// Legacy discovery, `/apis/<group>` and the like: no conversion at all.
    Plain,
    /// `/api` and `/apis` asked for the aggregated form: only
    /// `apidiscovery.k8s.io/v2 APIGroupDiscoveryList` (v2beta1 is removed in v1.37).
    AggregatedDiscovery,
    /// A resource: `Table` (JSON and YAML only) and `PartialObjectMetadata(List)` of
    /// `meta.k8s.io` v1 or v1beta1. A custom resource has no protobuf serializer of its own.
    Resource {
        /// A custom resource.
        custom: bool,
    },
}

impl Endpoint {
    fn allows(self, media: MediaType, conversion: Option<&Conversion>) -> bool {
        match (self, conversion) {
            (Endpoint::Plain, c) => c.is_none(),
            (Endpoint::AggregatedDiscovery, Some(c)) => {
                c.group == "apidiscovery.k8s.io"
                    && c.version == "v2"
                    && c.kind == "APIGroupDiscoveryList"
            }
            (Endpoint::AggregatedDiscovery, None) => false,
            (Endpoint::Resource { custom }, None) => !custom || media != MediaType::Protobuf,
            (Endpoint::Resource { .. }, Some(c)) => {
                if c.group != "meta.k8s.io" || (c.version != "v1" && c.version != "v1beta1") {
                    return false;
                }
                match c.kind.as_str() {
                    "Table" => media != MediaType::Protobuf,
                    "PartialObjectMetadata" | "PartialObjectMetadataList" => true,
                    _ => false,
                }
            }
        }
    }
}

fn accept_clause(clause: &Clause, media: MediaType, endpoint: Endpoint) -> Option<Negotiated> {
    let mut conversion: Option<Conversion> = None;
    let mut stream = String::new();
    for (k, v) in &clause.params {
        match k.as_str() {
            "as" => conversion.get_or_insert_with(Default::default).kind = v.clone(),
            "g" => conversion.get_or_insert_with(Default::default).group = v.clone(),
            "v" => conversion.get_or_insert_with(Default::default).version = v.clone(),
            "stream" => {
                if !v.is_empty() && (!media.streams() || v != "watch") {
                    return None;
                }
                stream = v.clone();
            }
            // no endpoint here serves another server version
            "sv" if !v.is_empty() => return None,
            _ => {}
        }
    }
    endpoint
        .allows(media, conversion.as_ref())
        .then_some(Negotiated {
            media,
            conversion,
            stream,
        })
}

/// The first clause (in goautoneg's order) an endpoint can serve in one of `supported`; no
/// header at all is the first supported type.
pub fn negotiate(header: &str, supported: &[MediaType], endpoint: Endpoint) -> Option<Negotiated> {
    if header.is_empty() {
        // the first type, unconverted (which is not aggregated discovery)
        return supported
            .first()
            .filter(|&&media| endpoint.allows(media, None))
            .map(|&media| Negotiated {
                media,
                ..Negotiated::default()
            });
    }
    for clause in parse_accept(header) {
        for &media in supported {
            let matches = (clause.kind == "application"
                && (clause.subtype == media.subtype() || clause.subtype == "*"))
                || (clause.kind == "*" && clause.subtype == "*");
            if matches && let Some(n) = accept_clause(&clause, media, endpoint) {
                return Some(n);
            }
        }
    }
    None
}

/// Negotiate for kcm-testenv, which writes no protobuf: upstream's choice when it is JSON or
/// YAML, else the next clause kcm-testenv can write (a client offering protobuf and JSON gets
/// JSON). `Err` is the 406 kube-apiserver would answer, or — when only protobuf would do — the
/// same 406 with a reason to log.
pub fn negotiate_written(header: &str, endpoint: Endpoint) -> Result<Negotiated, NotAcceptable> {
    match negotiate(header, MediaType::ALL, endpoint) {
        None => Err(NotAcceptable { upstream_too: true }),
        Some(n) if n.media != MediaType::Protobuf => Ok(n),
        Some(_) => negotiate(header, MediaType::WRITTEN, endpoint).ok_or(NotAcceptable {
            upstream_too: false,
        }),
    }
}

/// A failed negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAcceptable {
    /// kube-apiserver refuses it as well; false when it would answer in protobuf, which
    /// kcm-testenv does not write.
    pub upstream_too: bool,
}

impl NotAcceptable {
    /// What kcm-testenv lacks, for the log.
    pub fn explain(&self, accept: &str) -> String {
        if self.upstream_too {
            format!(
                "no media type of Accept {accept:?} is served here (kube-apiserver answers the same 406)"
            )
        } else {
            format!(
                "kube-apiserver would answer Accept {accept:?} in protobuf, which kcm-testenv does not write (offer application/json too)"
            )
        }
    }

    /// The 406 Status, with the serializers' media types as kube-apiserver lists them.
    pub fn error(&self) -> ApiError {
        not_acceptable(MediaType::ALL.iter().map(|m| m.as_str()))
    }
}

/// 406 `only the following media types are accepted: …`.
pub fn not_acceptable<'a>(types: impl IntoIterator<Item = &'a str>) -> ApiError {
    let list: Vec<&str> = types.into_iter().collect();
    ApiError::new(
        406,
        "NotAcceptable",
        format!(
            "only the following media types are accepted: {}",
            list.join(", ")
        ),
    )
}

/// The 406 of a watch whose negotiated type has no stream serializer (upstream's
/// `NegotiateOutputMediaTypeStream`).
pub fn not_acceptable_stream() -> ApiError {
    not_acceptable([
        "application/json;stream=watch",
        "application/vnd.kubernetes.protobuf;stream=watch",
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(h: &str) -> Vec<String> {
        parse_accept(h)
            .into_iter()
            .map(|c| format!("{}/{}", c.kind, c.subtype))
            .collect()
    }

    #[test]
    fn clauses_sort_by_q_then_specificity() {
        assert_eq!(
            kinds("*/*;q=0.5, application/json;q=0.9, text/plain"),
            ["text/plain", "application/json", "*/*"]
        );
        assert_eq!(kinds("*/*, application/json"), ["application/json", "*/*"]);
        assert_eq!(
            kinds("application/*, application/yaml"),
            ["application/yaml", "application/*"]
        );
        // invalid media types are dropped; `*` alone is `*/*`
        assert_eq!(kinds("application, a/b/c, *"), ["*/*"]);
        let c = &parse_accept("application/json; as=Table ;g=meta.k8s.io;v;q=0.3")[0];
        assert_eq!(c.q, f64::from(0.3f32));
        assert_eq!(
            c.params,
            vec![
                ("as".to_string(), "Table".to_string()),
                ("g".to_string(), "meta.k8s.io".to_string())
            ]
        );
        assert_eq!(parse_accept("application/json;q=x")[0].q, 0.0);
    }

    /// Cases of upstream's `TestNegotiate` (negotiate_test.go), over the serializers of a
    /// built-in resource.
    #[test]
    fn upstream_negotiate_cases() {
        let json = |h: &str, e: Endpoint| negotiate(h, &[MediaType::Json], e).map(|n| n.media);
        let plain = Endpoint::Plain;
        for h in [
            "",
            "*/*",
            "application/*",
            "application/json",
            "application/json; pretty=1",
            "unrecognized/stuff,application/json; pretty=1",
            "application/json;as=BOGUS;v=v1beta1;g=meta.k8s.io, application/json",
            "application/BOGUS, application/json",
        ] {
            assert_eq!(json(h, plain), Some(MediaType::Json), "{h:?}");
        }
        assert_eq!(json("application", plain), None);
        assert_eq!(json("text/html", plain), None);
        let all = |h: &str| negotiate(h, MediaType::ALL, plain).map(|n| n.media);
        assert_eq!(
            all("application/vnd.kubernetes.protobuf"),
            Some(MediaType::Protobuf)
        );
        assert_eq!(
            all("application/vnd.kubernetes.protobuf;q=0.5, application/yaml"),
            Some(MediaType::Yaml)
        );
    }

    #[test]
    fn resource_conversions() {
        let res = Endpoint::Resource { custom: false };
        let cr = Endpoint::Resource { custom: true };
        let n = |h: &str, e| negotiate(h, MediaType::ALL, e);
        let pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert!(n(pom, res).is_some_and(|n| n.converts_to("PartialObjectMetadata")));
        let beta = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
        assert!(n(beta, cr).is_some_and(|n| n.converts_to("PartialObjectMetadataList")));
        // a kind meta.k8s.io does not convert to, or another group: not acceptable
        assert_eq!(n("application/json;as=Pod;g=meta.k8s.io;v=v1", res), None);
        assert_eq!(n("application/json;as=Table;g=apps;v=v1", res), None);
        assert_eq!(n("application/json;as=Table", res), None);
        // Table only in JSON and YAML; the next clause is tried
        let t = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json";
        assert_eq!(
            n(t, res).map(|n| (n.media, n.conversion)),
            Some((MediaType::Json, None))
        );
        // custom resources: protobuf only for the meta.k8s.io kinds
        assert_eq!(n("application/vnd.kubernetes.protobuf", cr), None);
        let p = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert!(n(p, cr).is_some_and(|n| n.media == MediaType::Protobuf));
        // YAML has no watch stream
        assert_eq!(n("application/yaml;stream=watch", res), None);
        assert!(n("application/json;stream=watch", res).is_some_and(|n| n.stream == "watch"));
    }

    #[test]
    fn aggregated_discovery_only_v2() {
        let agg = Endpoint::AggregatedDiscovery;
        let n = |h: &str| negotiate(h, MediaType::ALL, agg);
        let v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        let v2b1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
        assert!(n(v2).is_some());
        assert!(n(v2b1).is_none());
        assert!(n("application/json").is_none());
        assert!(n("").is_none());
        // any clause naming v2 wins, even after plain JSON (plain JSON is not aggregated)
        assert!(n(&format!("application/json, {v2}")).is_some());
        assert!(n(&format!("{v2b1}, {v2}, application/json")).is_some());
        // the legacy handler refuses a conversion it does not know
        assert!(negotiate(v2b1, MediaType::ALL, Endpoint::Plain).is_none());
    }

    #[test]
    fn testenv_writes_json_where_upstream_writes_protobuf() {
        let res = Endpoint::Resource { custom: false };
        let pb = "application/vnd.kubernetes.protobuf";
        let got = negotiate_written(&format!("{pb}, application/json"), res);
        assert_eq!(got.map(|n| n.media), Ok(MediaType::Json));
        let got = negotiate_written(&format!("{pb}, */*"), res);
        assert_eq!(got.map(|n| n.media), Ok(MediaType::Json));
        let e = negotiate_written(pb, res).expect_err("protobuf only");
        assert!(!e.upstream_too);
        let e = negotiate_written("text/html", res).expect_err("html");
        assert!(e.upstream_too);
        assert_eq!(
            (e.error().code, e.error().message),
            (
                406,
                "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf".to_string()
            )
        );
    }
}
