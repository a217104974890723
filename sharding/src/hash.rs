//! The shard key hash: 64-bit FNV-1a, the function kube-apiserver applies to the field named in a
//! shard selector (apimachinery v0.37.2, `pkg/sharding`, `HashField`).
//!
//! The server hashes the field's UTF-8 bytes with no length prefix or terminator and compares the
//! result with the selector's ranges; [`hash_field`] returns the same number, so a client that
//! filters with it keeps exactly the objects the server would have sent.

/// FNV-1a 64-bit offset basis (the hash of the empty input).
pub const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV 64-bit prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`.
///
/// ```
/// assert_eq!(kcm_sharding::fnv1a_64(b""), 0xcbf29ce484222325);
/// assert_eq!(kcm_sharding::fnv1a_64(b"a"), 0xaf63dc4c8601ec8c);
/// ```
#[must_use]
pub const fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// The shard key of a field value (a namespace name, or a UID): what the server compares with a
/// selector's ranges. Cluster-scoped objects have the empty namespace, whose key is
/// [`FNV_OFFSET_BASIS`].
#[must_use]
pub const fn hash_field(value: &str) -> u64 {
    fnv1a_64(value.as_bytes())
}

/// [`hash_field`] as upstream's `HashField` prints it: 16 lowercase hex digits, no `0x`.
#[must_use]
pub fn hash_field_hex(value: &str) -> String {
    format!("{:016x}", hash_field(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs of upstream's `TestHashField` and `TestSelectorMatches`, plus namespace names, with
    /// the hex that apimachinery v0.37.2's `HashField` printed for them (run once with Go).
    const UPSTREAM_VECTORS: &[(&str, &str)] = &[
        ("", "cbf29ce484222325"),
        ("abc", "e71fa2190541574b"),
        ("test-uid-12345", "d4c53b72f9287c28"),
        ("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "93754b7248a00eb9"),
        ("test", "f9e6e6ef197c2b25"),
        ("different", "88f38c6c33321162"),
        ("a", "af63dc4c8601ec8c"),
        ("foobar", "85944171f73967e8"),
        ("default", "ebada5168620c5fe"),
        ("kube-system", "df65c7bc1d82b35e"),
        ("kube-public", "917fb081f1a65f5a"),
        ("kube-node-lease", "021fb6dd71b80174"),
        ("test-namespace", "54e7df36f7aafbf7"),
        ("test-uid-123", "d0ba679834556c0b"),
        ("shard-ns-0", "621f7d9e42c882f8"),
        ("shard-ns-1", "621f7e9e42c884ab"),
        ("shard-ns-9", "621f769e42c87713"),
        ("ns-1", "4a82b7ba48e25cc0"),
        ("ns-2", "4a82baba48e261d9"),
        ("team-a-prod", "76c73baef348ba20"),
        ("名前空間", "af072ed15de92c4a"),
        ("\u{0}", "af63bd4c8601b7df"),
        ("\u{ff}", "0ac20907b7180637"),
    ];

    #[test]
    fn matches_upstream_hash_field() {
        for (input, want) in UPSTREAM_VECTORS {
            assert_eq!(hash_field_hex(input), *want, "input {input:?}");
            assert_eq!(format!("{:016x}", hash_field(input)), *want);
        }
        let long = "x".repeat(300);
        assert_eq!(hash_field_hex(&long), "e78ddf9f1ba85555");
    }

    #[test]
    fn hex_is_sixteen_lowercase_digits() {
        // Upstream's TestHashField: fixed width, hex only, deterministic, distinct inputs differ.
        for input in ["", "abc", "test-uid-12345", "kube-node-lease"] {
            let hex = hash_field_hex(input);
            assert_eq!(hex.len(), 16);
            assert!(
                hex.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
        }
        assert_eq!(hash_field("test"), hash_field("test"));
        assert_ne!(hash_field("test"), hash_field("different"));
    }

    #[test]
    fn is_usable_in_const_context() {
        const DEFAULT: u64 = hash_field("default");
        assert_eq!(DEFAULT, 0xebada5168620c5fe);
    }
}
