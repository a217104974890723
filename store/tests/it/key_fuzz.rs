//! Property tests for object key parsing (`ObjectKey::parse`, client-go's
//! `SplitMetaNamespaceKey`): any string is answered without panicking, exactly as `strings.Split`
//! on `/` would, and keys print back to what they parsed from.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use kcm_store::{KeyError, ObjectKey};
use proptest::prelude::*;

/// Strings with a fair share of `/`, empty parts and multi-byte characters.
fn keyish() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just(String::new()),
        "[a-z0-9.-]{1,12}",
        "\\PC{0,8}",
        Just("é€𝄞".to_string()),
    ];
    prop::collection::vec(part, 1..5).prop_map(|parts| parts.join("/"))
}

proptest! {
    #[test]
    fn parse_matches_split_on_slash(s in prop_oneof![keyish(), "\\PC{0,40}", ".{0,40}"]) {
        let parts: Vec<&str> = s.split('/').collect();
        match (ObjectKey::parse(&s), parts.as_slice()) {
            (Ok(k), [name]) => {
                prop_assert_eq!(k.namespace.as_str(), "");
                prop_assert_eq!(k.name.as_str(), *name);
                prop_assert_eq!(k.to_string(), s.clone());
            }
            (Ok(k), [ns, name]) => {
                prop_assert_eq!(k.namespace.as_str(), *ns);
                prop_assert_eq!(k.name.as_str(), *name);
                // "/name" is a cluster-scoped key and prints without the slash, as upstream.
                let printed = if ns.is_empty() { name.to_string() } else { s.clone() };
                prop_assert_eq!(k.to_string(), printed);
            }
            (Err(e), parts) => {
                prop_assert!(parts.len() > 2, "{:?} rejected: {}", s, e);
                prop_assert_eq!(&e, &KeyError::UnexpectedFormat(s.clone()));
                prop_assert_eq!(e.to_string(), format!("unexpected key format: {s:?}"));
            }
            (Ok(k), parts) => prop_assert!(false, "{:?} ({} parts) parsed as {:?}", s, parts.len(), k),
        }
    }

    #[test]
    fn printed_keys_parse_back(ns in "[^/]{0,20}", name in "[^/]{0,20}") {
        let key = ObjectKey::new(ns, name);
        let printed = key.to_string();
        prop_assert_eq!(ObjectKey::parse(&printed), Ok(key.clone()));
        prop_assert_eq!(printed.parse::<ObjectKey>(), Ok(key));
    }
}
