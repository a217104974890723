//! A kubeconfig for the server: context `kcm-testenv`, no authentication.

use std::path::Path;

/// The kubeconfig text for a server URL.
pub fn render(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kcm-testenv\n  cluster:\n    server: {url}\ncontexts:\n- name: kcm-testenv\n  context:\n    cluster: kcm-testenv\n    user: kcm-testenv\n    namespace: default\ncurrent-context: kcm-testenv\nusers:\n- name: kcm-testenv\n  user: {{}}\npreferences: {{}}\n"
    )
}

/// Write the kubeconfig to `path`.
pub fn write(path: &Path, url: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, render(url))
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_as_yaml() {
        let v: serde_yaml::Value =
            serde_yaml::from_str(&super::render("http://127.0.0.1:1")).expect("yaml");
        assert_eq!(v["current-context"].as_str(), Some("kcm-testenv"));
        assert_eq!(
            v["clusters"][0]["cluster"]["server"].as_str(),
            Some("http://127.0.0.1:1")
        );
    }
}
