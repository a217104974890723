//! Object-name validation and generation shared by pod creation and events.

/// Whether `name` is a valid DNS-1123 subdomain (≤ 253 chars of lowercase
/// alphanumerics, `-` and `.`, each dot-separated label starting and ending
/// with an alphanumeric), as apimachinery's `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    name.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    })
}

/// An event name (client-go `GenerateEventName`): `<object>.<hex unix nanos>`,
/// or a random UUID when that is not a valid object name (too long, or the
/// object name has characters events may not use).
pub fn generate_event_name(object_name: &str, unix_nanos: i128) -> String {
    let name = format!("{object_name}.{unix_nanos:x}");
    if is_dns1123_subdomain(&name) {
        name
    } else {
        uuid::Uuid::new_v4().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_subdomain() {
        let cases = [
            ("a", true),
            ("a.b-c", true),
            ("web-7c5d.17c8e", true),
            ("", false),
            ("A", false),
            ("a..b", false),
            ("-a", false),
            ("a-", false),
            ("a_b", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_dns1123_subdomain(name), want, "{name:?}");
        }
        assert!(is_dns1123_subdomain(&"a".repeat(253)));
        assert!(!is_dns1123_subdomain(&"a".repeat(254)));
    }

    #[test]
    fn event_names() {
        assert_eq!(generate_event_name("web", 255), "web.ff");
        let long = generate_event_name(&"a".repeat(250), 1 << 40);
        assert_eq!(long.len(), 36, "falls back to a UUID: {long}");
        assert_ne!(generate_event_name("Bad_Name", 1), "Bad_Name.1");
    }
}
