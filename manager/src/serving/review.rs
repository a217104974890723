//! What delegated authentication and authorization share: who made a request ([`UserInfo`])
//! and the POST of a review object (TokenReview, SubjectAccessReview) to the API server.

use std::collections::BTreeMap;

/// Who made a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct UserInfo {
    /// User name.
    pub username: String,
    /// UID, if known.
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// POSTs a review object and returns the server's answer.
pub async fn post<T: serde::Serialize, R: serde::de::DeserializeOwned>(
    client: &kube::Client,
    path: &str,
    body: &T,
) -> Result<R, kube::Error> {
    let body = serde_json::to_vec(body).map_err(kube::Error::SerdeError)?;
    let request = http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e)))?;
    client.request(request).await
}
