//! A crate's public items, read from rustdoc's JSON output (`--output-format json`) with
//! serde_json and no typed model of it (that format changes between toolchains; this reader
//! names the one shape it knows, [`KNOWN_FORMAT`], and fails clearly on another).
//!
//! The walk starts at the crate's root module and goes through public modules and `use` items,
//! so an item is listed at every path a user can name it by (a re-export at the path it is
//! re-exported to, a glob's items in the module that globs them). Each line is a kind and a
//! path: `mod`, `struct`, `enum`, `union`, `trait`, `fn`, `const`, `static`, `type`, `macro`,
//! then the members a user can reach — inherent methods and constants (`fn kcm_store::Store::get`),
//! public fields, enum variants and the fields of struct variants, trait items — and the traits
//! a type implements (`impl core::clone::Clone for kcm_store::Store`; derived ones included,
//! auto traits and blanket impls not). An item of another crate re-exported names its source:
//! `struct kcm_reflector::CancellationToken = tokio_util::sync::CancellationToken`.

use std::collections::BTreeSet;

use anyhow::{Context, bail};
use serde_json::Value;

/// The `format_version` this reader was written against (rustdoc of Rust 1.95). An older one is
/// refused; a newer one is read, and fails with its version named if its shape differs.
pub(crate) const KNOWN_FORMAT: u64 = 57;

/// The sorted public item lines of the crate documented in `doc`.
pub(crate) fn public_items(doc: &Value) -> anyhow::Result<Vec<String>> {
    let version = doc["format_version"]
        .as_u64()
        .context("not rustdoc JSON: no `format_version`")?;
    if version < KNOWN_FORMAT {
        bail!(
            "rustdoc JSON format_version {version} is older than the {KNOWN_FORMAT} this reader \
             knows (xtask/src/api/rustdoc_json.rs): use the workspace's toolchain"
        );
    }
    let walk = Walk {
        doc,
        lines: BTreeSet::new(),
        stack: Vec::new(),
    };
    walk.run()
        .with_context(|| format!("reading rustdoc JSON format_version {version}, written against {KNOWN_FORMAT}: update xtask/src/api/rustdoc_json.rs to its shape"))
}

struct Walk<'a> {
    doc: &'a Value,
    lines: BTreeSet<String>,
    /// The modules being walked, against `pub use` loops.
    stack: Vec<String>,
}

impl<'a> Walk<'a> {
    fn run(mut self) -> anyhow::Result<Vec<String>> {
        let root = key(&self.doc["root"]).context("no `root`")?;
        let item = self.item(&root)?;
        let name = item["name"]
            .as_str()
            .context("the root module has no name")?;
        self.module(&root, name)?;
        Ok(self.lines.into_iter().collect())
    }

    /// The item of id `id` in the index.
    fn item(&self, id: &str) -> anyhow::Result<&'a Value> {
        let item = &self.doc["index"][id];
        if item.is_null() {
            bail!("item {id} is not in the index");
        }
        Ok(item)
    }

    /// The kind and contents of an item: `("module", {...})`.
    fn inner(item: &'a Value) -> anyhow::Result<(&'a str, &'a Value)> {
        let inner = item["inner"]
            .as_object()
            .with_context(|| format!("item {} has no `inner` object", item["id"]))?;
        let (kind, value) = inner
            .iter()
            .next()
            .with_context(|| format!("item {} has an empty `inner`", item["id"]))?;
        Ok((kind.as_str(), value))
    }

    /// The items of module `id`, reachable as `path::…`.
    fn module(&mut self, id: &str, path: &str) -> anyhow::Result<()> {
        if self.stack.iter().any(|s| s == id) {
            return Ok(());
        }
        self.stack.push(id.to_string());
        let item = self.item(id)?;
        let (_, module) = Self::inner(item)?;
        let items = ids(&module["items"]).with_context(|| format!("module {path} has no items"))?;
        for child in items {
            let child_item = self.item(&child)?;
            if child_item["visibility"] != "public" {
                continue;
            }
            let (kind, inner) = Self::inner(child_item)?;
            if kind == "use" {
                self.reexport(inner, path)?;
            } else if let Some(name) = child_item["name"].as_str() {
                self.named(&child, &format!("{path}::{name}"))?;
            }
        }
        self.stack.pop();
        Ok(())
    }

    /// A `pub use` in module `path`.
    fn reexport(&mut self, u: &Value, path: &str) -> anyhow::Result<()> {
        let target = key(&u["id"]);
        let source = u["source"].as_str().unwrap_or("?");
        let local = target
            .as_deref()
            .filter(|t| !self.doc["index"][*t].is_null());
        if u["is_glob"].as_bool() == Some(true) {
            match local {
                Some(t) => self.glob(t, path)?,
                None => {
                    self.lines.insert(format!("use {path}::* = {source}::*"));
                }
            }
            return Ok(());
        }
        let name = u["name"].as_str().context("a `use` without a name")?;
        let at = format!("{path}::{name}");
        match local {
            Some(t) => self.named(t, &at)?,
            None => {
                let kind = target
                    .as_deref()
                    .and_then(|t| self.doc["paths"][t]["kind"].as_str())
                    .unwrap_or("item");
                self.lines
                    .insert(format!("{} {at} = {source}", kind_word(kind)));
            }
        }
        Ok(())
    }

    /// The items a glob re-exports from module (or enum) `id` into `path`.
    fn glob(&mut self, id: &str, path: &str) -> anyhow::Result<()> {
        let item = self.item(id)?;
        let (kind, inner) = Self::inner(item)?;
        if kind == "enum" {
            for v in ids(&inner["variants"]).context("an enum without variants")? {
                if let Some(name) = self.item(&v)?["name"].as_str() {
                    self.lines.insert(format!("variant {path}::{name}"));
                }
            }
            return Ok(());
        }
        // A glob of a module re-exports its public items (a private module's too).
        self.module(id, path)
    }

    /// Item `id`, reachable as `path`, and its members.
    fn named(&mut self, id: &str, path: &str) -> anyhow::Result<()> {
        let item = self.item(id)?;
        let (kind, inner) = Self::inner(item)?;
        match kind {
            "module" => {
                self.lines.insert(format!("mod {path}"));
                self.module(id, path)?;
            }
            "struct" | "union" | "enum" => {
                self.lines.insert(format!("{kind} {path}"));
                self.fields(inner, path)?;
                if kind == "enum" {
                    self.variants(inner, path)?;
                }
                self.impls(inner, path)?;
            }
            "trait" => {
                self.lines.insert(format!("trait {path}"));
                for member in ids(&inner["items"]).context("a trait without items")? {
                    self.member(&member, path, false)?;
                }
            }
            "use" => self.reexport(inner, path.rsplit_once("::").map_or(path, |(p, _)| p))?,
            other => {
                self.lines.insert(format!("{} {path}", kind_word(other)));
            }
        }
        Ok(())
    }

    /// The public fields of a struct or union (`kind.plain.fields`, `kind.tuple`, `fields`).
    fn fields(&mut self, inner: &Value, path: &str) -> anyhow::Result<()> {
        let kind = &inner["kind"];
        let fields = if let Some(plain) = kind.get("plain") {
            ids(&plain["fields"]).context("a struct without fields")?
        } else if let Some(tuple) = kind.get("tuple") {
            ids(tuple).unwrap_or_default()
        } else {
            ids(&inner["fields"]).unwrap_or_default()
        };
        for f in fields {
            let field = self.item(&f)?;
            if field["visibility"] == "public"
                && let Some(name) = field["name"].as_str()
            {
                self.lines.insert(format!("field {path}::{name}"));
            }
        }
        Ok(())
    }

    /// An enum's variants, and the fields of its struct variants.
    fn variants(&mut self, inner: &Value, path: &str) -> anyhow::Result<()> {
        for v in ids(&inner["variants"]).context("an enum without variants")? {
            let variant = self.item(&v)?;
            let name = variant["name"]
                .as_str()
                .context("a variant without a name")?;
            self.lines.insert(format!("variant {path}::{name}"));
            let (_, vinner) = Self::inner(variant)?;
            if let Some(fields) = vinner["kind"].get("struct") {
                for f in ids(&fields["fields"]).unwrap_or_default() {
                    if let Some(fname) = self.item(&f)?["name"].as_str() {
                        self.lines.insert(format!("field {path}::{name}::{fname}"));
                    }
                }
            }
        }
        Ok(())
    }

    /// A type's inherent public members and the traits it implements.
    fn impls(&mut self, inner: &Value, path: &str) -> anyhow::Result<()> {
        for i in ids(&inner["impls"]).context("a type without `impls`")? {
            let (_, imp) = Self::inner(self.item(&i)?)?;
            if imp["is_synthetic"].as_bool() == Some(true) || !imp["blanket_impl"].is_null() {
                continue;
            }
            let trait_ = &imp["trait"];
            if trait_.is_null() {
                for member in ids(&imp["items"]).context("an impl without items")? {
                    self.member(&member, path, true)?;
                }
            } else {
                let name = key(&trait_["id"])
                    .and_then(|t| self.doc["paths"][t.as_str()]["path"].as_array().cloned())
                    .map(|segments| {
                        segments
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join("::")
                    })
                    .or_else(|| trait_["path"].as_str().map(str::to_string))
                    .context("a trait impl without a trait path")?;
                let negative = if imp["is_negative"].as_bool() == Some(true) {
                    "!"
                } else {
                    ""
                };
                self.lines
                    .insert(format!("impl {negative}{name} for {path}"));
            }
        }
        Ok(())
    }

    /// A method, associated constant or type of `owner` (public ones only when `inherent`: a
    /// trait's items are as public as the trait).
    fn member(&mut self, id: &str, owner: &str, inherent: bool) -> anyhow::Result<()> {
        let item = self.item(id)?;
        if inherent && item["visibility"] != "public" {
            return Ok(());
        }
        let name = item["name"].as_str().context("a member without a name")?;
        let (kind, _) = Self::inner(item)?;
        self.lines
            .insert(format!("{} {owner}::{name}", kind_word(kind)));
        Ok(())
    }
}

/// The word a line uses for a rustdoc item kind.
fn kind_word(kind: &str) -> &str {
    match kind {
        "function" => "fn",
        "constant" | "assoc_const" => "const",
        "type_alias" | "assoc_type" => "type",
        "module" => "mod",
        "proc_macro" => "macro",
        other => other,
    }
}

/// An id as the index's keys spell it (ids are numbers in recent formats, strings before).
fn key(id: &Value) -> Option<String> {
    match id {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// A list of ids (a `null` entry, a stripped tuple field, is left out).
fn ids(list: &Value) -> Option<Vec<String>> {
    Some(list.as_array()?.iter().filter_map(key).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(id: u64, name: Option<&str>, vis: &str, inner: Value) -> (String, Value) {
        (
            id.to_string(),
            json!({"id": id, "crate_id": 0, "name": name, "visibility": vis, "inner": inner}),
        )
    }

    /// A crate `c`: `pub mod m { pub struct S { pub x: u8, y: u8 } impl S { pub fn new() } }`,
    /// `mod hidden { pub fn f() }`, `pub use m::S as T; pub use hidden::*;`,
    /// `pub use tokio_util::sync::CancellationToken;`, `pub enum E { A, B { z: u8 } }`,
    /// `pub trait Tr { fn go(); }`, and `impl Clone for S` beside an auto trait impl.
    fn doc() -> Value {
        let index: serde_json::Map<String, Value> = [
            item(0, Some("c"), "public", json!({"module": {"is_crate": true, "items": [1, 20, 21, 22, 23, 30, 40, 2]}})),
            item(1, Some("m"), "public", json!({"module": {"items": [3]}})),
            item(2, Some("hidden"), "default", json!({"module": {"items": [6]}})),
            item(3, Some("S"), "public", json!({"struct": {"kind": {"plain": {"fields": [4, 5]}}, "impls": [7, 9, 10]}})),
            item(4, Some("x"), "public", json!({"struct_field": {}})),
            item(5, Some("y"), "default", json!({"struct_field": {}})),
            item(6, Some("f"), "public", json!({"function": {}})),
            item(7, None, "default", json!({"impl": {"trait": null, "items": [8], "is_synthetic": false, "blanket_impl": null}})),
            item(8, Some("new"), "public", json!({"function": {}})),
            item(9, None, "default", json!({"impl": {"trait": {"path": "Clone", "id": 100}, "items": [], "is_synthetic": false, "blanket_impl": null}})),
            item(10, None, "default", json!({"impl": {"trait": {"path": "Send", "id": 101}, "items": [], "is_synthetic": true, "blanket_impl": null}})),
            item(20, None, "public", json!({"use": {"source": "m::S", "name": "T", "id": 3, "is_glob": false}})),
            item(21, None, "public", json!({"use": {"source": "hidden", "name": "hidden", "id": 2, "is_glob": true}})),
            item(22, None, "public", json!({"use": {"source": "tokio_util::sync::CancellationToken", "name": "CancellationToken", "id": 200, "is_glob": false}})),
            item(23, None, "default", json!({"use": {"source": "m::S", "name": "S", "id": 3, "is_glob": false}})),
            item(30, Some("E"), "public", json!({"enum": {"variants": [31, 32], "impls": []}})),
            item(31, Some("A"), "default", json!({"variant": {"kind": "plain"}})),
            item(32, Some("B"), "default", json!({"variant": {"kind": {"struct": {"fields": [33]}}}})),
            item(33, Some("z"), "default", json!({"struct_field": {}})),
            item(40, Some("Tr"), "public", json!({"trait": {"items": [41], "implementations": []}})),
            item(41, Some("go"), "default", json!({"function": {}})),
        ]
        .into_iter()
        .collect();
        json!({
            "root": 0,
            "format_version": KNOWN_FORMAT,
            "index": index,
            "paths": {
                "100": {"crate_id": 1, "path": ["core", "clone", "Clone"], "kind": "trait"},
                "200": {"crate_id": 2, "path": ["tokio_util", "sync", "cancellation_token", "CancellationToken"], "kind": "struct"}
            }
        })
    }

    #[test]
    fn public_items_are_listed_where_they_are_reachable() {
        let got = public_items(&doc()).expect("reads");
        let want = [
            "enum c::E",
            "field c::E::B::z",
            "field c::T::x",
            "field c::m::S::x",
            "fn c::T::new",
            "fn c::Tr::go",
            "fn c::f",
            "fn c::m::S::new",
            "impl core::clone::Clone for c::T",
            "impl core::clone::Clone for c::m::S",
            "mod c::m",
            "struct c::CancellationToken = tokio_util::sync::CancellationToken",
            "struct c::T",
            "struct c::m::S",
            "trait c::Tr",
            "variant c::E::A",
            "variant c::E::B",
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn an_unknown_shape_fails_with_its_version() {
        let mut old = doc();
        old["format_version"] = json!(KNOWN_FORMAT - 1);
        let err = public_items(&old).unwrap_err();
        assert!(format!("{err:#}").contains("is older than"), "{err:#}");
        let mut newer = doc();
        newer["format_version"] = json!(KNOWN_FORMAT + 1);
        newer["index"]["1"]["inner"] = json!({"module": {"children": []}});
        let err = format!("{:#}", public_items(&newer).unwrap_err());
        assert!(
            err.contains(&format!("format_version {}", KNOWN_FORMAT + 1)),
            "{err}"
        );
        assert!(err.contains("module c::m has no items"), "{err}");
        assert!(public_items(&json!({"index": {}})).is_err());
    }
}
