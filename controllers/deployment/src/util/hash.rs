//! The pod-template hash that names a Deployment's ReplicaSets (`<deployment>-<hash>`).
//!
//! Upstream (`controller.ComputeHash`) feeds a go-spew dump of the Go `PodTemplateSpec` into a
//! 32-bit FNV-1a hasher. That dump (Go type names, declaration order, every zero field) cannot be
//! reproduced outside Go, so this crate hashes a **canonical JSON form** instead:
//!
//! * the template serialized with `serde_json` in compact form (no whitespace), through
//!   k8s-openapi's `Serialize` impls: struct fields in the generated (alphabetical) order, absent
//!   optional fields omitted, every map a `BTreeMap` and therefore sorted by key. The hash is thus
//!   independent of map insertion order and unaffected by new optional API fields that are unset;
//! * followed, when `collisionCount` is set, by 8 bytes: the little-endian `u32` of the count and
//!   4 zero bytes (exactly upstream's framing, so `None` and `Some(0)` hash differently);
//! * the 32-bit sum is printed in decimal and every character mapped through upstream's
//!   `rand.SafeEncodeString` alphabet `bcdfghjklmnpqrstvwxz2456789`.
//!
//! The value is deterministic and stable across releases of this crate (pinned by tests) but is
//! **not** byte-identical to Go's. That is harmless: the controller finds its ReplicaSets with
//! [`equal_ignore_hash`](crate::util::equal_ignore_hash), never by recomputing a hash, so
//! ReplicaSets created by a Go controller are adopted and kept as they are.

use std::io;

use k8s_openapi::api::core::v1::PodTemplateSpec;

/// Label (and selector key) that carries the template hash on ReplicaSets and pods
/// (`apps.DefaultDeploymentUniqueLabelKey`).
pub const DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: &str = "pod-template-hash";

/// Alphabet of upstream's `k8s.io/apimachinery/pkg/util/rand.SafeEncodeString` (no vowels, no
/// ambiguous characters, so generated names never spell words).
pub const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

const FNV32_OFFSET_BASIS: u32 = 2_166_136_261;
const FNV32_PRIME: u32 = 16_777_619;

/// A 32-bit FNV-1a hasher usable as an [`io::Write`] sink.
#[derive(Debug, Clone, Copy)]
pub struct Fnv32a(u32);

impl Default for Fnv32a {
    fn default() -> Self {
        Self(FNV32_OFFSET_BASIS)
    }
}

impl Fnv32a {
    /// Feeds bytes into the hash.
    pub fn update(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u32::from(*b);
            self.0 = self.0.wrapping_mul(FNV32_PRIME);
        }
    }

    /// The current hash value.
    pub fn sum32(&self) -> u32 {
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
pub fn safe_encode_string(s: &str) -> String {
    s.bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// Computes the pod-template hash of `template` mixed with `collision_count`
/// (see the module docs for the exact canonical form).
///
/// ```
/// use k8s_openapi::api::core::v1::PodTemplateSpec;
/// use kcm_deployment::util::compute_hash;
///
/// let t = PodTemplateSpec::default();
/// assert_eq!(compute_hash(&t, None), compute_hash(&t.clone(), None));
/// assert_ne!(compute_hash(&t, None), compute_hash(&t, Some(0)));
/// ```
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut hasher = Fnv32a::default();
    // Serializing k8s-openapi types into an infallible writer cannot fail (all map keys are
    // strings); should it ever, the hash covers the bytes written so far, which is still
    // deterministic.
    let _ = serde_json::to_writer(&mut hasher, template);
    if let Some(count) = collision_count {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hasher.update(&bytes);
    }
    safe_encode_string(&hasher.sum32().to_string())
}

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
    fn compute_hash_fixed_values() {
        let t = template(&[("app", "nginx")], "nginx:1.27");
        let canonical = serde_json::to_string(&t).expect("serializes");
        assert_eq!(
            canonical,
            r#"{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.27","name":"app"}]}}"#
        );
        let h = compute_hash(&t, None);
        assert!(h.len() <= 10 && !h.is_empty());
        assert!(h.bytes().all(|b| b"456789bcdf".contains(&b)), "{h}");
        assert_eq!(h, GOLDEN_NONE);
        assert_eq!(compute_hash(&t, Some(0)), GOLDEN_ZERO);
        assert_eq!(compute_hash(&t, Some(1)), GOLDEN_ONE);
        assert_eq!(
            compute_hash(&PodTemplateSpec::default(), None),
            GOLDEN_EMPTY
        );
    }

    // Golden values, cross-checked with an independent Python FNV-1a over the same bytes.
    // Changing them changes every ReplicaSet name this controller creates: don't.
    const GOLDEN_NONE: &str = "7dff44b88d";
    const GOLDEN_ZERO: &str = "5b8cc44fcb";
    const GOLDEN_ONE: &str = "76587b784f";
    const GOLDEN_EMPTY: &str = "5859f96865";

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

    /// Like upstream `hash_test.go`: many similar templates (and collision counts) hash apart.
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
