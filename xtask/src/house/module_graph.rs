//! A crate target's modules, loaded from its root file through its `mod` declarations, and the
//! arrows between their files: which file's code names something another file defines.
//!
//! A path is resolved as the compiler would for the cases that matter here: `crate::`,
//! `super::`, `self::`, a child module's name, or a name a `use` brought in, then down through
//! child modules; a name a module re-exports (`pub use a::X`, `pub use a::*`) leads on to where
//! it is defined. A re-export is not an arrow of its own (it is an address, not a use), unless
//! the module's code also uses the name. Nor is a module's use of its ancestors' items (a
//! child's `super::Context`, everyone's `crate::workspace_root`): the module tree already
//! orders parent and child, and counting those would make every parent that calls its children
//! one circle with them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::lexer;
use super::module_syntax::{self, ModDecl, ModuleSyntax};

/// One module of a crate target.
#[derive(Debug)]
pub(crate) struct Module {
    /// The file it is written in (an inline module: its parent's file).
    pub file: PathBuf,
    pub parent: Option<usize>,
    pub children: BTreeMap<String, usize>,
    pub syntax: ModuleSyntax,
}

/// The modules of one crate target, the root first.
#[derive(Debug, Default)]
pub(crate) struct ModuleTree {
    pub modules: Vec<Module>,
}

/// An arrow from one file to another: `from`'s code at `line` names `path`, defined in `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Arrow {
    pub from: PathBuf,
    pub to: PathBuf,
    pub line: usize,
    pub path: String,
}

/// How many re-exports a resolution follows before it gives up (a chain longer than this is a
/// loop of globs).
const MAX_HOPS: usize = 16;

impl ModuleTree {
    /// Loads the target whose root is `root` (`src/lib.rs`, `tests/x.rs`, ...). A declared module
    /// whose file is missing is an error: the crate would not build either.
    pub(crate) fn load(root: &Path) -> anyhow::Result<ModuleTree> {
        let mut tree = ModuleTree::default();
        let syntax = read(root)?;
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        tree.add(root, None, syntax, &dir)?;
        Ok(tree)
    }

    /// Builds a tree from sources in memory, for tests: `files` maps a path to its text, the
    /// first entry is the root.
    #[cfg(test)]
    pub(crate) fn from_sources(files: &[(&str, &str)]) -> anyhow::Result<ModuleTree> {
        let dir = tempdir_with(files)?;
        let root = dir.join(files[0].0);
        let mut tree = ModuleTree::load(&root)?;
        for m in &mut tree.modules {
            if let Ok(rel) = m.file.strip_prefix(&dir) {
                m.file = rel.to_path_buf();
            }
        }
        std::fs::remove_dir_all(&dir).ok();
        Ok(tree)
    }

    /// Adds the module written in `file` (or inline in it) and, recursively, its children; `dir`
    /// is where its `mod name;` children live.
    fn add(
        &mut self,
        file: &Path,
        parent: Option<usize>,
        mut syntax: ModuleSyntax,
        dir: &Path,
    ) -> anyhow::Result<usize> {
        let id = self.modules.len();
        let inline = std::mem::take(&mut syntax.inline_modules);
        let declared = std::mem::take(&mut syntax.file_modules);
        self.modules.push(Module {
            file: file.to_path_buf(),
            parent,
            children: BTreeMap::new(),
            syntax,
        });
        for (decl, body) in inline {
            let child = self.add(file, Some(id), body, &dir.join(&decl.name))?;
            self.modules[id].children.insert(decl.name, child);
        }
        let file_dir = file.parent().unwrap_or(Path::new("."));
        for decl in declared {
            let child_file = module_file(file, file_dir, dir, &decl)?;
            let child_dir = child_dir(&child_file);
            let body = read(&child_file)?;
            let child = self.add(&child_file, Some(id), body, &child_dir)?;
            self.modules[id].children.insert(decl.name, child);
        }
        Ok(id)
    }

    /// Every arrow between two different files of this target.
    pub(crate) fn arrows(&self) -> Vec<Arrow> {
        let mut out = BTreeSet::new();
        for (id, m) in self.modules.iter().enumerate() {
            let mut add = |segments: &[String], line: usize| {
                if let Some(to) = self.resolve(id, segments, 0)
                    && !self.is_ancestor(to, id)
                {
                    let to = &self.modules[to].file;
                    if *to != m.file {
                        out.insert(Arrow {
                            from: m.file.clone(),
                            to: to.clone(),
                            line,
                            path: segments.join("::"),
                        });
                    }
                }
            };
            for u in &m.syntax.uses {
                let used = match &u.binding {
                    None => !u.public,
                    Some(name) => !u.public || m.syntax.idents.contains(name),
                };
                if used {
                    add(&u.segments, u.line);
                }
            }
            for p in &m.syntax.paths {
                add(&p.segments, p.line);
            }
        }
        out.into_iter().collect()
    }

    /// Whether `a` is `m`'s parent, or its parent's, and so on.
    fn is_ancestor(&self, a: usize, m: usize) -> bool {
        let mut at = self.modules[m].parent;
        while let Some(p) = at {
            if p == a {
                return true;
            }
            at = self.modules[p].parent;
        }
        false
    }

    /// The module in which the item `segments` names (as written in module `from`) is defined;
    /// `None` for anything outside the target (another crate, the standard library, a local
    /// variable's field).
    fn resolve(&self, from: usize, segments: &[String], hops: usize) -> Option<usize> {
        if hops > MAX_HOPS {
            return None;
        }
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" => self.walk(0, rest, hops),
            "self" => self.walk(from, rest, hops),
            "super" => {
                let mut at = self.modules[from].parent?;
                let mut rest = rest;
                while let Some(("super", more)) = rest.split_first().map(|(s, r)| (s.as_str(), r)) {
                    at = self.modules[at].parent?;
                    rest = more;
                }
                self.walk(at, rest, hops)
            }
            name => {
                let m = &self.modules[from];
                if m.children.contains_key(name) {
                    return self.walk(from, segments, hops);
                }
                let leaf = m
                    .syntax
                    .uses
                    .iter()
                    .find(|u| u.binding.as_deref() == Some(name))?;
                let at = self.resolve(from, &leaf.segments, hops + 1)?;
                self.walk_from_binding(at, &leaf.segments, rest, hops)
            }
        }
    }

    /// Goes on with `rest` after a `use` binding whose path `bound` resolved to `at`: into a
    /// module's children when the binding named a module, else `at` (an item's associated
    /// names live with it).
    fn walk_from_binding(
        &self,
        at: usize,
        bound: &[String],
        rest: &[String],
        hops: usize,
    ) -> Option<usize> {
        let names_module = bound.last().is_some_and(|last| {
            matches!(last.as_str(), "crate" | "self" | "super")
                || self.modules[at]
                    .parent
                    .is_some_and(|p| self.modules[p].children.get(last) == Some(&at))
        });
        if names_module {
            self.walk(at, rest, hops)
        } else {
            Some(at)
        }
    }

    /// From module `at`, the module defining `rest` (down through children and re-exports).
    fn walk(&self, at: usize, rest: &[String], hops: usize) -> Option<usize> {
        let Some((seg, more)) = rest.split_first() else {
            return Some(at);
        };
        let m = &self.modules[at];
        if let Some(&child) = m.children.get(seg) {
            return self.walk(child, more, hops);
        }
        if m.syntax.items.contains(seg) {
            return Some(at);
        }
        if let Some(leaf) = m
            .syntax
            .uses
            .iter()
            .find(|u| u.binding.as_deref() == Some(seg.as_str()))
        {
            return match self.resolve(at, &leaf.segments, hops + 1) {
                Some(to) => self.walk_from_binding(to, &leaf.segments, more, hops + 1),
                // Re-exported from another crate: an item of no file of ours.
                None => None,
            };
        }
        for glob in m.syntax.uses.iter().filter(|u| u.binding.is_none()) {
            let Some(source) = self.resolve(at, &glob.segments, hops + 1) else {
                continue;
            };
            if source != at && self.defines(source, seg, hops + 1) {
                return self.walk(source, rest, hops + 1);
            }
        }
        Some(at)
    }

    /// Whether module `at` has `name` as a child, an item or a binding, or re-exports it from
    /// a glob's source that has.
    fn defines(&self, at: usize, name: &str, hops: usize) -> bool {
        if hops > MAX_HOPS {
            return false;
        }
        let m = &self.modules[at];
        m.children.contains_key(name)
            || m.syntax.items.contains(name)
            || m.syntax.uses.iter().any(|u| match &u.binding {
                Some(b) => b == name,
                None => self
                    .resolve(at, &u.segments, hops + 1)
                    .is_some_and(|source| source != at && self.defines(source, name, hops + 1)),
            })
    }
}

fn read(file: &Path) -> anyhow::Result<ModuleSyntax> {
    let src =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(module_syntax::parse(&lexer::tokens(&src)))
}

/// The file of the module `decl` declares in `file`: its `#[path]` (relative to the declaring
/// file's folder), else `dir/name.rs` or `dir/name/mod.rs`.
fn module_file(
    file: &Path,
    file_dir: &Path,
    dir: &Path,
    decl: &ModDecl,
) -> anyhow::Result<PathBuf> {
    if let Some(p) = &decl.path_attr {
        return Ok(normalize(&file_dir.join(p)));
    }
    let flat = dir.join(format!("{}.rs", decl.name));
    if flat.is_file() {
        return Ok(flat);
    }
    let nested = dir.join(&decl.name).join("mod.rs");
    if nested.is_file() {
        return Ok(nested);
    }
    anyhow::bail!(
        "{}:{}: no file for `mod {};` (looked for {} and {})",
        file.display(),
        decl.line,
        decl.name,
        flat.display(),
        nested.display()
    )
}

/// `path` with its `.` and `..` components folded (`src/a/../b.rs` is `src/b.rs`), so that a
/// file reached through a `#[path]` is the same node as when reached directly.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where the `mod name;` children of the module in `file` live: beside it for `mod.rs` (and a
/// crate root, which the caller passes), else in the folder named after it.
fn child_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("."));
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod") => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
        None => dir.to_path_buf(),
    }
}

/// A fresh folder holding `files`.
#[cfg(test)]
fn tempdir_with(files: &[(&str, &str)]) -> anyhow::Result<PathBuf> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "xtask-house-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    for (path, text) in files {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, text)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrows(files: &[(&str, &str)]) -> Vec<(String, String, String)> {
        let tree = ModuleTree::from_sources(files).expect("loads");
        tree.arrows()
            .into_iter()
            .map(|a| {
                (
                    a.from.display().to_string(),
                    a.to.display().to_string(),
                    a.path,
                )
            })
            .collect()
    }

    fn arrow(from: &str, to: &str, path: &str) -> (String, String, String) {
        (from.into(), to.into(), path.into())
    }

    #[test]
    fn paths_resolve_to_the_file_that_defines_the_item() {
        let got = arrows(&[
            ("src/lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("src/a.rs", "pub struct A;\nfn f() { crate::b::g(); }\n"),
            ("src/b.rs", "use crate::A;\npub fn g() {}\n"),
        ]);
        assert_eq!(
            got,
            [
                arrow("src/a.rs", "src/b.rs", "crate::b::g"),
                arrow("src/b.rs", "src/a.rs", "crate::A"),
            ]
        );
    }

    #[test]
    fn globs_and_nested_modules_are_followed() {
        let got = arrows(&[
            ("src/lib.rs", "mod util;\npub use util::*;\nmod x;\n"),
            ("src/util/mod.rs", "mod deep;\npub use deep::*;\n"),
            ("src/util/deep.rs", "pub fn helper() {}\n"),
            ("src/x.rs", "fn f() { crate::helper(); }\n"),
        ]);
        assert_eq!(
            got,
            [arrow("src/x.rs", "src/util/deep.rs", "crate::helper")]
        );
    }

    #[test]
    fn a_test_module_of_the_same_file_is_no_arrow() {
        let got = arrows(&[(
            "src/lib.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        )]);
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn path_attributes_and_child_names_are_followed_ancestors_are_not() {
        let got = arrows(&[
            (
                "src/main.rs",
                "#[path = \"b_impl.rs\"]\nmod b;\nfn main() { b::run(); }\n",
            ),
            (
                "src/b_impl.rs",
                "pub fn run() { super::helper(); crate::helper(); }\n",
            ),
        ]);
        assert_eq!(got, [arrow("src/main.rs", "src/b_impl.rs", "b::run")]);
    }

    #[test]
    fn a_file_reached_through_dot_dot_is_the_same_file() {
        let got = arrows(&[
            (
                "src/lib.rs",
                "mod queue;\nmod primitives;\n#[cfg(test)]\nmod model;\n",
            ),
            ("src/queue.rs", "use super::primitives::Mutex;\n"),
            ("src/primitives.rs", "pub struct Mutex;\n"),
            (
                "src/model/mod.rs",
                "mod primitives;\n#[path = \"../queue.rs\"]\nmod queue;\nuse queue::Q;\n",
            ),
            ("src/model/primitives.rs", "pub struct Mutex;\n"),
        ]);
        assert_eq!(
            got,
            [
                arrow("src/model/mod.rs", "src/queue.rs", "queue::Q"),
                arrow(
                    "src/queue.rs",
                    "src/model/primitives.rs",
                    "super::primitives::Mutex"
                ),
                arrow(
                    "src/queue.rs",
                    "src/primitives.rs",
                    "super::primitives::Mutex"
                ),
            ]
        );
    }

    #[test]
    fn other_crates_and_a_missing_file_are_told_apart() {
        let got = arrows(&[(
            "src/lib.rs",
            "use std::io;\nfn f() { serde_json::json(); }\n",
        )]);
        assert!(got.is_empty());
        let err = ModuleTree::from_sources(&[("src/lib.rs", "mod gone;\n")]).unwrap_err();
        assert!(
            format!("{err:#}").contains("no file for `mod gone;`"),
            "{err:#}"
        );
    }
}
