//! The string `format`s a CRD schema may use (upstream `apiserver/validation/formats.go`, the
//! formats kube-openapi's `strfmt` checks): which are known, and whether a value conforms.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use base64::Engine as _;

use crate::registry::validation::formats::{dns1123_label, dns1123_subdomain};

/// Whether `text` conforms to `format`: `None` for a format this server does not check (an
/// unknown one is ignored upstream too; `email`, `uri`, `isbn`, `creditcard`, `ssn`,
/// `hexcolor`, `rgbcolor`, `bsonobjectid`, `mac` and `duration` are accepted unchecked here).
pub fn format_ok(format: &str, text: &str) -> Option<bool> {
    match format.replace('-', "").as_str() {
        "datetime" => Some(date_time(text)),
        "date" => Some(date(text)),
        "byte" => Some(
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .is_ok(),
        ),
        "uuid" => Some(uuid(text, None)),
        "uuid3" => Some(uuid(text, Some('3'))),
        "uuid4" => Some(uuid(text, Some('4'))),
        "uuid5" => Some(uuid(text, Some('5'))),
        "ipv4" => Some(text.parse::<Ipv4Addr>().is_ok()),
        "ipv6" => Some(text.parse::<Ipv6Addr>().is_ok()),
        "cidr" => Some(cidr(text)),
        "hostname" => Some(hostname(text)),
        "k8sshortname" => Some(dns1123_label(text).is_empty()),
        "k8slongname" => Some(dns1123_subdomain(text).is_empty()),
        "password" => Some(true),
        _ => None,
    }
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

/// RFC 3339 full-date, `2006-01-02`.
fn date(s: &str) -> bool {
    let p: Vec<&str> = s.split('-').collect();
    if p.len() != 3 || !digits(p[0], 4) || !digits(p[1], 2) || !digits(p[2], 2) {
        return false;
    }
    format!("{s}T00:00:00Z").parse::<jiff::Timestamp>().is_ok()
}

/// RFC 3339 date-time (a space for the `T` and missing seconds' fractions are fine).
fn date_time(s: &str) -> bool {
    s.replacen(' ', "T", 1).parse::<jiff::Timestamp>().is_ok()
}

fn uuid(s: &str, version: Option<char>) -> bool {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    let groups: Vec<usize> = s.split('-').map(str::len).collect();
    let shape = groups == [8, 4, 4, 4, 12] || (groups.len() == 1 && groups[0] == 32);
    if !shape || hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    match version {
        None => true,
        Some(v) => {
            let variant_ok =
                v == '3' || matches!(hex.as_bytes()[16], b'8' | b'9' | b'a' | b'b' | b'A' | b'B');
            hex.as_bytes()[12] == v as u8 && variant_ok
        }
    }
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

/// RFC 1034 host names: dot-separated labels of letters, digits and `-`, 255 characters.
fn hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_table() {
        let cases = [
            ("date-time", "2024-01-02T03:04:05Z", Some(true)),
            ("date-time", "2024-01-02T03:04:05.123+02:00", Some(true)),
            ("date-time", "yesterday", Some(false)),
            ("date", "2024-02-29", Some(true)),
            ("date", "2024-13-01", Some(false)),
            ("byte", "aGVsbG8=", Some(true)),
            ("byte", "not base64!", Some(false)),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", Some(true)),
            ("uuid", "123e4567", Some(false)),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", Some(true)),
            ("uuid4", "123e4567-e89b-12d3-a456-426614174000", Some(false)),
            ("ipv4", "10.0.0.1", Some(true)),
            ("ipv4", "10.0.0.256", Some(false)),
            ("ipv6", "::1", Some(true)),
            ("cidr", "10.0.0.0/8", Some(true)),
            ("cidr", "10.0.0.0/33", Some(false)),
            ("hostname", "a.example.com", Some(true)),
            ("hostname", "-bad.example.com", Some(false)),
            ("k8s-short-name", "web-1", Some(true)),
            ("k8s-short-name", "Web", Some(false)),
            ("email", "anything", None),
            ("no-such-format", "x", None),
        ];
        for (f, v, want) in cases {
            assert_eq!(format_ok(f, v), want, "{f} {v}");
        }
    }
}
