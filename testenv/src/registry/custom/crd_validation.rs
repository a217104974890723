//! Validation of CustomResourceDefinition objects (upstream
//! `apis/apiextensions/validation/validation.go`): the name rule, group, scope, names,
//! versions (one storage version, schemas required and structural, subresources, printer
//! columns), status names and stored versions, and the fields an update may not change.
//! Object metadata is checked by the shared [`validation`](crate::registry::validation).
//!
//! Not checked: conversion webhooks' client config, selectable fields, CEL rules.

use serde_json::Value;

use super::definition::condition_true;
use super::schema_validation::validate_version_schema;
use crate::registry::api_status::{FieldError, go_quote};
use crate::registry::meta::at;
use crate::registry::validation::formats::{dns1035_label, dns1123_subdomain};

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

fn versions(crd: &Value) -> &[Value] {
    at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Validate a CRD about to be stored (`old`: the stored one, on updates; `status`: a write
/// of the status subresource, which checks only the status).
pub fn validate_crd(crd: &Value, old: Option<&Value>, status: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if status {
        names(
            at(crd, &["status", "acceptedNames"]),
            "status.acceptedNames",
            &mut errs,
        );
        return errs;
    }
    let name = s(crd, &["metadata", "name"]);
    let plural = s(crd, &["spec", "names", "plural"]);
    let group = s(crd, &["spec", "group"]);
    if old.is_none() && !name.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            go_quote(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    spec(crd, &mut errs);
    names(
        at(crd, &["status", "acceptedNames"]),
        "status.acceptedNames",
        &mut errs,
    );
    stored_versions(crd, &mut errs);
    if old.is_none() && at(crd, &["spec", "preserveUnknownFields"]) == Some(&Value::Bool(true)) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            "true",
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    if let Some(old) = old {
        let mut immutable = |path: &[&str], field: &str| {
            let (a, b) = (s(crd, path), s(old, path));
            if a != b {
                errs.push(FieldError::invalid(
                    field,
                    go_quote(a),
                    "field is immutable",
                ));
            }
        };
        if condition_true(old, "Established") {
            immutable(&["spec", "scope"], "spec.scope");
            immutable(&["spec", "names", "kind"], "spec.names.kind");
        }
        immutable(&["spec", "group"], "spec.group");
        immutable(&["spec", "names", "plural"], "spec.names.plural");
    }
    errs
}

fn spec(crd: &Value, errs: &mut Vec<FieldError>) {
    let group = s(crd, &["spec", "group"]);
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let e = dns1123_subdomain(group);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                "spec.group",
                go_quote(group),
                e.join(","),
            ));
        } else if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                "spec.group",
                go_quote(group),
                "should be a domain with at least one dot",
            ));
        }
    }
    match s(crd, &["spec", "scope"]) {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            go_quote(other),
            &["Cluster", "Namespaced"],
        )),
    }
    let vs = versions(crd);
    let top = hoisted(vs);
    for (i, v) in vs.iter().enumerate() {
        if at(v, &["schema", "openAPIV3Schema"]).is_none() {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            ));
        }
    }
    let mut storage = 0;
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, v) in vs.iter().enumerate() {
        let path = format!("spec.versions[{i}]");
        if v["storage"] == true {
            storage += 1;
        }
        let name = s(v, &["name"]);
        if seen.contains(&name) {
            unique = false;
        }
        seen.push(name);
        let e = dns1035_label(name);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.name"),
                go_quote(name),
                e.join(","),
            ));
        }
        version(v, &path, top, errs);
    }
    let versions_value = || serde_json::to_string(&crd["spec"]["versions"]).unwrap_or_default();
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value(),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value(),
            "must have exactly one version marked as storage version",
        ));
    }
    for k in ["plural", "singular", "kind", "listKind"] {
        if s(crd, &["spec", "names", k]).is_empty() {
            errs.push(FieldError::required(format!("spec.names.{k}"), ""));
        }
    }
    names(at(crd, &["spec", "names"]), "spec.names", errs);
    if let Some(first) = vs.first() {
        if top.schema
            && let Some(schema) = at(first, &["schema", "openAPIV3Schema"])
        {
            let any_status = vs
                .iter()
                .any(|v| at(v, &["subresources", "status"]).is_some_and(Value::is_object));
            errs.extend(validate_version_schema(
                schema,
                "spec.validation",
                any_status,
            ));
        }
        if top.subresources {
            subresources(first.get("subresources"), "spec.subresources", errs);
        }
        if top.columns {
            columns(
                first.get("additionalPrinterColumns"),
                "spec.additionalPrinterColumns",
                errs,
            );
        }
    }
    if let Some(strategy) = at(crd, &["spec", "conversion", "strategy"]).and_then(Value::as_str)
        && !["None", "Webhook"].contains(&strategy)
    {
        errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            go_quote(strategy),
            &["None", "Webhook"],
        ));
    }
}

/// Which per-version parts are the same in every version: upstream's internal form then holds
/// them once at the top (`spec.validation`, `spec.subresources`,
/// `spec.additionalPrinterColumns`), and that is where their errors point.
#[derive(Debug, Clone, Copy, Default)]
struct Hoisted {
    schema: bool,
    subresources: bool,
    columns: bool,
}

fn hoisted(vs: &[Value]) -> Hoisted {
    let same = |key: &str| {
        let norm = |v: &Value| match v.get(key) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Array(a)) if a.is_empty() => Value::Null,
            Some(x) => x.clone(),
        };
        vs.first()
            .is_some_and(|f| vs.iter().all(|v| norm(v) == norm(f)))
    };
    Hoisted {
        schema: same("schema"),
        subresources: same("subresources"),
        columns: same("additionalPrinterColumns"),
    }
}

fn version(v: &Value, path: &str, hoisted: Hoisted, errs: &mut Vec<FieldError>) {
    let deprecated = v["deprecated"] == true;
    if let Some(w) = v.get("deprecationWarning").and_then(Value::as_str) {
        let field = format!("{path}.deprecationWarning");
        if !deprecated {
            errs.push(FieldError::invalid(
                field.clone(),
                go_quote(w),
                "can only be set for deprecated versions",
            ));
        }
        if w.len() > 256 {
            errs.push(FieldError::invalid(
                field.clone(),
                go_quote(w),
                "must be <= 256 characters long",
            ));
        }
        if w.is_empty() {
            errs.push(FieldError::invalid(
                field,
                go_quote(w),
                "must not be an empty string",
            ));
        }
    }
    let status_enabled = at(v, &["subresources", "status"]).is_some_and(Value::is_object);
    if !hoisted.schema
        && let Some(schema) = at(v, &["schema", "openAPIV3Schema"])
    {
        errs.extend(validate_version_schema(
            schema,
            &format!("{path}.schema"),
            status_enabled,
        ));
    }
    if !hoisted.subresources {
        subresources(v.get("subresources"), &format!("{path}.subresources"), errs);
    }
    if !hoisted.columns {
        columns(
            v.get("additionalPrinterColumns"),
            &format!("{path}.additionalPrinterColumns"),
            errs,
        );
    }
}

/// The `subresources` of a version (or all versions alike: `spec.subresources`).
fn subresources(sub: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(scale) = sub.and_then(|x| x.get("scale")).filter(|x| x.is_object()) {
        let sp = format!("{path}.scale");
        for (key, prefixes, detail, required) in [
            (
                "specReplicasPath",
                &[".spec."][..],
                "should be a json path under .spec",
                true,
            ),
            (
                "statusReplicasPath",
                &[".status."][..],
                "should be a json path under .status",
                true,
            ),
            (
                "labelSelectorPath",
                &[".spec.", ".status."][..],
                "should be a json path under either .spec or .status",
                false,
            ),
        ] {
            let field = format!("{sp}.{key}");
            let p = s(scale, &[key]);
            if p.is_empty() {
                if required {
                    errs.push(FieldError::required(field, ""));
                }
                continue;
            }
            if let Some(e) = simple_json_path(p) {
                errs.push(FieldError::invalid(field, go_quote(p), e));
            } else if !prefixes.iter().any(|x| p.starts_with(x)) {
                errs.push(FieldError::invalid(field, go_quote(p), detail));
            }
        }
    }
}

/// The `additionalPrinterColumns` of a version (or all alike: `spec.additionalPrinterColumns`).
fn columns(cols: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    for (i, c) in cols
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let cp = format!("{path}[{i}]");
        if s(c, &["name"]).is_empty() {
            errs.push(FieldError::required(format!("{cp}.name"), ""));
        }
        let ty = s(c, &["type"]);
        let types = "boolean,date,integer,number,string";
        if ty.is_empty() {
            errs.push(FieldError::required(
                format!("{cp}.type"),
                format!("must be one of {types}"),
            ));
        } else if !types.split(',').any(|t| t == ty) {
            errs.push(FieldError::invalid(
                format!("{cp}.type"),
                go_quote(ty),
                format!("must be one of {types}"),
            ));
        }
        let format = s(c, &["format"]);
        let formats = [
            "byte",
            "date",
            "date-time",
            "double",
            "float",
            "int32",
            "int64",
            "password",
        ];
        if !format.is_empty() && !formats.contains(&format) {
            errs.push(FieldError::invalid(
                format!("{cp}.format"),
                go_quote(format),
                format!("must be one of {}", formats.join(",")),
            ));
        }
        let jp = s(c, &["jsonPath"]);
        if jp.is_empty() {
            errs.push(FieldError::required(format!("{cp}.JSONPath"), ""));
        } else if let Some(e) = simple_json_path(jp) {
            errs.push(FieldError::invalid(
                format!("{cp}.JSONPath"),
                go_quote(jp),
                e,
            ));
        }
    }
}

/// Upstream's `validateSimpleJSONPath`: it must start with a dot.
fn simple_json_path(p: &str) -> Option<&'static str> {
    if p.starts_with('.') {
        None
    } else {
        Some("must be a simple json path starting with .")
    }
}

fn names(n: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let Some(n) = n else {
        return;
    };
    for (k, mixed) in [
        ("plural", false),
        ("singular", false),
        ("kind", true),
        ("listKind", true),
    ] {
        let v = s(n, &[k]);
        if v.is_empty() {
            continue;
        }
        let e = dns1035_label(&if mixed {
            v.to_lowercase()
        } else {
            v.to_string()
        });
        if !e.is_empty() {
            let detail = if mixed {
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    e.join(",")
                )
            } else {
                e.join(",")
            };
            errs.push(FieldError::invalid(
                format!("{path}.{k}"),
                go_quote(v),
                detail,
            ));
        }
    }
    for (i, short) in n
        .get("shortNames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let v = short.as_str().unwrap_or("");
        let e = dns1035_label(v);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.shortNames[{i}]"),
                go_quote(v),
                e.join(","),
            ));
        }
    }
}

fn stored_versions(crd: &Value, errs: &mut Vec<FieldError>) {
    let stored: Vec<&str> = at(crd, &["status", "storedVersions"])
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Go prints the empty (nil) list as null
    let shown = if stored.is_empty() {
        "null".to_string()
    } else {
        serde_json::to_string(&stored).unwrap_or_default()
    };
    if stored.is_empty() {
        errs.push(FieldError::invalid(
            "status.storedVersions",
            shown,
            "must have at least one stored version",
        ));
        return;
    }
    for v in versions(crd) {
        let name = s(v, &["name"]);
        if v["storage"] == true && !stored.contains(&name) {
            errs.push(FieldError::invalid(
                "status.storedVersions",
                shown.clone(),
                format!("must have the storage version {name}"),
            ));
        }
    }
    for (i, sv) in stored.iter().enumerate() {
        if !versions(crd).iter().any(|v| s(v, &["name"]) == *sv) {
            errs.push(FieldError::invalid(
                format!("status.storedVersions[{i}]"),
                go_quote(sv),
                format!("missing from spec.versions; {sv} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {sv} and removes {sv} from status.storedVersions"),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
