//! Kubeconfigs for the upstream control plane: one cluster, one context, one user (a client
//! certificate or a bearer token), everything inlined, mode 0600.

use std::path::Path;

use anyhow::Context;
use base64::Engine;

use super::pki::ClientCert;

/// The context name of every kubeconfig written here.
pub const CONTEXT: &str = "kcm-upstream";

fn render(url: &str, ca_pem: &str, user: &str, credentials: &str) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {CONTEXT}\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\ncontexts:\n- name: {CONTEXT}\n  context:\n    cluster: {CONTEXT}\n    user: {user}\n    namespace: default\ncurrent-context: {CONTEXT}\nusers:\n- name: {user}\n  user:\n{credentials}preferences: {{}}\n",
        ca = b64(ca_pem),
    )
}

/// Writes a kubeconfig authenticating with a client certificate.
pub fn write_cert(
    path: &Path,
    url: &str,
    ca: &Path,
    user: &str,
    cert: &ClientCert,
) -> anyhow::Result<()> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let ca_pem =
        std::fs::read_to_string(ca).with_context(|| format!("reading {}", ca.display()))?;
    let credentials = format!(
        "    client-certificate-data: {}\n    client-key-data: {}\n",
        b64(&cert.cert_pem),
        b64(&cert.key_pem)
    );
    crate::cluster::write_private(path, &render(url, &ca_pem, user, &credentials))
}

/// Writes a kubeconfig authenticating with a bearer token.
pub fn write_token(
    path: &Path,
    url: &str,
    ca: &Path,
    user: &str,
    token: &str,
) -> anyhow::Result<()> {
    let ca_pem =
        std::fs::read_to_string(ca).with_context(|| format!("reading {}", ca.display()))?;
    let credentials = format!("    token: {token}\n");
    crate::cluster::write_private(path, &render(url, &ca_pem, user, &credentials))
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn renders_one_context_with_inlined_credentials() {
        let text = render("https://127.0.0.1:6443", "PEM", "me", "    token: abc\n");
        assert!(text.contains("server: https://127.0.0.1:6443\n"));
        assert!(text.contains("certificate-authority-data: UEVN\n"));
        assert!(text.contains("current-context: kcm-upstream\n"));
        assert!(text.contains("- name: me\n  user:\n    token: abc\n"));
    }
}
