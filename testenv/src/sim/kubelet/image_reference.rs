//! Image references as the container runtime reports them: a short name completed with
//! Docker Hub's registry, `library/` and the `latest` tag (containerd's normalisation, which
//! `pkg/kubelet/kuberuntime` reports in a container status's `image`).

/// The normalised image reference containerd reports (`nginx` → `docker.io/library/nginx:latest`).
pub(crate) fn normalize_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let first = name.split('/').next().unwrap_or("");
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_registry {
        name.to_string()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if digest.is_none() && !last.contains(':') {
        full.push_str(":latest");
    }
    match digest {
        Some(d) => format!("{full}@{d}"),
        None => full,
    }
}
