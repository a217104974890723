//! The container images the scenarios roll between, chosen by where they run, and the pod
//! template details that make a pod "never Ready" on both kinds of cluster.

use serde_json::{Value, json};

/// The repository of the images used on a real cluster: `pause` runs anywhere, weighs a few
/// hundred kilobytes, and is usually on every node already (it is the sandbox image).
pub(super) const PAUSE_REPO: &str = "registry.k8s.io/pause";

/// Published tags of [`PAUSE_REPO`], one per template version the scenarios need (up to four:
/// revision-history-limit rolls v1 → v2 → v3 → v4). The newest first, as v1 is pulled most.
pub(super) const PAUSE_TAGS: [&str; 4] = ["3.10", "3.9", "3.8", "3.7"];

/// The testenv annotation asking its simulated kubelet for a pod that runs but never turns
/// Ready (see `testenv/src/sim/annotations.rs`); real kubelets ignore it.
pub(super) const SIM_NEVER_READY: &str = "sim.kcm-rs.io/never-ready";

/// A port nothing listens on in a pause container (pause opens no socket at all).
const CLOSED_PORT: u16 = 8079;

/// The image of every template version the scenarios use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Images {
    versions: [String; 4],
    never_ready: String,
}

impl Images {
    /// Fake images for `kcm-testenv`, whose simulated kubelet "runs" any image name.
    pub(crate) fn testenv() -> Images {
        Images {
            versions: ["app:v1", "app:v2", "app:v3", "app:v4"].map(String::from),
            never_ready: "app:broken".into(),
        }
    }

    /// Pause images from `repo` (default [`PAUSE_REPO`]) for a real cluster. The never-Ready
    /// template reuses v1's image: what keeps it from being Ready is its readiness probe.
    pub(super) fn pause(repo: Option<&str>) -> Images {
        let repo = repo.unwrap_or(PAUSE_REPO).trim_end_matches('/');
        let versions = PAUSE_TAGS.map(|tag| format!("{repo}:{tag}"));
        let never_ready = versions[0].clone();
        Images {
            versions,
            never_ready,
        }
    }

    /// The image of template version `n` (1-based, 1..=4).
    ///
    /// # Panics
    /// On a version the table does not have: a scenario bug, not a runtime condition.
    pub(crate) fn v(&self, n: usize) -> &str {
        match n.checked_sub(1).and_then(|i| self.versions.get(i)) {
            Some(image) => image,
            None => panic!("no image for template version {n} (1..=4)"),
        }
    }

    /// The image of the never-Ready template.
    pub(super) fn never_ready(&self) -> &str {
        &self.never_ready
    }
}

/// A strategic-merge patch for Deployment `spec.template` turning container `app` into one that
/// runs but never becomes Ready: the testenv annotation for the simulated kubelet, and a
/// readinessProbe on a closed port for a real kubelet (testenv ignores probes).
pub(super) fn never_ready_template_patch(images: &Images) -> Value {
    json!({"spec": {"template": {
        "metadata": {"annotations": {SIM_NEVER_READY: "true"}},
        "spec": {"containers": [{
            "name": "app",
            "image": images.never_ready(),
            "readinessProbe": {
                "tcpSocket": {"port": CLOSED_PORT},
                "periodSeconds": 2,
                "failureThreshold": 1
            }
        }]}
    }}})
}

/// A container security context Pod Security "restricted" admits, so the scenarios run in
/// clusters enforcing it by default; pause runs as user 65535 and needs nothing more.
pub(super) fn restricted_security_context() -> Value {
    json!({
        "runAsNonRoot": true,
        "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testenv_images_are_the_fake_ones() {
        let i = Images::testenv();
        let got: Vec<&str> = (1..=4).map(|n| i.v(n)).collect();
        assert_eq!(got, ["app:v1", "app:v2", "app:v3", "app:v4"]);
        assert_eq!(i.never_ready(), "app:broken");
    }

    #[test]
    fn pause_images_default_and_mirrored() {
        let i = Images::pause(None);
        let got: Vec<&str> = (1..=4).map(|n| i.v(n)).collect();
        assert_eq!(
            got,
            [
                "registry.k8s.io/pause:3.10",
                "registry.k8s.io/pause:3.9",
                "registry.k8s.io/pause:3.8",
                "registry.k8s.io/pause:3.7"
            ]
        );
        assert_eq!(i.never_ready(), "registry.k8s.io/pause:3.10");
        let m = Images::pause(Some("mirror.local:5000/k8s/pause/"));
        assert_eq!(m.v(1), "mirror.local:5000/k8s/pause:3.10");
        assert_eq!(m.v(4), "mirror.local:5000/k8s/pause:3.7");
    }

    #[test]
    fn every_version_is_a_distinct_image() {
        for images in [Images::testenv(), Images::pause(None)] {
            let mut all: Vec<&str> = (1..=4).map(|n| images.v(n)).collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), 4, "{images:?}");
        }
    }

    #[test]
    #[should_panic(expected = "no image for template version 5")]
    fn version_out_of_range_is_a_bug() {
        Images::testenv().v(5);
    }

    #[test]
    #[should_panic(expected = "no image for template version 0")]
    fn versions_are_one_based() {
        Images::testenv().v(0);
    }

    #[test]
    fn never_ready_patch_carries_annotation_and_failing_probe() {
        let p = never_ready_template_patch(&Images::pause(None));
        let t = &p["spec"]["template"];
        assert_eq!(t["metadata"]["annotations"][SIM_NEVER_READY], "true");
        let c = &t["spec"]["containers"][0];
        assert_eq!(c["name"], "app", "merges into the existing container");
        assert_eq!(c["image"], "registry.k8s.io/pause:3.10");
        assert_eq!(c["readinessProbe"]["tcpSocket"]["port"], CLOSED_PORT);
    }
}
