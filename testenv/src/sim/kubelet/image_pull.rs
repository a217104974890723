//! Images the simulated kubelets cannot pull, and what a kubelet reports for them (upstream
//! `pkg/kubelet/images/image_manager.go`, `pkg/kubelet/kuberuntime/kuberuntime_container.go`).
//!
//! Which images are missing is a list of patterns (`*` matches any run of characters) over the
//! image as the pod spec writes it: [`SimConfig::missing_images`](super::super::SimConfig),
//! by default upstream e2e's convention ([`DEFAULT_MISSING_IMAGES`](super::super::DEFAULT_MISSING_IMAGES)).

use std::time::Duration;

use super::image_reference::normalize_image;

/// Whether `image` matches one of `patterns`.
pub(crate) fn is_missing(patterns: &[String], image: &str) -> bool {
    patterns.iter().any(|p| glob(p, image))
}

/// `*` matches any run of characters (none included); everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(x) => x,
        None => return text.is_empty(),
    };
    let Some(mut tail) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

/// The image the kubelet asks the runtime for: `:latest` added when there is no tag or digest
/// (upstream `applyDefaultImageTag`).
pub(crate) fn with_default_tag(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') || last.contains(':') {
        image.to_string()
    } else {
        format!("{image}:latest")
    }
}

/// The runtime's error for an image that does not exist (containerd's words for a missing
/// reference), which the kubelet reports as the `ErrImagePull` message.
pub(crate) fn pull_error(image: &str) -> String {
    let reference = normalize_image(image);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": {reference}: not found"
    )
}

/// The `ImagePullBackOff` message: the back-off, then the last pull's error.
pub(crate) fn back_off_message(image: &str) -> String {
    format!(
        "Back-off pulling image \"{}\": ErrImagePull: {}",
        with_default_tag(image),
        pull_error(image)
    )
}

/// The kubelet's image back-off: after the `n`-th failed pull (0-based) the next one waits
/// `base · 2ⁿ`, at most `max` (upstream `flowcontrol.Backoff` with 10 s and 300 s).
pub(crate) fn pull_backoff(failures: u32, base: Duration, max: Duration) -> Duration {
    let factor = 2u32.checked_pow(failures.min(31)).unwrap_or(u32::MAX);
    base.checked_mul(factor).map_or(max, |d| d.min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_patterns_match_upstreams_e2e_images() {
        let defaults = super::super::super::config::default_missing_images();
        for (image, missing) in [
            ("webserver:404", true),
            ("gcr.io/google_samples/gb-redisslave:nonexistent", true),
            ("foo:non-existent", true),
            ("localhost/some-image-that-doesnt-exist", true),
            ("invalid.registry.k8s.io/invalid/alpine:3.1", true),
            ("registry.k8s.io/e2e-test-images/httpd:2.4.38-4", false),
            ("registry.k8s.io/pause:3.10", false),
            ("nginx", false),
            ("nginx:1.27", false),
            ("example.com/app:4040", false),
        ] {
            assert_eq!(is_missing(&defaults, image), missing, "{image}");
        }
    }

    #[test]
    fn globs() {
        for (pattern, text, want) in [
            ("", "", true),
            ("", "a", false),
            ("*", "", true),
            ("*", "anything", true),
            ("a*", "abc", true),
            ("a*", "ba", false),
            ("*c", "abc", true),
            ("*c", "abd", false),
            ("a*c", "ac", true),
            ("a*b*c", "a-b-c", true),
            ("a*b*c", "a-c-b", false),
            ("*:404", "webserver:404", true),
            ("*:404", "webserver:4040", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "x", true),
        ] {
            assert_eq!(glob(pattern, text), want, "{pattern:?} ~ {text:?}");
        }
    }

    #[test]
    fn messages_as_a_kubelet_with_containerd_writes_them() {
        assert_eq!(with_default_tag("nginx"), "nginx:latest");
        assert_eq!(
            with_default_tag("localhost:5000/app"),
            "localhost:5000/app:latest"
        );
        assert_eq!(with_default_tag("webserver:404"), "webserver:404");
        assert_eq!(with_default_tag("app@sha256:abc"), "app@sha256:abc");
        assert_eq!(
            pull_error("webserver:404"),
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/webserver:404\": failed to resolve reference \"docker.io/library/webserver:404\": docker.io/library/webserver:404: not found"
        );
        assert_eq!(
            back_off_message("webserver:404"),
            format!(
                "Back-off pulling image \"webserver:404\": ErrImagePull: {}",
                pull_error("webserver:404")
            )
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let (base, max) = (Duration::from_secs(10), Duration::from_secs(300));
        let waits: Vec<u64> = (0..8)
            .map(|n| pull_backoff(n, base, max).as_secs())
            .collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(pull_backoff(u32::MAX, base, max), max);
    }
}
