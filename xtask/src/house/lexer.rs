//! Rust source as the tokens the house checks read: identifiers, `::`, punctuation and brackets,
//! each with its line. Comments (doc comments too) are dropped, and literals keep only what an
//! attribute needs (a string's text), so a path written in a comment or a string is never taken
//! for code.

/// One token of Rust source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier or keyword (`r#name` as `name`).
    Ident(String),
    /// `::`.
    PathSep,
    /// `(`, `[` or `{`.
    Open(char),
    /// `)`, `]` or `}`.
    Close(char),
    /// A string literal's text, escapes left as written (`None`: any other literal).
    Literal(Option<String>),
    /// Any other punctuation character (`;`, `#`, `!`, `*`, `,`, `=`, `<`, ...).
    Punct(char),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: usize,
}

/// The tokens of `src`. Unterminated comments and literals end at the end of the file (the
/// compiler reports them; the checks only need the code before them).
pub(crate) fn tokens(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while let Some(token) = lexer.next_token() {
        out.push(token);
    }
    out
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn next_token(&mut self) -> Option<Token> {
        loop {
            let c = self.peek(0)?;
            let line = self.line;
            let tok = match c {
                c if c.is_whitespace() => {
                    self.bump();
                    continue;
                }
                '/' if self.peek(1) == Some('/') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                '/' if self.peek(1) == Some('*') => {
                    self.block_comment();
                    continue;
                }
                '"' => {
                    self.bump();
                    Tok::Literal(Some(self.quoted()))
                }
                '\'' => match self.char_or_lifetime() {
                    Some(tok) => tok,
                    None => continue,
                },
                c if c.is_ascii_digit() => {
                    self.number();
                    Tok::Literal(None)
                }
                c if c == '_' || c.is_alphabetic() => self.word(),
                ':' if self.peek(1) == Some(':') => {
                    self.bump();
                    self.bump();
                    Tok::PathSep
                }
                '(' | '[' | '{' => {
                    self.bump();
                    Tok::Open(c)
                }
                ')' | ']' | '}' => {
                    self.bump();
                    Tok::Close(c)
                }
                other => {
                    self.bump();
                    Tok::Punct(other)
                }
            };
            return Some(Token { tok, line });
        }
    }

    /// `/* ... */`, nested as Rust nests them.
    fn block_comment(&mut self) {
        self.bump();
        self.bump();
        let mut depth = 1;
        while depth > 0 {
            match (self.peek(0), self.peek(1)) {
                (Some('/'), Some('*')) => {
                    self.bump();
                    self.bump();
                    depth += 1;
                }
                (Some('*'), Some('/')) => {
                    self.bump();
                    self.bump();
                    depth -= 1;
                }
                (Some(_), _) => {
                    self.bump();
                }
                (None, _) => return,
            }
        }
    }

    /// The rest of a `"..."` literal after its opening quote.
    fn quoted(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.bump() {
            match c {
                '"' => break,
                '\\' => {
                    text.push(c);
                    if let Some(escaped) = self.bump() {
                        text.push(escaped);
                    }
                }
                c => text.push(c),
            }
        }
        text
    }

    /// The rest of a raw literal after its `r`: `#`s, a quote, the text, the quote and as many
    /// `#`s.
    fn raw_quoted(&mut self) -> String {
        let mut hashes = 0;
        while self.peek(0) == Some('#') {
            self.bump();
            hashes += 1;
        }
        self.bump(); // the opening quote
        let mut text = String::new();
        while let Some(c) = self.bump() {
            if c == '"' && (0..hashes).all(|i| self.peek(i) == Some('#')) {
                for _ in 0..hashes {
                    self.bump();
                }
                break;
            }
            text.push(c);
        }
        text
    }

    /// A character literal (`'a'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`, `'static`): the
    /// first is a literal, the second no token at all.
    fn char_or_lifetime(&mut self) -> Option<Tok> {
        self.bump();
        if self.peek(0) == Some('\\') {
            while let Some(c) = self.bump() {
                if c == '\\' {
                    self.bump();
                } else if c == '\'' {
                    break;
                }
            }
            return Some(Tok::Literal(None));
        }
        if self.peek(1) == Some('\'') {
            self.bump();
            self.bump();
            return Some(Tok::Literal(None));
        }
        while self
            .peek(0)
            .is_some_and(|c| c == '_' || c.is_alphanumeric())
        {
            self.bump();
        }
        None
    }

    /// A number: digits, letters of a suffix or radix, `_`, and a `.` that a digit follows
    /// (`1.5`, not the `..` of `1..2`).
    fn number(&mut self) {
        while let Some(c) = self.peek(0) {
            let fraction = c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit());
            if c == '_' || c.is_ascii_alphanumeric() || fraction {
                self.bump();
            } else {
                break;
            }
        }
    }

    /// An identifier, a raw identifier, or a prefixed literal (`b"..."`, `r#"..."#`, `b'x'`,
    /// `c"..."`, `br"..."`).
    fn word(&mut self) -> Tok {
        let start = self.at;
        let prefix: String = self.chars[start..]
            .iter()
            .take(2)
            .take_while(|c| matches!(c, 'b' | 'r' | 'c'))
            .collect();
        for p in [prefix.as_str(), prefix.get(..1).unwrap_or("")] {
            if p.is_empty() {
                continue;
            }
            let after = self.peek(p.len());
            let raw = p.ends_with('r');
            if after == Some('"') || (raw && after == Some('#') && self.raw_string_follows(p.len()))
            {
                for _ in 0..p.len() {
                    self.bump();
                }
                let text = if raw {
                    self.raw_quoted()
                } else {
                    self.bump();
                    self.quoted()
                };
                return Tok::Literal(Some(text));
            }
            if p == "b" && after == Some('\'') {
                self.bump();
                self.char_or_lifetime();
                return Tok::Literal(None);
            }
        }
        if prefix.starts_with('r') && self.peek(1) == Some('#') {
            // r#ident
            self.bump();
            self.bump();
        }
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|c| *c == '_' || c.is_alphanumeric()) {
            name.push(c);
            self.bump();
        }
        Tok::Ident(name)
    }

    /// Whether `#`s then a quote start `ahead` characters on (a raw string, not `r#ident`).
    fn raw_string_follows(&self, ahead: usize) -> bool {
        let mut i = ahead;
        while self.peek(i) == Some('#') {
            i += 1;
        }
        self.peek(i) == Some('"')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokens(src)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_and_literals_hide_their_words() {
        let src = "a // crate::x\n/* b /* nested */ crate::y */ c \"crate::z\" r#\"q\"# \
                   br\"w\" b'e' 'f' '\\n' d";
        assert_eq!(idents(src), ["a", "c", "d"]);
    }

    #[test]
    fn lifetimes_are_not_characters() {
        assert_eq!(
            idents("fn f<'a>(x: &'a str) -> &'static str"),
            ["fn", "f", "x", "str", "str"]
        );
        assert_eq!(idents("let c = '{'; g"), ["let", "c", "g"]);
    }

    #[test]
    fn raw_identifiers_lose_their_prefix_and_lines_are_counted() {
        let t = tokens("r#type\n\nb::c");
        assert_eq!(t[0].tok, Tok::Ident("type".into()));
        assert_eq!(t[1].line, 3);
        assert_eq!(t[2].tok, Tok::PathSep);
    }

    #[test]
    fn strings_keep_their_text_for_attributes() {
        let t = tokens("#[path = \"a_b.rs\"]");
        assert!(t.contains(&Token {
            tok: Tok::Literal(Some("a_b.rs".into())),
            line: 1
        }));
    }

    #[test]
    fn numbers_do_not_swallow_ranges_or_fields() {
        let t = tokens("0..n t.0 1.5e3f64");
        let kinds: Vec<&Tok> = t.iter().map(|t| &t.tok).collect();
        assert_eq!(
            kinds,
            [
                &Tok::Literal(None),
                &Tok::Punct('.'),
                &Tok::Punct('.'),
                &Tok::Ident("n".into()),
                &Tok::Ident("t".into()),
                &Tok::Punct('.'),
                &Tok::Literal(None),
                &Tok::Literal(None),
            ]
        );
    }
}
