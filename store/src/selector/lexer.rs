//! Tokenizer for the label selector string syntax (apimachinery `labels.Lexer`).
//!
//! Works on bytes like upstream: whitespace is space, tab, CR and LF; the special symbols
//! `= ! ( ) , > <` are scanned greedily into the longest operator token; everything else up
//! to whitespace or a special symbol is an identifier, or the keyword `in` / `notin`.
//! A NUL byte ends the input, as upstream's lexer uses 0 as its end marker.

/// A lexical token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn string_to_token(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

pub(crate) struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Lexer {
            s: s.as_bytes(),
            pos: 0,
        }
    }

    /// Next byte, or 0 at the end (the position only advances inside the input).
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    /// Steps back over the last byte read (only called after a non-zero byte).
    fn unread(&mut self) {
        self.pos -= 1;
    }

    fn skip_whitespace(&mut self, mut c: u8) -> u8 {
        while is_whitespace(c) {
            c = self.read();
        }
        c
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let start = self.pos;
        let mut end;
        loop {
            end = self.pos;
            let c = self.read();
            if c == 0 {
                break;
            }
            if is_special_symbol(c) || is_whitespace(c) {
                self.unread();
                break;
            }
        }
        let buf = &self.s[start..end];
        let lit = String::from_utf8_lossy(buf).into_owned();
        match string_to_token(buf) {
            Some(t) => (t, lit),
            None => (Token::Identifier, lit),
        }
    }

    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut buf: Vec<u8> = Vec::new();
        let mut last: Option<(Token, usize)> = None;
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if !is_special_symbol(c) {
                self.unread();
                break;
            }
            buf.push(c);
            if let Some(t) = string_to_token(&buf) {
                last = Some((t, buf.len()));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        match last {
            Some((t, len)) => (t, String::from_utf8_lossy(&buf[..len]).into_owned()),
            None => (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&buf)
                ),
            ),
        }
    }

    /// The next token and its literal text.
    pub(crate) fn lex(&mut self) -> (Token, String) {
        let first = self.read();
        let c = self.skip_whitespace(first);
        if c == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special_symbol(c) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

/// Every token of `s` with its literal, up to and including [`Token::EndOfString`].
pub(crate) fn lex_all(s: &str) -> Vec<(Token, String)> {
    let mut lexer = Lexer::new(s);
    let mut out = Vec::new();
    loop {
        let (t, lit) = lexer.lex();
        out.push((t, lit));
        if t == Token::EndOfString {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Port of upstream TestLexer.
    #[test]
    fn test_lexer() {
        let cases: &[(&str, Token)] = &[
            ("", Token::EndOfString),
            (",", Token::Comma),
            (")", Token::ClosedPar),
            ("(", Token::OpenPar),
            ("==", Token::DoubleEquals),
            ("=", Token::Equals),
            (">", Token::GreaterThan),
            ("<", Token::LessThan),
            ("!", Token::DoesNotExist),
            ("!=", Token::NotEquals),
            ("in", Token::In),
            ("notin", Token::NotIn),
            ("key", Token::Identifier),
            ("val", Token::Identifier),
            // Non-special characters are part of an identifier.
            ("~", Token::Identifier),
            ("||", Token::Identifier),
        ];
        for (s, want) in cases {
            let mut l = Lexer::new(s);
            let (t, lit) = l.lex();
            assert_eq!(t, *want, "input {s:?}");
            if t != Token::Error {
                assert_eq!(lit, *s, "input {s:?}");
            }
        }
    }

    #[test]
    fn lexer_longest_operator_and_error_token() {
        // "=!" is "=" then "!" (longest valid token); "!!" is "!" then "!".
        let toks: Vec<Token> = lex_all("=!").into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            toks,
            vec![Token::Equals, Token::DoesNotExist, Token::EndOfString]
        );
        let toks: Vec<Token> = lex_all("a!==b").into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            toks,
            vec![
                Token::Identifier,
                Token::NotEquals,
                Token::Equals,
                Token::Identifier,
                Token::EndOfString
            ]
        );
        // Like upstream, a NUL byte acts as an end marker inside an identifier scan.
        let toks: Vec<Token> = lex_all("a\0b").into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            toks,
            vec![Token::Identifier, Token::Identifier, Token::EndOfString]
        );
    }

    // Port of upstream TestLexerSequence (token sequences).
    #[test]
    fn test_lexer_sequence() {
        use Token::*;
        let cases: &[(&str, &[Token])] = &[
            (
                "key in ( value )",
                &[Identifier, In, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key notin ( value )",
                &[Identifier, NotIn, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key in ( value1, value2 )",
                &[
                    Identifier, In, OpenPar, Identifier, Comma, Identifier, ClosedPar,
                ],
            ),
            ("key", &[Identifier]),
            ("!key", &[DoesNotExist, Identifier]),
            ("()", &[OpenPar, ClosedPar]),
            (
                "x in (),y",
                &[Identifier, In, OpenPar, ClosedPar, Comma, Identifier],
            ),
            (
                "== != (), = notin",
                &[
                    DoubleEquals,
                    NotEquals,
                    OpenPar,
                    ClosedPar,
                    Comma,
                    Equals,
                    NotIn,
                ],
            ),
            ("key>2", &[Identifier, GreaterThan, Identifier]),
            ("key<1", &[Identifier, LessThan, Identifier]),
        ];
        for (s, want) in cases {
            let got: Vec<Token> = lex_all(s).into_iter().map(|(t, _)| t).collect();
            let mut want = want.to_vec();
            want.push(EndOfString);
            assert_eq!(got, want, "input {s:?}");
        }
    }
}
