//! Label key and value validation, following apimachinery's `api/validate/content`
//! (`IsLabelKey` a.k.a. `IsQualifiedName`, `IsDNS1123Subdomain`, `IsLabelValue`), which
//! `labels.NewRequirement` uses, with the same messages.

/// Maximum length of the name part of a qualified name (and of a label value).
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Maximum length of a label value.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Maximum length of a DNS-1123 subdomain (the optional prefix of a label key).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

/// apimachinery v0.37.2's `content.MaxLenError`, which label keys and values are checked with
/// (`labels.Parse` → `content.IsLabelKey`, `IsLabelValue`); `validation.MaxLenError`, which says
/// "characters", is not on that path.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

const EMPTY_ERROR: &str = "must be non-empty";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, anchored.
fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let ok_end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => ok_end(f) && ok_end(l) && b.iter().all(|c| ok_end(c) || *c == b'-'),
        _ => false,
    }
}

/// Validates a DNS-1123 subdomain; returns the error messages (empty = valid).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value.split('.').all(is_dns1123_label) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Validates a qualified name (a label key): an optional DNS-1123 subdomain prefix and `/`,
/// then a name of at most 63 characters. Returns the error messages (empty = valid).
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {EMPTY_ERROR}"));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {EMPTY_ERROR}"));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Validates a label value: empty, or at most 63 characters of `[-A-Za-z0-9_.]` starting and
/// ending with an alphanumeric character. Returns the error messages (empty = valid).
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}
