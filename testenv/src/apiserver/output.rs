//! An answer in the negotiated form: handlers write JSON objects, lists and Status; this turns
//! them into what the `Accept` header asked for — a metadata-only view
//! ([`metadata_view`]) and YAML — as upstream's
//! `transformResponseObject` (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`)
//! does after every get, list, create, update, patch and delete.

use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt as _, Full};
use serde_json::Value;

use super::http::{Body, json_response};
use super::metadata_view;
use super::negotiate::{MediaType, Negotiated};
use crate::registry::ResourceInfo;

fn is_json(r: &Response<Body>) -> bool {
    r.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"))
}

/// Convert a handler's (non-streaming) answer for `res` to the negotiated form.
pub async fn finish(
    resp: Response<Body>,
    res: &ResourceInfo,
    sub: Option<&str>,
    output: &Negotiated,
) -> Response<Body> {
    let partial = output
        .conversion
        .as_ref()
        .filter(|c| c.is_meta("PartialObjectMetadata") || c.is_meta("PartialObjectMetadataList"));
    if (partial.is_none() && output.media != MediaType::Yaml) || !is_json(&resp) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Full::new(bytes).boxed_unsync());
    };
    let (code, v) = match partial {
        Some(c) => match metadata_view::convert(res, sub, &v, &c.kind, &c.group_version()) {
            Ok(converted) => (parts.status.as_u16(), converted),
            Err(e) => {
                let mut status = e.to_status();
                if e.reason.is_empty()
                    && let Some(m) = status.as_object_mut()
                {
                    m.remove("reason");
                }
                (e.code, status)
            }
        },
        None => (parts.status.as_u16(), v),
    };
    let mut out = value(code, &v, output.media);
    // keep the answer's other headers (warnings)
    for (k, val) in &parts.headers {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            out.headers_mut().append(k, val.clone());
        }
    }
    out
}

/// A document in the negotiated media type: JSON, or YAML.
pub fn value(code: u16, v: &Value, media: MediaType) -> Response<Body> {
    if media != MediaType::Yaml {
        return json_response(
            code,
            crate::registry::go_json::to_vec(v).unwrap_or_default(),
        );
    }
    let mut r = json_response(code, serde_yaml::to_string(v).unwrap_or_default());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/yaml"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::negotiate::{Endpoint, negotiate};
    use crate::registry;
    use serde_json::json;

    async fn body(r: Response<Body>) -> (u16, String, String) {
        let ct = r
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let code = r.status().as_u16();
        let b = r
            .into_body()
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        (code, ct, String::from_utf8_lossy(&b).into_owned())
    }

    #[tokio::test]
    async fn metadata_views_and_yaml() {
        let pods = registry::find("", "v1", "pods").expect("pods");
        let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "spec": {}});
        let res =
            |v: &Value| json_response(201, crate::registry::go_json::to_vec(v).unwrap_or_default());
        let neg = |h: &str| {
            negotiate(h, MediaType::WRITTEN, Endpoint::Resource { custom: false }).expect(h)
        };

        let n = neg("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
        let (code, ct, b) = body(finish(res(&pod), pods, None, &n).await).await;
        assert_eq!((code, ct.as_str()), (201, "application/json"));
        assert_eq!(
            serde_json::from_str::<Value>(&b).ok(),
            Some(
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "p"}})
            )
        );

        let n = neg("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
        let (code, _, b) = body(finish(res(&pod), pods, None, &n).await).await;
        assert_eq!(code, 406);
        assert!(b.contains("not a list (*core.Pod)"), "{b}");

        let (code, ct, b) =
            body(finish(res(&pod), pods, None, &neg("application/yaml")).await).await;
        assert_eq!((code, ct.as_str()), (201, "application/yaml"));
        assert_eq!(serde_yaml::from_str::<Value>(&b).ok(), Some(pod.clone()));

        // plain JSON passes untouched
        let (_, _, b) = body(finish(res(&pod), pods, None, &neg("application/json")).await).await;
        assert_eq!(serde_json::from_str::<Value>(&b).ok(), Some(pod));
    }
}
