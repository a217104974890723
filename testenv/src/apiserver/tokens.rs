//! ServiceAccount tokens: `serviceaccounts/token` (TokenRequest, upstream
//! `pkg/registry/core/serviceaccount/storage/token.go`) hands out a JWT with upstream's claims
//! (`pkg/serviceaccount/claims.go`: issuer, audiences, `sub`
//! `system:serviceaccount:<ns>:<name>`, the `kubernetes.io` claim naming the account and the
//! object the token is bound to), and `tokenreviews` (TokenReview) checks one.
//!
//! The signature is HMAC-SHA256 with a key the server draws at start (`alg: HS256`), where
//! kube-apiserver signs with its ServiceAccount key (ES256 or RS256): clients that only carry or
//! decode the token see no difference; nothing here serves the key for others to verify with.

use base64::Engine;
use http::Response;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::http::{Body, Ctx, parse_body, value_response};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::api_status::{ApiError, ApiResult, FieldError};
use crate::registry::meta;
use crate::registry::{StorageId, find};
use crate::storage::key_of;

/// The issuer (and default audience) `cargo xtask cluster up --upstream` gives kube-apiserver
/// (`--service-account-issuer`).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// Upstream's shortest token lifetime (`spec.expirationSeconds`).
const MIN_EXPIRATION: i64 = 600;

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data)
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| k.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// A signed JWT carrying `claims`.
pub fn sign(key: &[u8], claims: &Value) -> String {
    let header = b64(br#"{"alg":"HS256","kid":"kcm-testenv"}"#);
    let body = b64(claims.to_string().as_bytes());
    let signed = format!("{header}.{body}");
    let sig = b64(&hmac(key, signed.as_bytes()));
    format!("{signed}.{sig}")
}

/// The claims of a token this server signed, if the signature holds.
pub fn verify(key: &[u8], token: &str) -> Option<Value> {
    let (signed, sig) = token.rsplit_once('.')?;
    if b64(&hmac(key, signed.as_bytes())) != sig {
        return None;
    }
    let body = signed.split_once('.')?.1;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The user a token this server signed authenticates as, if it holds and has not expired:
/// `system:serviceaccount:<ns>:<name>` with its uid and the groups upstream's ServiceAccount
/// authenticator gives (`pkg/serviceaccount/util.go`, `UserInfo`).
pub fn user_of(key: &[u8], token: &str) -> Option<Value> {
    let now = jiff::Timestamp::now().as_second();
    let c = verify(key, token).filter(|c| c["exp"].as_i64().is_some_and(|e| e > now))?;
    let ns = c["kubernetes.io"]["namespace"].as_str().unwrap_or("");
    Some(json!({
        "username": c["sub"],
        "uid": c["kubernetes.io"]["serviceaccount"]["uid"],
        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}"),
                   "system:authenticated"],
    }))
}

/// The user of an `Authorization: Bearer` header carrying a token this server signed; any
/// other request is `system:anonymous` (this server authenticates nothing else and refuses no
/// credentials).
pub fn request_user(key: &[u8], authorization: Option<&str>) -> Value {
    authorization
        .and_then(|a| a.strip_prefix("Bearer "))
        .and_then(|t| user_of(key, t.trim()))
        .unwrap_or_else(
            || json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]}),
        )
}

/// `POST serviceaccounts/<name>/token`.
pub fn token_request(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let ns = t.namespace.as_deref().unwrap_or("");
    let name = t.name.as_deref().unwrap_or("");
    let sa = srv
        .store
        .get(StorageId::SERVICEACCOUNTS, &key_of(ns, name))
        .ok_or_else(|| ApiError::not_found(t.res, name))?
        .value();
    let body = parse_body(ctx)?;
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let expiration = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    let invalid = |e: FieldError| {
        ApiError::invalid(
            "TokenRequest.authentication.k8s.io",
            "authentication.k8s.io",
            "TokenRequest",
            "",
            &[e],
        )
    };
    if expiration < MIN_EXPIRATION {
        return Err(invalid(FieldError::invalid(
            "spec.expirationSeconds",
            expiration.to_string(),
            "may not specify a duration less than 10 minutes",
        )));
    }
    let audiences = match spec.get("audiences").and_then(Value::as_array) {
        Some(a) if !a.is_empty() => Value::Array(a.clone()),
        _ => json!([ISSUER]),
    };
    let mut k8s = json!({
        "namespace": ns,
        "serviceaccount": {"name": name, "uid": meta::uid_of(&sa)},
    });
    let bound = spec.get("boundObjectRef").filter(|b| !b.is_null()).cloned();
    if let Some(b) = &bound {
        let kind = b.get("kind").and_then(Value::as_str).unwrap_or("");
        let bound_name = b.get("name").and_then(Value::as_str).unwrap_or("");
        let (plural, id, claim) = match kind {
            "Pod" => ("pods", StorageId::PODS, "pod"),
            "Secret" => ("secrets", StorageId::SECRETS, "secret"),
            "Node" => ("nodes", StorageId::NODES, "node"),
            other => {
                return Err(invalid(FieldError::not_supported(
                    "spec.boundObjectRef.kind",
                    format!("{other:?}"),
                    &["Pod", "Node", "Secret"],
                )));
            }
        };
        let res = find("", "v1", plural).ok_or_else(|| ApiError::internal("no core/v1 table"))?;
        let key = if res.namespaced {
            key_of(ns, bound_name)
        } else {
            bound_name.to_string()
        };
        let obj = srv
            .store
            .get(id, &key)
            .ok_or_else(|| ApiError::not_found(res, bound_name))?
            .value();
        k8s[claim] = json!({"name": bound_name, "uid": meta::uid_of(&obj)});
    }
    let now = jiff::Timestamp::now().as_second();
    let claims = json!({
        "aud": audiences,
        "exp": now + expiration,
        "iat": now,
        "iss": ISSUER,
        "jti": meta::new_uid(),
        "kubernetes.io": k8s,
        "nbf": now,
        "sub": format!("system:serviceaccount:{ns}:{name}"),
    });
    let token = sign(&srv.token_key, &claims);
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": meta::uid_of(&sa),
            "creationTimestamp": meta::now_rfc3339(),
        },
        "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": bound},
        "status": {"token": token, "expirationTimestamp": meta::rfc3339_in(expiration)},
    });
    Ok(value_response(201, &answer))
}

/// `POST tokenreviews`: a token this server signed and that has not expired authenticates as
/// its ServiceAccount; any other token does not.
pub fn token_review(srv: &ApiServer, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let mut review = parse_body(ctx)?;
    let token = review
        .get("spec")
        .and_then(|s| s.get("token"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let status = match user_of(&srv.token_key, token) {
        Some(user) => json!({
            "authenticated": true,
            "user": user,
            "audiences": verify(&srv.token_key, token).map_or(Value::Null, |c| c["aud"].clone()),
        }),
        None => json!({"user": {}, "error": "invalid bearer token"}),
    };
    review["status"] = status;
    review["metadata"] = json!({"creationTimestamp": null});
    Ok(value_response(201, &review))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_rfc4231_case_2() {
        let mac = hmac(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn requests_are_the_user_of_a_valid_token_or_anonymous() {
        let later = jiff::Timestamp::now().as_second() + 600;
        let claims = |exp: i64| {
            json!({"sub": "system:serviceaccount:kube-system:deployment-controller", "exp": exp,
                   "kubernetes.io": {"namespace": "kube-system",
                                     "serviceaccount": {"name": "deployment-controller", "uid": "u1"}}})
        };
        let valid = format!("Bearer {}", sign(b"key", &claims(later)));
        let expired = format!("Bearer {}", sign(b"key", &claims(1)));
        let forged = format!("Bearer {}", sign(b"other", &claims(later)));
        let anonymous =
            json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]});
        let cases: Vec<(&str, Option<&str>, Value)> = vec![
            (
                "a valid token",
                Some(&valid),
                json!({"username": "system:serviceaccount:kube-system:deployment-controller",
                       "uid": "u1",
                       "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                  "system:authenticated"]}),
            ),
            ("an expired token", Some(&expired), anonymous.clone()),
            ("another server's token", Some(&forged), anonymous.clone()),
            ("basic auth", Some("Basic dTpw"), anonymous.clone()),
            ("no credentials", None, anonymous.clone()),
        ];
        for (name, header, want) in cases {
            assert_eq!(request_user(b"key", header), want, "{name}");
        }
    }

    #[test]
    fn signed_tokens_verify_and_forged_ones_do_not() {
        let claims = json!({"sub": "system:serviceaccount:default:x", "exp": 1});
        let t = sign(b"key", &claims);
        assert_eq!(t.split('.').count(), 3);
        assert_eq!(verify(b"key", &t), Some(claims));
        assert_eq!(verify(b"other", &t), None);
        assert_eq!(verify(b"key", "a.b.c"), None);
    }
}
