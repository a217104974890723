//! Parsing shard selector strings, agreeing with kube-apiserver v0.37.2 (`apiserver/pkg/sharding`).
//!
//! The server parses the string as a CEL expression (cel-go, default limits: 100,000 code points,
//! recursion depth 250) and accepts only `shardRange(<path>, '<hex>', '<hex>')` calls joined by
//! `||`. This parser reads the same language minus CEL forms nobody writes in a selector, and
//! rejects those: string escapes, triple-quoted strings, backquoted identifiers, parenthesised
//! arguments and receiver-style calls (`x.shardRange(…)`, which cel-go accepts).
//! Whatever it accepts, the server accepts with the same ranges (checked against the real parser
//! in `tests/it/parse_upstream.rs`).

use std::str::FromStr;

use crate::range::{HASH_SPACE_END, ShardRange};
use crate::selector::{ShardKey, ShardSelector};

/// cel-go's default expression size limit, in code points.
pub const MAX_SELECTOR_CHARS: usize = 100_000;

/// The deepest nesting of grouping parentheses the server's CEL parser accepts.
pub const MAX_GROUPING_DEPTH: usize = 248;

/// Why a shard selector string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Empty or blank (the server's advice: omit the parameter for an unfiltered list).
    #[error("empty shard selector is not allowed; omit the parameter for unfiltered lists")]
    Empty,
    /// Longer than [`MAX_SELECTOR_CHARS`].
    #[error("shard selector has {0} code points; the server accepts at most 100000")]
    TooLong(usize),
    /// Parentheses nested deeper than [`MAX_GROUPING_DEPTH`].
    #[error("parentheses nested more than {MAX_GROUPING_DEPTH} deep")]
    TooDeep,
    /// Not well-formed.
    #[error("syntax error at code point {at}: {message}")]
    Syntax {
        /// Code point offset in the trimmed input.
        at: usize,
        /// What was wrong.
        message: String,
    },
    /// Valid CEL the server may accept, outside the subset this parser reads.
    #[error("unsupported at code point {at}: {what}")]
    Unsupported {
        /// Code point offset in the trimmed input.
        at: usize,
        /// The construct.
        what: &'static str,
    },
    /// A call of something other than `shardRange`.
    #[error("unsupported function {0:?}; only shardRange() and || are allowed")]
    UnsupportedFunction(String),
    /// `shardRange` with other than three arguments.
    #[error("shardRange() requires exactly 3 arguments, got {0}")]
    ArgumentCount(usize),
    /// The first argument is not a field path.
    #[error("shardRange() first argument: expected a field path such as object.metadata.uid")]
    NotAFieldPath,
    /// A field path the server does not support.
    #[error(
        "unsupported field path {0:?}; supported: object.metadata.uid, object.metadata.namespace"
    )]
    UnsupportedField(String),
    /// A bound that is not a string literal.
    #[error("{0} must be a string literal such as '0x0000000000000000'")]
    NotAString(&'static str),
    /// A bound that is not `0x` plus 16 lowercase hex digits (or `0x10000000000000000`).
    #[error("{bound} {problem}: {value:?}")]
    InvalidHex {
        /// `hexStart` or `hexEnd`.
        bound: &'static str,
        /// What is wrong with it.
        problem: &'static str,
        /// The literal's value.
        value: String,
    },
    /// `start >= end`.
    #[error("shard range start {start} must be less than end {end}")]
    EmptyRange {
        /// The start as written.
        start: String,
        /// The end as written.
        end: String,
    },
    /// Ranges over different fields.
    #[error("all shard ranges must use the same field, got {first:?} and {other:?}")]
    MixedFields {
        /// The first range's field.
        first: &'static str,
        /// The differing field.
        other: &'static str,
    },
}

impl ShardSelector {
    /// Parses a selector string as kube-apiserver does (the crate docs list the CEL forms it
    /// leaves out). Never panics.
    ///
    /// ```
    /// use kcm_sharding::{ShardKey, ShardSelector};
    ///
    /// let sel = ShardSelector::parse(
    ///     "shardRange(object.metadata.namespace,'0x0000000000000000','0x8000000000000000')",
    /// )?;
    /// assert_eq!(sel.key(), ShardKey::Namespace);
    /// assert_eq!(
    ///     sel.to_string(), // normalized spacing, as the server echoes it
    ///     "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
    /// );
    /// assert!(ShardSelector::parse("shardRange(object.metadata.uid, '0x0', '0x8')").is_err());
    /// # Ok::<(), kcm_sharding::ParseError>(())
    /// ```
    pub fn parse(input: &str) -> Result<Self, ParseError> {
        let text: Vec<char> = input.trim().chars().collect();
        if text.is_empty() {
            return Err(ParseError::Empty);
        }
        if text.len() > MAX_SELECTOR_CHARS {
            return Err(ParseError::TooLong(text.len()));
        }
        let tokens = lex(&text)?;
        let calls = parse_expression(&tokens, text.len())?;
        let mut key: Option<ShardKey> = None;
        let mut requirements = Vec::with_capacity(calls.len());
        for (call_key, range) in calls {
            match key {
                None => key = Some(call_key),
                Some(first) if first != call_key => {
                    return Err(ParseError::MixedFields {
                        first: first.field_path(),
                        other: call_key.field_path(),
                    });
                }
                Some(_) => {}
            }
            requirements.push(range);
        }
        match key {
            Some(key) => Ok(Self::from_requirements(key, requirements)),
            None => Err(ParseError::Empty), // unreachable: the grammar needs one call
        }
    }
}

impl FromStr for ShardSelector {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Str(String),
    Bytes,
    Dot,
    LParen,
    RParen,
    Comma,
    OrOr,
}

/// A token and the code point offset where it starts.
type Spanned = (Tok, usize);

fn unsupported(at: usize, what: &'static str) -> ParseError {
    ParseError::Unsupported { at, what }
}

fn syntax(at: usize, message: impl Into<String>) -> ParseError {
    ParseError::Syntax {
        at,
        message: message.into(),
    }
}

fn lex(text: &[char]) -> Result<Vec<Spanned>, ParseError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        let at = i;
        match c {
            // CEL's whitespace; anything else (NBSP, VT, …) is an error between tokens.
            '\t' | '\n' | '\r' | '\u{c}' | ' ' => i += 1,
            '/' if text.get(i + 1) == Some(&'/') => {
                while text.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '(' | ')' | ',' | '.' => {
                tokens.push((
                    match c {
                        '(' => Tok::LParen,
                        ')' => Tok::RParen,
                        ',' => Tok::Comma,
                        _ => Tok::Dot,
                    },
                    at,
                ));
                i += 1;
            }
            '|' if text.get(i + 1) == Some(&'|') => {
                tokens.push((Tok::OrOr, at));
                i += 2;
            }
            '\'' | '"' => {
                let (value, next) = lex_string(text, i, false)?;
                tokens.push((Tok::Str(value), at));
                i = next;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = i;
                while text
                    .get(end)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    end += 1;
                }
                let word: String = text[i..end].iter().collect();
                let quoted = matches!(text.get(end), Some('\'' | '"'));
                match word.as_str() {
                    "r" | "R" if quoted => {
                        let (value, next) = lex_string(text, end, true)?;
                        tokens.push((Tok::Str(value), at));
                        i = next;
                    }
                    "b" | "B" | "br" | "bR" | "Br" | "BR" if quoted => {
                        let raw = word.len() == 2;
                        let (_, next) = lex_string(text, end, raw)?;
                        tokens.push((Tok::Bytes, at));
                        i = next;
                    }
                    _ => {
                        tokens.push((Tok::Ident(word), at));
                        i = end;
                    }
                }
            }
            '`' => {
                return Err(unsupported(at, "backquoted identifier"));
            }
            _ => return Err(syntax(at, format!("unexpected character {c:?}"))),
        }
    }
    Ok(tokens)
}

/// Lexes the string literal whose opening quote is at `open`; returns its value and the offset
/// after the closing quote.
fn lex_string(text: &[char], open: usize, raw: bool) -> Result<(String, usize), ParseError> {
    let quote = text[open];
    if text.get(open + 1) == Some(&quote) && text.get(open + 2) == Some(&quote) {
        return Err(unsupported(open, "triple-quoted string"));
    }
    let mut value = String::new();
    let mut i = open + 1;
    loop {
        match text.get(i) {
            None | Some('\n' | '\r') => return Err(syntax(open, "unterminated string literal")),
            Some(&c) if c == quote => return Ok((value, i + 1)),
            Some('\\') if !raw => {
                return Err(unsupported(i, "escape sequence in a string literal"));
            }
            Some(&c) => value.push(c),
        }
        i += 1;
    }
}

/// Parses `term ('||' term)*` where `term` is a `shardRange(...)` call or a parenthesised
/// expression. `||` is associative, so grouping only has to balance: a depth counter replaces
/// recursion (no stack growth on hostile input).
fn parse_expression(
    tokens: &[Spanned],
    len: usize,
) -> Result<Vec<(ShardKey, ShardRange)>, ParseError> {
    let mut calls = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let at = |i: usize| tokens.get(i).map_or(len, |t| t.1);
    loop {
        // Expecting a term.
        match tokens.get(i) {
            Some((Tok::LParen, _)) => {
                depth += 1;
                if depth > MAX_GROUPING_DEPTH {
                    return Err(ParseError::TooDeep);
                }
                i += 1;
                continue;
            }
            Some((Tok::Ident(name), _)) => match tokens.get(i + 1) {
                Some((Tok::LParen, _)) if name == "shardRange" => {
                    let (call, next) = parse_call(tokens, i + 2, len)?;
                    calls.push(call);
                    i = next;
                }
                Some((Tok::LParen, _)) => {
                    return Err(ParseError::UnsupportedFunction(name.clone()));
                }
                Some((Tok::Dot, _)) => {
                    let (_, next) = parse_path(tokens, i, len)?;
                    if matches!(tokens.get(next), Some((Tok::LParen, _))) {
                        return Err(unsupported(at(i), "receiver-style call"));
                    }
                    return Err(syntax(
                        at(i),
                        "expected shardRange(...), found a field path",
                    ));
                }
                _ => {
                    return Err(syntax(
                        at(i),
                        format!("expected shardRange(...), found {name:?}"),
                    ));
                }
            },
            Some((Tok::OrOr, p)) => return Err(syntax(*p, "'||' without a left operand")),
            Some((_, p)) => return Err(syntax(*p, "expected shardRange(...)")),
            None => return Err(syntax(len, "expected shardRange(...) at the end")),
        }
        // After a term: closing parentheses, then '||' or the end.
        loop {
            match tokens.get(i) {
                Some((Tok::RParen, p)) => {
                    if depth == 0 {
                        return Err(syntax(*p, "unbalanced ')'"));
                    }
                    depth -= 1;
                    i += 1;
                }
                Some((Tok::OrOr, _)) => {
                    i += 1;
                    break;
                }
                Some((Tok::Dot, p)) => {
                    return Err(unsupported(*p, "receiver-style call"));
                }
                Some((_, p)) => return Err(syntax(*p, "expected '||' or the end")),
                None if depth > 0 => return Err(syntax(len, "missing ')'")),
                None => return Ok(calls),
            }
        }
    }
}

enum Arg {
    Path(String),
    Str(String),
    Bytes,
}

/// Parses the arguments of `shardRange(` starting at `i` (after the parenthesis); returns the
/// requirement and the index after `)`.
fn parse_call(
    tokens: &[Spanned],
    mut i: usize,
    len: usize,
) -> Result<((ShardKey, ShardRange), usize), ParseError> {
    let at = |i: usize| tokens.get(i).map_or(len, |t| t.1);
    let mut args = Vec::new();
    if matches!(tokens.get(i), Some((Tok::RParen, _))) {
        i += 1;
    } else {
        loop {
            let arg = match tokens.get(i) {
                Some((Tok::Ident(_), _)) => {
                    let (path, next) = parse_path(tokens, i, len)?;
                    i = next;
                    Arg::Path(path)
                }
                Some((Tok::Str(s), _)) => {
                    i += 1;
                    Arg::Str(s.clone())
                }
                Some((Tok::Bytes, _)) => {
                    i += 1;
                    Arg::Bytes
                }
                Some((Tok::LParen, p)) => {
                    return Err(unsupported(*p, "parenthesised argument"));
                }
                _ => return Err(syntax(at(i), "expected an argument")),
            };
            args.push(arg);
            match tokens.get(i) {
                Some((Tok::Comma, _)) => i += 1,
                Some((Tok::RParen, _)) => {
                    i += 1;
                    break;
                }
                Some((Tok::LParen, p)) => {
                    return Err(unsupported(*p, "call as an argument"));
                }
                _ => return Err(syntax(at(i), "expected ',' or ')'")),
            }
        }
    }
    let [field, start, end] =
        <[Arg; 3]>::try_from(args).map_err(|args| ParseError::ArgumentCount(args.len()))?;
    let key = match field {
        Arg::Path(path) => {
            ShardKey::from_field_path(&path).ok_or(ParseError::UnsupportedField(path))?
        }
        Arg::Str(_) | Arg::Bytes => return Err(ParseError::NotAFieldPath),
    };
    let (start_text, start) = hex_bound(start, "hexStart")?;
    let (end_text, end) = hex_bound(end, "hexEnd")?;
    let range = u64::try_from(start)
        .ok()
        .and_then(|s| ShardRange::new(s, end).ok())
        .ok_or(ParseError::EmptyRange {
            start: start_text,
            end: end_text,
        })?;
    Ok(((key, range), i))
}

/// `ident ('.' ident)*` starting at `i`; returns the dotted path and the index after it.
fn parse_path(tokens: &[Spanned], mut i: usize, len: usize) -> Result<(String, usize), ParseError> {
    let mut path = String::new();
    loop {
        match tokens.get(i) {
            Some((Tok::Ident(part), _)) => path.push_str(part),
            Some((_, p)) => return Err(syntax(*p, "expected a field name after '.'")),
            None => return Err(syntax(len, "expected a field name after '.'")),
        }
        i += 1;
        if matches!(tokens.get(i), Some((Tok::Dot, _)))
            && matches!(tokens.get(i + 1), Some((Tok::Ident(_), _)))
        {
            path.push('.');
            i += 1;
        } else if matches!(tokens.get(i), Some((Tok::Dot, _))) {
            return Err(syntax(tokens[i].1, "expected a field name after '.'"));
        } else {
            return Ok((path, i));
        }
    }
}

/// Validates a bound as the server does and returns it as written and as a number.
fn hex_bound(arg: Arg, bound: &'static str) -> Result<(String, u128), ParseError> {
    let value = match arg {
        Arg::Str(s) => s,
        Arg::Path(_) | Arg::Bytes => return Err(ParseError::NotAString(bound)),
    };
    let invalid = |problem: &'static str, value: &str| ParseError::InvalidHex {
        bound,
        problem,
        value: value.to_string(),
    };
    let Some(digits) = value.strip_prefix("0x") else {
        return Err(invalid("must have a '0x' prefix", &value));
    };
    if digits.is_empty() {
        return Err(invalid("needs hex digits after '0x'", &value));
    }
    if digits.len() > 17 {
        return Err(invalid("is longer than 17 hex digits", &value));
    }
    if !digits
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(invalid("has a character other than 0-9 and a-f", &value));
    }
    if digits.len() == 17 && digits != "10000000000000000" {
        return Err(invalid(
            "has 17 digits but is not 0x10000000000000000 (2^64)",
            &value,
        ));
    }
    if digits.len() < 16 {
        return Err(invalid("must have exactly 16 hex digits", &value));
    }
    match u128::from_str_radix(digits, 16) {
        Ok(n) if n <= HASH_SPACE_END => Ok((value, n)),
        _ => Err(invalid("is not a hash bound", &value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn errors_name_the_problem() {
        let e =
            ShardSelector::parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")
                .unwrap_err();
        assert!(
            matches!(
                e,
                ParseError::InvalidHex {
                    bound: "hexStart",
                    ..
                }
            ),
            "{e}"
        );
        let e =
            ShardSelector::parse("shardRange(object.metadata.name, '0x00', '0x80')").unwrap_err();
        assert_eq!(
            e,
            ParseError::UnsupportedField("object.metadata.name".into())
        );
        let e = ShardSelector::parse("shardRange(object.metadata.uid, '0x0')").unwrap_err();
        assert_eq!(e, ParseError::ArgumentCount(2));
        let e =
            ShardSelector::parse("invalidFunc(object.metadata.uid, '0x00', '0x80')").unwrap_err();
        assert_eq!(e, ParseError::UnsupportedFunction("invalidFunc".into()));
        assert_eq!(ShardSelector::parse(" \t\n"), Err(ParseError::Empty));
    }

    #[test]
    fn limits() {
        let one =
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')";
        let deep = format!("{}{one}{}", "(".repeat(248), ")".repeat(248));
        assert!(ShardSelector::parse(&deep).is_ok());
        let too_deep = format!("{}{one}{}", "(".repeat(249), ")".repeat(249));
        assert_eq!(ShardSelector::parse(&too_deep), Err(ParseError::TooDeep));
        let long = vec![one; 1200].join(" || ");
        assert_eq!(
            ShardSelector::parse(&long),
            Err(ParseError::TooLong(long.chars().count()))
        );
        let fits = vec![one; 1000].join(" || ");
        assert_eq!(
            ShardSelector::parse(&fits).map(|s| s.requirements().len()),
            Ok(1000)
        );
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,120}") {
            let _ = ShardSelector::parse(&s);
        }

        #[test]
        fn never_panics_on_selector_like_input(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("shardRange"), Just("("), Just(")"), Just(","), Just("||"), Just("."),
                    Just("object.metadata.namespace"), Just("object"), Just("'0x0000000000000000'"),
                    Just("'0x10000000000000000'"), Just("'0x8000000000000000'"), Just("'"), Just("\""),
                    Just("r'"), Just("b'"), Just("\\"), Just(" "), Just("//"), Just("\n"), Just("x"),
                ],
                0..24,
            )
        ) {
            let s: String = parts.concat();
            if let Ok(sel) = ShardSelector::parse(&s) {
                // Whatever parses re-parses to the same selector from its wire form.
                prop_assert_eq!(ShardSelector::parse(&sel.to_string()), Ok(sel));
            }
        }
    }
}
