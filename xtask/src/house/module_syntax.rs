//! What the circle check reads from one module's tokens: its `use` declarations, the paths its
//! code names, the modules it declares (in files of their own or inline), and the names of the
//! items it defines. A syntactic reading, no macro expansion: a path a macro builds is not seen,
//! one written in a macro's arguments is.

use std::collections::BTreeSet;

use super::lexer::{Tok, Token};

/// One module's declarations, its inline child modules parsed apart.
#[derive(Debug, Default)]
pub(crate) struct ModuleSyntax {
    /// Every leaf of every `use` declaration in the module (in functions too).
    pub uses: Vec<UseLeaf>,
    /// Paths of two or more segments written in code, outside `use` declarations.
    pub paths: Vec<PathRef>,
    /// `mod name;`: modules in files of their own.
    pub file_modules: Vec<ModDecl>,
    /// `mod name { ... }`: modules in this file.
    pub inline_modules: Vec<(ModDecl, ModuleSyntax)>,
    /// Names of the items this module defines at its top level.
    pub items: BTreeSet<String>,
    /// Identifiers of the module's code outside `use` declarations.
    pub idents: BTreeSet<String>,
}

/// A `mod` declaration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModDecl {
    pub name: String,
    pub line: usize,
    /// The file a `#[path = "..."]` attribute names.
    pub path_attr: Option<String>,
}

/// One leaf of a `use` tree: `use a::{b, c::d as e, f::*}` has three.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UseLeaf {
    /// The path, `self` leaves folded into their parent.
    pub segments: Vec<String>,
    /// The name the leaf binds, `None` for a glob.
    pub binding: Option<String>,
    /// Declared `pub` (any `pub(...)` too): a re-export.
    pub public: bool,
    pub line: usize,
}

/// A path written in code (`crate::a::f`, `super::T`, `child::g`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PathRef {
    pub segments: Vec<String>,
    pub line: usize,
}

/// Keywords that open an item whose name follows.
const ITEM_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// Reads a module's syntax from `tokens` (a whole file, or an inline module's body).
pub(crate) fn parse(tokens: &[Token]) -> ModuleSyntax {
    let mut m = ModuleSyntax::default();
    let mut attrs: Vec<&[Token]> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let line = tokens[i].line;
        match &tokens[i].tok {
            Tok::Punct('#') => {
                let open = if matches!(tok(tokens, i + 1), Some(Tok::Punct('!'))) {
                    i + 2
                } else {
                    i + 1
                };
                if matches!(tok(tokens, open), Some(Tok::Open('['))) {
                    let close = matching(tokens, open);
                    attrs.push(&tokens[open + 1..close.min(tokens.len())]);
                    i = close + 1;
                    continue;
                }
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(Tok::Ident(name)), Some(next)) =
                    (tok(tokens, i + 1), tok(tokens, i + 2))
                {
                    let decl = ModDecl {
                        name: name.clone(),
                        line,
                        path_attr: attrs.iter().find_map(|a| path_attribute(a)),
                    };
                    attrs.clear();
                    if *next == Tok::Punct(';') {
                        m.file_modules.push(decl);
                        i += 3;
                        continue;
                    }
                    if *next == Tok::Open('{') {
                        let close = matching(tokens, i + 2);
                        let body = &tokens[i + 3..close.min(tokens.len())];
                        m.inline_modules.push((decl, parse(body)));
                        i = close + 1;
                        continue;
                    }
                }
            }
            Tok::Ident(kw)
                if kw == "use" && !matches!(tok(tokens, i + 1), Some(Tok::Punct('<'))) =>
            {
                let public = is_public(tokens, i);
                i = use_tree(tokens, i + 1, &[], public, line, &mut m.uses);
                continue;
            }
            Tok::Ident(kw) if depth == 0 && ITEM_KEYWORDS.contains(&kw.as_str()) => {
                if let Some(Tok::Ident(name)) = tok(tokens, i + 1) {
                    m.items.insert(name.clone());
                }
            }
            Tok::Ident(kw) if depth == 0 && kw == "macro_rules" => {
                if let Some(Tok::Ident(name)) = tok(tokens, i + 2) {
                    m.items.insert(name.clone());
                }
            }
            Tok::Ident(first) => {
                let after_sep = i > 0 && tokens[i - 1].tok == Tok::PathSep;
                let (segments, next) = path_at(tokens, i);
                m.idents.extend(segments.iter().cloned());
                if segments.len() >= 2 && !after_sep {
                    m.paths.push(PathRef { segments, line });
                } else if segments.is_empty() {
                    m.idents.insert(first.clone());
                }
                i = next.max(i + 1);
                continue;
            }
            Tok::Open('{') => {
                depth += 1;
                attrs.clear();
            }
            Tok::Close('}') => {
                depth = depth.saturating_sub(1);
                attrs.clear();
            }
            Tok::Punct(';') => attrs.clear(),
            _ => {}
        }
        i += 1;
    }
    m
}

fn tok(tokens: &[Token], i: usize) -> Option<&Tok> {
    tokens.get(i).map(|t| &t.tok)
}

/// The index of the bracket closing the one opened at `open` (`tokens.len()` if none does).
fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The file of a `path = "..."` attribute.
fn path_attribute(attr: &[Token]) -> Option<String> {
    match attr {
        [
            Token {
                tok: Tok::Ident(p), ..
            },
            Token {
                tok: Tok::Punct('='),
                ..
            },
            Token {
                tok: Tok::Literal(Some(file)),
                ..
            },
        ] if p == "path" => Some(file.clone()),
        _ => None,
    }
}

/// Whether the `use` at `at` is declared `pub` or `pub(...)`.
fn is_public(tokens: &[Token], at: usize) -> bool {
    let Some(mut before) = at.checked_sub(1) else {
        return false;
    };
    if tokens[before].tok == Tok::Close(')') {
        while before > 0 && tokens[before].tok != Tok::Open('(') {
            before -= 1;
        }
        let Some(b) = before.checked_sub(1) else {
            return false;
        };
        before = b;
    }
    tokens[before].tok == Tok::Ident("pub".into())
}

/// The path starting at `at` (`a::b::c`, stopping before `::<` or `::{`) and the index after
/// it; no segments when the identifier at `at` is not followed by `::`.
fn path_at(tokens: &[Token], at: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    let mut i = at;
    while let Some(Tok::Ident(s)) = tok(tokens, i) {
        segments.push(s.clone());
        if tok(tokens, i + 1) == Some(&Tok::PathSep)
            && matches!(tok(tokens, i + 2), Some(Tok::Ident(_)))
        {
            i += 2;
        } else {
            i += 1;
            break;
        }
    }
    if segments.len() < 2 {
        return (Vec::new(), at + 1);
    }
    (segments, i)
}

/// Reads a `use` tree from `at` (after `use`, or inside braces), adding its leaves under
/// `prefix`; returns the index after it (after the `;` at the top level).
fn use_tree(
    tokens: &[Token],
    mut at: usize,
    prefix: &[String],
    public: bool,
    line: usize,
    out: &mut Vec<UseLeaf>,
) -> usize {
    let top = prefix.is_empty();
    let mut segments = prefix.to_vec();
    loop {
        match tok(tokens, at) {
            Some(Tok::PathSep) if segments.is_empty() => {
                // `use ::name`: an external crate.
                segments.push("::".into());
                at += 1;
            }
            Some(Tok::PathSep) => at += 1,
            Some(Tok::Ident(s)) if s != "as" => {
                segments.push(s.clone());
                at += 1;
                if tok(tokens, at) == Some(&Tok::PathSep) {
                    continue;
                }
                let mut binding = None;
                if tok(tokens, at) == Some(&Tok::Ident("as".into())) {
                    if let Some(Tok::Ident(alias)) = tok(tokens, at + 1) {
                        binding = Some(alias.clone());
                    }
                    at += 2;
                }
                if segments.len() > 1 && segments.last().is_some_and(|s| s == "self") {
                    segments.pop();
                }
                let binding = binding.or_else(|| segments.last().cloned());
                out.push(UseLeaf {
                    segments,
                    binding,
                    public,
                    line,
                });
                break;
            }
            Some(Tok::Punct('*')) => {
                out.push(UseLeaf {
                    segments,
                    binding: None,
                    public,
                    line,
                });
                at += 1;
                break;
            }
            Some(Tok::Open('{')) => {
                at += 1;
                loop {
                    match tok(tokens, at) {
                        Some(Tok::Close('}')) => {
                            at += 1;
                            break;
                        }
                        Some(Tok::Punct(',')) => at += 1,
                        Some(_) => {
                            let next = use_tree(tokens, at, &segments, public, line, out);
                            at = next.max(at + 1);
                        }
                        None => break,
                    }
                }
                break;
            }
            _ => break,
        }
    }
    if top {
        while let Some(t) = tok(tokens, at) {
            at += 1;
            if *t == Tok::Punct(';') {
                break;
            }
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokens;
    use super::*;

    fn leaves(src: &str) -> Vec<(String, Option<String>, bool)> {
        parse(&tokens(src))
            .uses
            .into_iter()
            .map(|u| (u.segments.join("::"), u.binding, u.public))
            .collect()
    }

    #[test]
    fn use_trees_become_leaves() {
        let got = leaves(
            "use crate::a::{self, b, c::{d as e, *}};\npub(crate) use super::f;\nuse std::io;",
        );
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            got,
            [
                ("crate::a".into(), s("a"), false),
                ("crate::a::b".into(), s("b"), false),
                ("crate::a::c::d".into(), s("e"), false),
                ("crate::a::c".into(), None, false),
                ("super::f".into(), s("f"), true),
                ("std::io".into(), s("io"), false),
            ]
        );
    }

    #[test]
    fn modules_items_and_paths_are_read() {
        let src = "#[path = \"x_y.rs\"]\nmod x;\npub(crate) mod y;\n\
                   fn f() { let v = crate::a::B::new(); super::g(); use self::y::Z; }\n\
                   struct S;\n#[cfg(test)]\nmod tests {\n use super::*;\n fn t() {}\n}\n\
                   impl T for S { fn inner() {} }\nfn h() -> impl Sized + use<> {}";
        let m = parse(&tokens(src));
        assert_eq!(
            m.file_modules,
            [
                ModDecl {
                    name: "x".into(),
                    line: 2,
                    path_attr: Some("x_y.rs".into())
                },
                ModDecl {
                    name: "y".into(),
                    line: 3,
                    path_attr: None
                },
            ]
        );
        let paths: Vec<String> = m.paths.iter().map(|p| p.segments.join("::")).collect();
        assert_eq!(paths, ["crate::a::B::new", "super::g"]);
        assert_eq!(m.uses.len(), 1);
        assert_eq!(m.uses[0].segments, ["self", "y", "Z"]);
        let items: Vec<&str> = m.items.iter().map(String::as_str).collect();
        assert_eq!(items, ["S", "f", "h"]);
        assert_eq!(m.inline_modules.len(), 1);
        let (decl, tests) = &m.inline_modules[0];
        assert_eq!(decl.name, "tests");
        assert_eq!(tests.uses[0].segments, ["super"]);
        assert_eq!(tests.uses[0].binding, None);
    }
}
