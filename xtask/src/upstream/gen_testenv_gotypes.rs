//! The Go side of the type schemas, for `cargo xtask upstream gen-testenv`: per struct
//! definition and JSON field, what upstream's Go type says and the OpenAPI does not — the Go
//! type as `reflect` names it in decode errors (`v1.Protocol`, `[]v1.Container`), the type of
//! its items or values, whether it is a pointer, and `omitempty` / `omitzero` (which zero
//! values Go leaves out when it writes the object). Read from the API packages' Go sources in
//! the module cache (`k8s.io/api`, `k8s.io/apimachinery`, `k8s.io/apiextensions-apiserver`,
//! `k8s.io/kube-aggregator`); only declarations are read, nothing is copied.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{Value, json};

/// One field of a Go struct, as written into the generated data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// The field's type without a leading `*`, as `reflect` prints it (`v1.Protocol`).
    pub ty: String,
    /// The type of the items of a slice or the values of a map (also through a named type:
    /// `resource.Quantity` for `v1.ResourceList`); `""` for others.
    pub elem: String,
    /// `e` for `omitempty`, `z` for `omitzero` (alone or with `omitempty`), `""` for neither.
    pub omit: &'static str,
    /// Whether the field is a pointer.
    pub pointer: bool,
    /// `s` struct, `m` map, `l` slice, `p` anything else (after named types are resolved).
    pub kind: &'static str,
    /// The field's number in the protobuf encoding (its `protobuf` tag; 0 without one).
    pub proto: u32,
}

/// One field of a struct declaration: JSON name, type expression, JSON tag options, protobuf
/// field number (0 without a `protobuf` tag).
type StructField = (String, String, Vec<String>, u32);

/// The Go declarations of one package: its name, imports, structs and other named types.
#[derive(Debug, Default)]
struct Package {
    name: String,
    /// Import alias (or last path element) → package name (last path element).
    imports: HashMap<String, String>,
    /// Import alias (or last path element) → import path.
    import_paths: HashMap<String, String>,
    /// Struct name → fields `(json name, type expression, tag options, protobuf number)`.
    structs: HashMap<String, Vec<StructField>>,
    /// Named non-struct type → its underlying type expression.
    named: HashMap<String, String>,
}

/// The Go package folder (in the module cache) of a definition, and the type's name.
fn package_of(cache: &Path, version: &str, definition: &str) -> Option<(PathBuf, String)> {
    let staging = format!("v0.{}", version.trim_start_matches("v1."));
    let (prefix, module, sub) = [
        ("io.k8s.api.", "k8s.io/api", ""),
        ("io.k8s.apimachinery.pkg.", "k8s.io/apimachinery", "pkg"),
        (
            "io.k8s.apiextensions-apiserver.pkg.",
            "k8s.io/apiextensions-apiserver",
            "pkg",
        ),
        (
            "io.k8s.kube-aggregator.pkg.",
            "k8s.io/kube-aggregator",
            "pkg",
        ),
    ]
    .into_iter()
    .find(|(p, _, _)| definition.starts_with(p))?;
    let (pkg, name) = definition[prefix.len()..].rsplit_once('.')?;
    let dir = cache
        .join(format!("{module}@{staging}"))
        .join(sub)
        .join(pkg.replace('.', "/"));
    Some((dir, name.to_string()))
}

/// Reads the declarations of the package in `dir` (`.go` files, tests and generated code
/// left out).
fn read_package(dir: &Path) -> anyhow::Result<Package> {
    let mut pkg = Package::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".go")
                && !n.ends_with("_test.go")
                && !n.starts_with("zz_generated")
                && !n.contains("generated.pb")
                && !n.contains("swagger_doc")
        })
        .collect();
    files.sort();
    for f in files {
        parse_file(&std::fs::read_to_string(&f)?, &mut pkg);
    }
    if pkg.name.is_empty() {
        bail!("no Go package in {}", dir.display());
    }
    Ok(pkg)
}

fn parse_file(text: &str, pkg: &mut Package) {
    let mut lines = text.lines().peekable();
    let mut in_imports = false;
    let mut in_types = false;
    while let Some(raw) = lines.next() {
        let line = raw.split("//").next().unwrap_or("").trim_end();
        let t = line.trim();
        if let Some(n) = t.strip_prefix("package ") {
            pkg.name = n.trim().to_string();
        } else if t == "import (" {
            in_imports = true;
        } else if t.starts_with("import ") || in_imports {
            if t == ")" {
                in_imports = false;
                continue;
            }
            let spec = t.trim_start_matches("import ").trim();
            let (alias, path) = match spec.split_once(' ') {
                Some((a, p)) => (Some(a), p),
                None => (None, spec),
            };
            let path = path.trim_matches('"');
            if path.is_empty() {
                continue;
            }
            let last = path.rsplit('/').next().unwrap_or(path).to_string();
            let alias = alias.unwrap_or(&last).to_string();
            pkg.import_paths.insert(alias.clone(), path.to_string());
            pkg.imports.insert(alias, last);
        } else if t == "type (" {
            in_types = true;
        } else if in_types && t == ")" {
            in_types = false;
        } else if let Some(decl) = t.strip_prefix("type ").or(in_types.then_some(t)) {
            let mut words = decl.splitn(2, char::is_whitespace);
            let (Some(name), Some(rest)) = (words.next(), words.next()) else {
                continue;
            };
            let rest = rest.trim();
            if rest == "struct {" {
                let fields = struct_fields(&mut lines);
                pkg.structs.insert(name.to_string(), fields);
            } else if !rest.starts_with('=') && !rest.contains('{') {
                pkg.named.insert(name.to_string(), rest.to_string());
            }
        }
    }
}

/// The fields of a struct whose `{` was on the line before, up to its closing `}`.
fn struct_fields<'a>(lines: &mut impl Iterator<Item = &'a str>) -> Vec<StructField> {
    let mut out = Vec::new();
    let mut depth = 1;
    for raw in lines {
        let t = raw.trim();
        if t.starts_with("//") || t.is_empty() {
            continue;
        }
        depth += t.matches('{').count();
        depth -= t.matches('}').count();
        if depth == 0 {
            break;
        }
        // inside a nested struct type, or its closing line
        if depth > 1 || t.starts_with('}') {
            continue;
        }
        let Some((decl, tag)) = t.split_once('`') else {
            continue;
        };
        let Some(json_tag) = tag
            .split("json:\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
        else {
            continue;
        };
        let mut parts = json_tag.split(',');
        let name = parts.next().unwrap_or("").to_string();
        let opts: Vec<String> = parts.map(str::to_string).collect();
        let words: Vec<&str> = decl.split_whitespace().collect();
        let proto = tag
            .split("protobuf:\"")
            .nth(1)
            .and_then(|r| r.split(',').nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        // an embedded struct without a JSON name is inlined by Go's JSON; the protobuf form
        // nests it in a field of its own (`VolumeSource` in `Volume`). Embeds without a
        // protobuf number (`metav1.TypeMeta`) and hidden fields are no fields.
        if words.len() == 1 && name.is_empty() && proto != 0 {
            out.push((String::new(), words[0].to_string(), opts, proto));
            continue;
        }
        if words.is_empty() || name.is_empty() || name == "-" {
            continue;
        }
        // an embedded struct with a JSON name is a field of that type (`metav1.ObjectMeta`)
        let ty = if words.len() == 1 {
            words[0].to_string()
        } else {
            words[1..].join(" ")
        };
        out.push((name, ty, opts, proto));
    }
    out
}

/// All packages read so far, by folder.
struct Packages {
    cache: PathBuf,
    version: String,
    by_dir: HashMap<PathBuf, Package>,
}

impl Packages {
    /// The module cache folder of a `k8s.io/<module>/…` import path.
    fn import_dir(&self, path: &str) -> Option<PathBuf> {
        let rest = path.strip_prefix("k8s.io/")?;
        let (module, sub) = rest.split_once('/').unwrap_or((rest, ""));
        let staging = format!("v0.{}", self.version.trim_start_matches("v1."));
        Some(
            self.cache
                .join(format!("k8s.io/{module}@{staging}"))
                .join(sub),
        )
    }

    /// Kind and element type of a type expression of the package in `dir`, following a type of
    /// another package to its declaration.
    fn resolve(&mut self, dir: &Path, expr: &str) -> (&'static str, String) {
        let Some(pkg) = self.get(dir) else {
            return ("p", String::new());
        };
        let e = expr.trim().trim_start_matches('*');
        let qualified = !e.starts_with("[]") && !e.starts_with("map[");
        if qualified && let Some((alias, name)) = e.split_once('.') {
            let Some(path) = pkg.import_paths.get(alias).cloned() else {
                return ("p", String::new());
            };
            let name = name.to_string();
            return match self.import_dir(&path) {
                Some(other) => self.resolve(&other, &name),
                None => ("p", String::new()),
            };
        }
        shape(e, pkg)
    }

    fn get(&mut self, dir: &Path) -> Option<&Package> {
        if !self.by_dir.contains_key(dir) {
            let pkg = read_package(dir).ok()?;
            self.by_dir.insert(dir.to_path_buf(), pkg);
        }
        self.by_dir.get(dir)
    }
}

const BUILTIN: &[&str] = &[
    "string", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16",
    "uint32", "uint64", "float32", "float64", "any",
];

/// A type expression as `reflect` prints it: `pkg.T` for named types, `uint8` for `byte`.
fn qualify(expr: &str, pkg: &Package) -> String {
    let e = expr.trim();
    if let Some(rest) = e.strip_prefix('*') {
        return format!("*{}", qualify(rest, pkg));
    }
    if let Some(rest) = e.strip_prefix("[]") {
        return format!("[]{}", qualify(rest, pkg));
    }
    if let Some(rest) = e.strip_prefix("map[") {
        let (k, v) = split_map(rest);
        return format!("map[{}]{}", qualify(k, pkg), qualify(v, pkg));
    }
    if e == "byte" {
        return "uint8".into();
    }
    if e == "interface{}" || BUILTIN.contains(&e) {
        return e.to_string();
    }
    match e.split_once('.') {
        Some((alias, name)) => {
            let p = pkg.imports.get(alias).map_or(alias, String::as_str);
            format!("{p}.{name}")
        }
        None => format!("{}.{e}", pkg.name),
    }
}

/// `K]V` of a `map[K]V` (keys have no brackets in API types).
fn split_map(rest: &str) -> (&str, &str) {
    rest.split_once(']').unwrap_or((rest, ""))
}

/// Kind and element type of a type expression, resolving a named type of the same package.
fn shape(expr: &str, pkg: &Package) -> (&'static str, String) {
    let e = expr.trim().trim_start_matches('*');
    if let Some(rest) = e.strip_prefix("[]") {
        return ("l", qualify(rest, pkg));
    }
    if let Some(rest) = e.strip_prefix("map[") {
        return ("m", qualify(split_map(rest).1, pkg));
    }
    if !e.contains('.')
        && let Some(under) = pkg.named.get(e)
    {
        return shape(under, pkg);
    }
    if !e.contains('.') && pkg.structs.contains_key(e) {
        return ("s", String::new());
    }
    if BUILTIN.contains(&e) || e == "byte" {
        return ("p", String::new());
    }
    // a type of another package: structs there are written with their own definitions
    ("p", String::new())
}

/// The Go fields of every struct definition in `definitions`, by definition and JSON name.
pub fn read_fields(
    cache: &Path,
    version: &str,
    definitions: &BTreeMap<String, Value>,
) -> anyhow::Result<BTreeMap<String, BTreeMap<String, GoField>>> {
    let mut pkgs = Packages {
        cache: cache.to_path_buf(),
        version: version.to_string(),
        by_dir: HashMap::new(),
    };
    let mut out = BTreeMap::new();
    let mut todo: Vec<String> = definitions
        .iter()
        .filter(|(_, s)| s.get("properties").is_some())
        .map(|(d, _)| d.clone())
        .collect();
    while let Some(def) = todo.pop() {
        if out.contains_key(&def) {
            continue;
        }
        let Some((dir, name)) = package_of(&pkgs.cache, &pkgs.version, &def) else {
            continue;
        };
        let Some(pkg) = pkgs.get(&dir) else {
            continue;
        };
        let Some(fields) = pkg.structs.get(&name) else {
            continue;
        };
        let typed: Vec<(String, String, Vec<String>, u32, String)> = fields
            .iter()
            .map(|(n, e, o, p)| {
                let ty = qualify(e.trim_start_matches('*'), pkg);
                (n.clone(), e.clone(), o.clone(), *p, ty)
            })
            .collect();
        let mut m = BTreeMap::new();
        for (json_name, expr, opts, proto, ty) in typed {
            if json_name.is_empty() {
                // an inline embed of this package: its own fields under its definition name
                let Some(prefix) = def.rsplit_once('.').map(|(p, _)| p) else {
                    continue;
                };
                let embedded = format!("{prefix}.{expr}");
                m.insert(
                    format!(",inline{proto}"),
                    GoField {
                        ty: embedded.clone(),
                        elem: String::new(),
                        omit: "",
                        pointer: false,
                        kind: "i",
                        proto,
                    },
                );
                todo.push(embedded);
                continue;
            }
            let pointer = expr.starts_with('*');
            let (kind, elem) = pkgs.resolve(&dir, &expr);
            let omitzero = opts.iter().any(|o| o == "omitzero");
            let omitempty = opts.iter().any(|o| o == "omitempty");
            m.insert(
                json_name,
                GoField {
                    ty,
                    elem,
                    omit: if omitzero {
                        "z"
                    } else if omitempty {
                        "e"
                    } else {
                        ""
                    },
                    pointer,
                    kind,
                    proto,
                },
            );
        }
        out.insert(def, m);
    }
    if out.is_empty() {
        bail!("no Go struct found for the definitions (is the module cache complete?)");
    }
    Ok(out)
}

/// The Rust source of `testenv/src/registry/schema/go_fields.rs`: one definition a line,
/// each field `[type, elem, omit, pointer, kind, protobuf number]`.
pub fn render(version: &str, fields: &BTreeMap<String, BTreeMap<String, GoField>>) -> String {
    let mut body = String::from("{\n");
    for (i, (def, m)) in fields.iter().enumerate() {
        if i > 0 {
            body.push_str(",\n");
        }
        let obj: serde_json::Map<String, Value> = m
            .iter()
            .map(|(k, f)| {
                let row = json!([f.ty, f.elem, f.omit, f.pointer, f.kind, f.proto]);
                (k.clone(), row)
            })
            .collect();
        body.push_str(&Value::String(def.clone()).to_string());
        body.push(':');
        super::gen_testenv_schemas::sorted_json(&Value::Object(obj), &mut body);
    }
    body.push_str("\n}");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// @generated by `cargo xtask upstream gen-testenv` from the Go declarations of the API\n\
         // types of Kubernetes {version} (k8s.io/api, apimachinery, apiextensions-apiserver,\n\
         // kube-aggregator in Go's module cache). Do not edit; regenerate with\n\
         // `cargo xtask upstream gen-testenv`.\n\
         \n\
         /// Per struct definition and JSON field: `[Go type, item or value type, omit (\"e\"\n\
         /// omitempty, \"z\" omitzero), pointer, kind (s/m/l/p), protobuf field number]`, read by\n\
         /// [`Catalog::go_field`](super::Catalog::go_field) on first use.\n\
         pub(super) const GO_FIELDS: &str = r##\"{body}\"##;"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

type Protocol string

// ResourceList is a set of (resource name, quantity) pairs.
type ResourceList map[ResourceName]resource.Quantity

type ContainerPort struct {
	// comment
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	ContainerPort int32 `json:"containerPort" protobuf:"varint,3,opt,name=containerPort"`
	Protocol Protocol `json:"protocol,omitempty" protobuf:"bytes,4,opt,name=protocol,casttype=Protocol"`
	HostIP *string `json:"hostIP,omitempty"`
}

type Thing struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Created metav1.Time `json:"created,omitempty,omitzero"`
	Limits ResourceList `json:"limits,omitempty"`
	Ports []ContainerPort `json:"ports,omitempty"`
	Data map[string][]byte `json:"data,omitempty"`
	Inner struct {
		A string `json:"a"`
	} `json:"inner"`
	Port ContainerPort `json:"port"`
}
"#;

    #[test]
    fn reads_fields_as_reflect_names_them() {
        let mut pkg = Package::default();
        parse_file(SOURCE, &mut pkg);
        assert_eq!(pkg.name, "v1");
        let port = &pkg.structs["ContainerPort"];
        assert_eq!(port.len(), 4);
        assert_eq!((port[0].3, port[1].3, port[3].3), (1, 3, 0));
        assert_eq!(qualify(&port[2].1, &pkg), "v1.Protocol");
        assert_eq!(qualify(&port[3].1, &pkg), "*string");
        let thing = &pkg.structs["Thing"];
        let names: Vec<&str> = thing.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(
            names,
            ["metadata", "created", "limits", "ports", "data", "port"],
            "embedded inline fields and nested struct bodies are skipped"
        );
        assert_eq!(qualify(&thing[0].1, &pkg), "v1.ObjectMeta");
        assert_eq!(qualify(&thing[1].1, &pkg), "v1.Time");
        assert_eq!(shape(&thing[2].1, &pkg), ("m", "resource.Quantity".into()));
        assert_eq!(shape(&thing[3].1, &pkg), ("l", "v1.ContainerPort".into()));
        assert_eq!(qualify(&thing[4].1, &pkg), "map[string][]uint8");
        assert_eq!(shape(&thing[5].1, &pkg), ("s", String::new()));
        assert_eq!(shape("Protocol", &pkg), ("p", String::new()));
    }

    #[test]
    fn definitions_map_to_module_cache_folders() {
        let cache = Path::new("/c");
        let (dir, name) =
            package_of(cache, "v1.37.2", "io.k8s.api.core.v1.Container").expect("core");
        assert_eq!(
            (dir, name.as_str()),
            (PathBuf::from("/c/k8s.io/api@v0.37.2/core/v1"), "Container")
        );
        let (dir, _) = package_of(
            cache,
            "v1.37.2",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        )
        .expect("meta");
        assert_eq!(
            dir,
            PathBuf::from("/c/k8s.io/apimachinery@v0.37.2/pkg/apis/meta/v1")
        );
        let (dir, _) = package_of(
            cache,
            "v1.37.2",
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
        )
        .expect("aggregator");
        assert_eq!(
            dir,
            PathBuf::from("/c/k8s.io/kube-aggregator@v0.37.2/pkg/apis/apiregistration/v1")
        );
    }
}
