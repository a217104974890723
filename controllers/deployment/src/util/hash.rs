//! The pod-template hash that names a Deployment's ReplicaSets (`<deployment>-<hash>`), equal to
//! upstream's `controller.ComputeHash` (kube-controller-manager v1.37):
//!
//! * the text go-spew prints for the Go `v1.PodTemplateSpec` (`hashutil.DeepHashObject`, that is
//!   `dump.ForHash`), replayed from the template's JSON by [`spew`] with the Go type
//!   layout of the generated `spew_table`;
//! * followed, when `collisionCount` is set, by 8 bytes: the little-endian `u32` of the count and
//!   4 zero bytes (so `None` and `Some(0)` hash differently);
//! * fed to a 32-bit FNV-1a hasher, whose sum is printed in decimal and every character mapped
//!   through `rand.SafeEncodeString`'s alphabet `bcdfghjklmnpqrstvwxz2456789`.
//!
//! The golden values of `hash_golden_tests.rs` come from upstream's own `ComputeHash`
//! (`upstream/cmd/templatehash`). The hash covers what the template holds in Go; a field that
//! the k8s-openapi types in use do not know is lost when the template is decoded into them, so
//! [`compute_hash_json`] takes the template as the API server served it where that matters.

use std::io;

use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::spew;

/// Label (and selector key) that carries the template hash on ReplicaSets and pods
/// (`apps.DefaultDeploymentUniqueLabelKey`).
pub const DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: &str = "pod-template-hash";

/// Alphabet of upstream's `k8s.io/apimachinery/pkg/util/rand.SafeEncodeString` (no vowels, no
/// ambiguous characters, so generated names never spell words).
pub(crate) const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

const FNV32_OFFSET_BASIS: u32 = 2_166_136_261;
const FNV32_PRIME: u32 = 16_777_619;

/// A 32-bit FNV-1a hasher usable as an [`io::Write`] sink.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv32a(u32);

impl Default for Fnv32a {
    fn default() -> Self {
        Self(FNV32_OFFSET_BASIS)
    }
}

impl Fnv32a {
    /// Feeds bytes into the hash.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u32::from(*b);
            self.0 = self.0.wrapping_mul(FNV32_PRIME);
        }
    }

    /// The current hash value.
    pub(crate) fn sum32(&self) -> u32 {
        self.0
    }
}

impl io::Write for Fnv32a {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Maps every byte of `s` to `SAFE_ALPHABET[byte % 27]` (upstream `rand.SafeEncodeString`).
pub(crate) fn safe_encode_string(s: &str) -> String {
    s.bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// The pod-template hash upstream's `controller.ComputeHash` (kube-controller-manager v1.37)
/// gives `template` with the Deployment's `status.collisionCount`: the value of the
/// [`DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY`] label and selector of the ReplicaSet the Deployment
/// controller creates for that template, named `<deployment>-<hash>`. `None` and `Some(0)`
/// hash differently, as in Go.
///
/// The hash covers the template as Go decodes it; give it the template as the API server
/// stored it (defaulted, quantities canonical), as the controller sees it.
///
/// ```
/// use k8s_openapi::api::core::v1::PodTemplateSpec;
/// use kcm_deployment::compute_hash;
///
/// let t = PodTemplateSpec::default();
/// let hash = compute_hash(&t, None);
/// // Decimal digits of an FNV-1a sum, spelled with apimachinery's SafeEncodeString alphabet.
/// assert!(hash.bytes().all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)));
/// assert_ne!(hash, compute_hash(&t, Some(0)));
/// ```
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    // Serializing k8s-openapi types cannot fail (all map keys are strings); should it ever, the
    // hash is that of an empty template, still deterministic.
    let json = serde_json::to_value(template).unwrap_or_default();
    compute_hash_json(&json, collision_count)
}

/// [`compute_hash`] of a template given as JSON (a `PodTemplateSpec` object as the API serves
/// it, quantities in canonical form).
pub(crate) fn compute_hash_json(
    template: &serde_json::Value,
    collision_count: Option<i32>,
) -> String {
    let mut hasher = Fnv32a::default();
    hasher.update(spew::dump_pod_template(template).as_bytes());
    if let Some(count) = collision_count {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hasher.update(&bytes);
    }
    safe_encode_string(&hasher.sum32().to_string())
}

#[cfg(test)]
#[path = "hash_golden_tests.rs"]
mod golden_tests;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn template(labels: &[(&str, &str)], image: &str) -> PodTemplateSpec {
        let mut map = BTreeMap::new();
        for (k, v) in labels {
            map.insert((*k).to_string(), (*v).to_string());
        }
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(map),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some(image.into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn fnv32a_reference_vectors() {
        for (input, want) in [
            ("", 0x811c_9dc5_u32),
            ("a", 0xe40c_292c),
            ("foobar", 0xbf9c_f968),
        ] {
            let mut h = Fnv32a::default();
            h.update(input.as_bytes());
            assert_eq!(h.sum32(), want, "fnv1a32({input:?})");
        }
    }

    #[test]
    fn safe_encode_string_digit_table() {
        assert_eq!(safe_encode_string("0123456789"), "456789bcdf");
        assert_eq!(safe_encode_string("3570521339"), "79c496577f");
        assert_eq!(safe_encode_string("abc"), "vwx");
    }

    #[test]
    fn compute_hash_is_map_order_insensitive() {
        let a = template(&[("a", "1"), ("b", "2"), ("c", "3")], "img");
        let b = template(&[("c", "3"), ("a", "1"), ("b", "2")], "img");
        assert_eq!(compute_hash(&a, None), compute_hash(&b, None));
        // Also when the template comes from JSON with keys in another order.
        let from_json: PodTemplateSpec = serde_json::from_str(
            r#"{"spec":{"containers":[{"name":"app","image":"img"}]},"metadata":{"labels":{"c":"3","b":"2","a":"1"}}}"#,
        )
        .expect("valid template");
        let a2 = PodTemplateSpec {
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("img".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..a.clone()
        };
        assert_eq!(compute_hash(&from_json, None), compute_hash(&a2, None));
    }

    /// Many similar templates hash apart, and so do many collision counts of one template.
    #[test]
    fn compute_hash_distinct_for_similar_templates() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..1000 {
            let t = template(&[("app", "x")], &format!("img:{i}"));
            assert!(
                seen.insert(compute_hash(&t, None)),
                "collision at image {i}"
            );
        }
        // Each family apart from itself: across the two, a 32-bit collision can occur (one
        // does, between some image and some count), in upstream's hash as in ours.
        seen.clear();
        let t = template(&[("app", "x")], "img");
        for count in 0..1000 {
            assert!(
                seen.insert(compute_hash(&t, Some(count))),
                "collision at count {count}"
            );
        }
    }

    #[test]
    fn compute_hash_depends_on_template_and_collision_count() {
        let a = template(&[("app", "x")], "img:1");
        let b = template(&[("app", "x")], "img:2");
        assert_ne!(compute_hash(&a, None), compute_hash(&b, None));
        assert_ne!(compute_hash(&a, Some(1)), compute_hash(&a, Some(2)));
        assert_ne!(compute_hash(&a, None), compute_hash(&a, Some(0)));
    }
}
