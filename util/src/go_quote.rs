//! Go's `strconv.Quote` (and so `fmt`'s `%q` of a string), which Kubernetes' error messages,
//! events and klog's text format use for names and values: double quotes, `"` and `\`
//! escaped, the C escapes for their control characters, other control characters as `\xNN`
//! (ASCII) or `\uNNNN`/`\UNNNNNNNN`, printable text as it is.
//!
//! One difference, on purpose: Go also escapes the printable-looking code points that
//! `unicode.IsPrint` rejects (format characters such as U+200B, unassigned code points); they
//! are written as they are here (Rust's standard library has no Unicode category table).

use std::fmt::Write as _;

/// `s` quoted as Go's `strconv.Quote` quotes it.
///
/// ```
/// use kcm_util::go_quote::go_quote;
///
/// assert_eq!(go_quote("web"), r#""web""#);
/// assert_eq!(go_quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
/// ```
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::go_quote;

    /// Outputs of Go 1.26's `strconv.Quote` for the same inputs.
    #[test]
    fn as_go_quotes() {
        let cases = [
            ("", r#""""#),
            ("web-5d4f8", r#""web-5d4f8""#),
            ("say \"hi\"", r#""say \"hi\"""#),
            (r"C:\dir", r#""C:\\dir""#),
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#),
            ("\u{0}\u{1b}\u{7f}", r#""\x00\x1b\x7f""#),
            ("\u{85}\u{9f}", r#""\u0085\u009f""#),
            ("é ü 世界 🙂", r#""é ü 世界 🙂""#),
            ("'single'", r#""'single'""#),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), want, "{input:?}");
        }
    }
}
