//! Parser for the label selector string syntax (apimachinery `labels.Parser`).

use super::error::SelectorError;
use super::lexer::{Token, lex_all};
use super::requirement::{Operator, Requirement, validate_label_key};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// After a key: `in` / `notin` are operators.
    KeyAndOperator,
    /// Elsewhere: `in` / `notin` are plain identifiers.
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

fn syntax(msg: String) -> SelectorError {
    SelectorError::Syntax(msg)
}

impl Parser {
    fn peek(&self, ctx: Context) -> (Token, &str) {
        // The token list always ends with EndOfString and we never move past it.
        let (t, lit) = &self.items[self.pos.min(self.items.len() - 1)];
        let t = match (ctx, *t) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
            (_, t) => t,
        };
        (t, lit.as_str())
    }

    fn next(&mut self, ctx: Context) -> (Token, String) {
        let (t, lit) = self.peek(ctx);
        let out = (t, lit.to_string());
        if self.pos < self.items.len() - 1 {
            self.pos += 1;
        }
        out
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            let (t, lit) = self.peek(Context::Values);
            match t {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| SelectorError::Requirement(Box::new(e)))?;
                    reqs.push(r);
                    let (t, lit) = self.next(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, lit2) = self.peek(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(syntax(format!(
                                    "found '{lit2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(syntax(format!(
                                "found '{lit}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = op {
            return Requirement::new(&key, op, Vec::<String>::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, op, values)
    }

    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(String, Option<Operator>), SelectorError> {
        let mut op = None;
        let (mut t, mut lit) = self.next(Context::Values);
        if t == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (t, lit) = self.next(Context::Values);
        }
        if t != Token::Identifier {
            return Err(syntax(format!("found '{lit}', expected: identifier")));
        }
        // Upstream validates the key here with the parser's (nil) field path, which Go
        // prints as "<nil>".
        if let Some(e) = validate_label_key(&lit, "<nil>") {
            return Err(SelectorError::Invalid(vec![e]));
        }
        let (next, _) = self.peek(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && op.is_none() {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let (t, lit) = self.next(Context::KeyAndOperator);
        Ok(match t {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(syntax(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    /// `( v1, v2, ... )`; returns the sorted, deduplicated values.
    fn parse_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let (t, lit) = self.next(Context::Values);
        if t != Token::OpenPar {
            return Err(syntax(format!("found '{lit}' expected: '('")));
        }
        let (t, lit) = self.peek(Context::Values);
        let lit = lit.to_string();
        match t {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.next(Context::Values);
                if t != Token::ClosedPar {
                    return Err(syntax(format!("found '{lit}', expected: ')'")));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.next(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(syntax(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, SelectorError> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (t, lit) = self.next(Context::Values);
            match t {
                Token::Identifier => {
                    set.insert(lit);
                    let (t2, lit2) = self.peek(Context::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => {
                            return Err(syntax(format!("found '{lit2}', expected: ',' or ')'")));
                        }
                    }
                }
                Token::Comma => {
                    // "(,", ",)" and ",," denote empty values.
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (t2, _) = self.peek(Context::Values);
                    if t2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if t2 == Token::Comma {
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    /// A single value after `=`, `==`, `!=`, `>`, `<`; nothing before `,`/end = empty value.
    fn parse_exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (t, _) = self.peek(Context::Values);
        if matches!(t, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.next(Context::Values);
        if t == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(syntax(format!("found '{lit}', expected: identifier")))
    }
}

/// Parses a selector string into its requirements, sorted by key.
pub(crate) fn parse(s: &str) -> Result<Vec<Requirement>, SelectorError> {
    let mut p = Parser {
        items: lex_all(s),
        pos: 0,
    };
    let mut reqs = p.parse()?;
    reqs.sort_by(|a, b| a.key().cmp(b.key()));
    Ok(reqs)
}
