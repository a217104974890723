//! Delegated authorization, as kube-controller-manager's: paths in
//! `--authorization-always-allow-paths` need nobody's permission; any other request is
//! allowed when the API server answers a SubjectAccessReview for the non-resource URL (the
//! path, verb `get` for GET) with `allowed`. Answers are cached (10 s each way by default).

use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};

use super::review::{UserInfo, post};
use super::ttl_cache::TtlCache;

/// Decides whether a user may do something on a path.
pub struct Authorizer {
    client: kube::Client,
    always_allow: Vec<String>,
    allowed_ttl: Duration,
    denied_ttl: Duration,
    cache: TtlCache<(UserInfo, String, String), bool>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("always_allow", &self.always_allow)
            .finish_non_exhaustive()
    }
}

/// Whether `path` matches one of the always-allowed paths: exactly, or by prefix for an entry
/// ending in `*`, as upstream.
pub fn always_allowed(always_allow: &[String], path: &str) -> bool {
    always_allow.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => p == path,
    })
}

/// The Kubernetes verb of an HTTP method on a non-resource URL.
pub fn verb(method: &http::Method) -> String {
    method.as_str().to_ascii_lowercase()
}

impl Authorizer {
    /// An authorizer asking the API server through `client`.
    pub fn new(
        client: kube::Client,
        always_allow: Vec<String>,
        allowed_ttl: Duration,
        denied_ttl: Duration,
    ) -> Self {
        Authorizer {
            client,
            always_allow,
            allowed_ttl,
            denied_ttl,
            cache: TtlCache::default(),
        }
    }

    /// Whether `path` needs no authentication nor authorization.
    pub fn is_always_allowed(&self, path: &str) -> bool {
        always_allowed(&self.always_allow, path)
    }

    /// Whether `user` may `verb` the non-resource URL `path`.
    pub async fn authorize(
        &self,
        user: &UserInfo,
        verb: &str,
        path: &str,
    ) -> Result<bool, kube::Error> {
        let key = (user.clone(), verb.to_string(), path.to_string());
        if let Some(allowed) = self.cache.get(&key) {
            return Ok(allowed);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.username.clone()),
                uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
                groups: Some(user.groups.clone()),
                extra: (!user.extra.is_empty()).then(|| user.extra.clone().into_iter().collect()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some(verb.to_string()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer: SubjectAccessReview = post(
            &self.client,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            &review,
        )
        .await?;
        let allowed = answer.status.is_some_and(|s| s.allowed);
        let ttl = if allowed {
            self.allowed_ttl
        } else {
            self.denied_ttl
        };
        self.cache.insert(key, allowed, ttl);
        Ok(allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_allow_paths_match_exactly_or_by_prefix() {
        let paths: Vec<String> = ["/healthz", "/readyz", "/livez", "/debug/*"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cases = [
            ("/healthz", true),
            ("/healthz/leaderElection", false),
            ("/readyz", true),
            ("/metrics", false),
            ("/debug/pprof", true),
            ("/debugx", false),
        ];
        for (path, want) in cases {
            assert_eq!(always_allowed(&paths, path), want, "{path}");
        }
        assert_eq!(verb(&http::Method::GET), "get");
    }
}
