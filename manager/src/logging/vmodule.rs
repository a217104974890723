//! `--vmodule`: per-file verbosity, as klog has it.
//!
//! The value is a comma-separated list of `pattern=N`. A log call is enabled when the global
//! `-v` allows it, or when the first pattern that matches its source file's base name without
//! the extension (`sync` for `src/sync.rs`, `mod` for `src/sync/mod.rs`) has `N` at least the
//! call's verbosity. A pattern can therefore only raise the verbosity of a file, never lower it.
//! Patterns are shell globs with Go's `path/filepath.Match` rules: `*` (any run of characters),
//! `?` (one character), `[a-z]` and `[^a-z]` classes, `\` escapes. An empty item (a trailing
//! comma) is skipped, a `pattern=0` item has no effect, and anything else that is not
//! `pattern=N` is refused with component-base's message.

use std::fmt;

/// One `pattern=N` of `--vmodule`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    pattern: String,
    verbosity: u32,
}

/// Parsed `--vmodule`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VModule {
    items: Vec<Item>,
}

impl VModule {
    /// Parses `pattern=N,...` as component-base's `--vmodule` flag does.
    pub fn parse(value: &str) -> Result<VModule, String> {
        let mut items = Vec::new();
        for item in value.split(',') {
            if item.is_empty() {
                continue;
            }
            let parts: Vec<&str> = item.split('=').collect();
            let [pattern, level] = parts[..] else {
                return Err(format!("{item:?} does not have the pattern=N format"));
            };
            if pattern.is_empty() || level.is_empty() {
                return Err(format!("{item:?} does not have the pattern=N format"));
            }
            let verbosity = level
                .parse::<u32>()
                .ok()
                .filter(|v| *v <= i32::MAX as u32)
                .ok_or_else(|| format!("parsing verbosity in {item:?}: invalid syntax"))?;
            if verbosity > 0 {
                items.push(Item {
                    pattern: pattern.to_string(),
                    verbosity,
                });
            }
        }
        Ok(VModule { items })
    }

    /// Whether no pattern is set.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The verbosity for a source file path (`controllers/deployment/src/sync.rs`), from the
    /// first matching pattern; `None` when none matches.
    pub fn verbosity_for(&self, file: &str) -> Option<u32> {
        let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
        let stem = base.strip_suffix(".rs").unwrap_or(base);
        self.items
            .iter()
            .find(|item| glob_match(&item.pattern, stem))
            .map(|item| item.verbosity)
    }
}

impl fmt::Display for VModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .items
            .iter()
            .map(|i| format!("{}={}", i.pattern, i.verbosity))
            .collect();
        f.write_str(&items.join(","))
    }
}

/// Go's `filepath.Match` on a name without separators; a malformed pattern matches nothing
/// (klog ignores the error the same way).
fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches_at(&p, &n).unwrap_or(false)
}

/// Backtracking matcher; `None` for a malformed pattern.
fn matches_at(p: &[char], n: &[char]) -> Option<bool> {
    let Some((&first, rest)) = p.split_first() else {
        return Some(n.is_empty());
    };
    match first {
        '*' => {
            // Validate the rest once, so a malformed tail is an error even when `*` could
            // swallow everything.
            let mut matched = false;
            for skip in 0..=n.len() {
                if matches_at(rest, &n[skip..])? {
                    matched = true;
                    break;
                }
            }
            Some(matched)
        }
        '?' => match n.split_first() {
            Some((_, n_rest)) => matches_at(rest, n_rest),
            None => check_pattern(rest).map(|()| false),
        },
        '[' => {
            let (class_matches, after) = match_class(rest, n.first().copied())?;
            match n.split_first() {
                Some((_, n_rest)) if class_matches => matches_at(after, n_rest),
                _ => check_pattern(after).map(|()| false),
            }
        }
        '\\' => {
            let (&literal, after) = rest.split_first()?;
            match n.split_first() {
                Some((&c, n_rest)) if c == literal => matches_at(after, n_rest),
                _ => check_pattern(after).map(|()| false),
            }
        }
        literal => match n.split_first() {
            Some((&c, n_rest)) if c == literal => matches_at(rest, n_rest),
            _ => check_pattern(rest).map(|()| false),
        },
    }
}

/// `Some(())` when the rest of a pattern is well formed (Go reports a bad pattern even after
/// a mismatch).
fn check_pattern(p: &[char]) -> Option<()> {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => i += 2,
            '[' => {
                let (_, after) = match_class(&p[i + 1..], None)?;
                i = p.len() - after.len();
                continue;
            }
            _ => i += 1,
        }
    }
    (i == p.len()).then_some(())
}

/// Matches `c` against the class starting after `[`; returns whether it matched and the
/// pattern after `]`. `None` for a malformed class.
fn match_class(p: &[char], c: Option<char>) -> Option<(bool, &[char])> {
    let (negated, mut p) = match p.split_first() {
        Some(('^', rest)) => (true, rest),
        _ => (false, p),
    };
    let mut matched = false;
    let mut first = true;
    loop {
        let (&head, _) = p.split_first()?;
        if head == ']' && !first {
            return Some((matched != negated && c.is_some(), &p[1..]));
        }
        first = false;
        let (lo, rest) = class_char(p)?;
        let (hi, rest) = match rest.split_first() {
            Some(('-', after)) => class_char(after)?,
            _ => (lo, rest),
        };
        if c.is_some_and(|c| lo <= c && c <= hi) {
            matched = true;
        }
        p = rest;
    }
}

/// One (possibly escaped) character of a class.
fn class_char(p: &[char]) -> Option<(char, &[char])> {
    match p.split_first()? {
        ('-' | ']', _) => None,
        ('\\', rest) => rest.split_first().map(|(c, r)| (*c, r)),
        (c, rest) => Some((*c, rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_as_go_filepath_match() {
        // Go's path/filepath match tests that apply to names without separators.
        let cases = [
            ("abc", "abc", true),
            ("*", "abc", true),
            ("*c", "abc", true),
            ("a*", "a", true),
            ("a*", "abc", true),
            ("a*/b", "abc/b", true),
            ("a*b*c*d*e*", "axbxcxdxe", true),
            ("ab[c]", "abc", true),
            ("ab[b-d]", "abc", true),
            ("ab[e-g]", "abc", false),
            ("ab[^c]", "abc", false),
            ("ab[^b-d]", "abc", false),
            ("ab[^e-g]", "abc", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "ab", false),
            ("a?b", "a☺b", true),
            ("a[^a]b", "a☺b", true),
            ("a???b", "a☺b", false),
            ("[a-ζ]*", "α", true),
            ("*[a-ζ]", "A", false),
            ("[\\]a]", "]", true),
            ("[\\-]", "-", true),
            ("[x\\-]", "x", true),
            ("[x\\-]", "-", true),
            ("[x\\-]", "z", false),
            ("[\\-x]", "x", true),
            ("[\\-x]", "a", false),
            // malformed patterns match nothing
            ("[]a]", "]", false),
            ("[-]", "-", false),
            ("[x-]", "x", false),
            ("[-x]", "x", false),
            ("\\", "a", false),
            ("[a-b-c]", "a", false),
            ("[", "a", false),
            ("[^", "a", false),
            ("[^bc", "a", false),
            ("a[", "a", false),
            ("a[", "ab", false),
            ("*x", "xxx", true),
        ];
        for (pattern, name, want) in cases {
            assert_eq!(glob_match(pattern, name), want, "{pattern:?} ~ {name:?}");
        }
    }

    #[test]
    fn parses_as_component_base_does() {
        let v = VModule::parse("sync=4,roll*=2,,zero=0").expect("valid");
        assert_eq!(v.to_string(), "sync=4,roll*=2");
        assert!(VModule::parse("").expect("empty").is_empty());
        let bad = [
            ("sync", "\"sync\" does not have the pattern=N format"),
            ("=3", "\"=3\" does not have the pattern=N format"),
            ("sync=", "\"sync=\" does not have the pattern=N format"),
            ("a=b=1", "\"a=b=1\" does not have the pattern=N format"),
            (
                "sync=-1",
                "parsing verbosity in \"sync=-1\": invalid syntax",
            ),
            ("sync=x", "parsing verbosity in \"sync=x\": invalid syntax"),
            (
                "sync=4294967295",
                "parsing verbosity in \"sync=4294967295\": invalid syntax",
            ),
        ];
        for (value, message) in bad {
            assert_eq!(VModule::parse(value), Err(message.to_string()), "{value}");
        }
    }

    #[test]
    fn first_matching_pattern_of_the_file_stem_wins() {
        let v = VModule::parse("status=5,s*=3,mod=4").expect("valid");
        let cases = [
            ("controllers/deployment/src/sync/status.rs", Some(5)),
            ("controllers/deployment/src/sync.rs", Some(3)),
            ("controllers/deployment/src/sync/mod.rs", Some(4)),
            ("controllers/deployment/src/rolling.rs", None),
            ("status.rs", Some(5)),
            ("C:\\src\\status.rs", Some(5)),
        ];
        for (file, want) in cases {
            assert_eq!(v.verbosity_for(file), want, "{file}");
        }
    }
}
