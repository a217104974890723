//! A replay of go-spew's `"%#v"` formatter, as upstream's pod-template hash uses it
//! (`k8s.io/utils/dump.ForHash`: `SortKeys`, `DisableMethods`, `SpewKeys`,
//! `DisablePointerAddresses`, `DisableCapacities`), over a template given as JSON.
//!
//! Go prints the in-memory struct; JSON omits most of it. The layout of every Go type involved
//! (field order, Go field names, JSON keys, the type names `reflect` prints) comes from
//! `spew_table`, generated from the pinned Go types by
//! `upstream/cmd/spewtable`. What the writer reproduces:
//!
//! * every value that is not a slice element, a map key or a map value is preceded by its Go
//!   type in parentheses, for example `(int32)80`, `(v1.Protocol)TCP`, `(*int64)<nil>`; a set
//!   pointer prints `(*T)` and then its target without a type; a set pointer inside a slice or
//!   map prints `<*>` instead, an unset one `<nil>`;
//! * strings raw (no quotes, no escaping), integers in decimal, booleans as `true`/`false`;
//! * structs as `{Field:value Field:value}` with every field, set or not, in declaration order;
//! * slices as `[a b]`, maps as `map[k:v k:v]` sorted by key; an absent or empty slice or map is
//!   `<nil>`: upstream's controller reads Deployments through protobuf, which decodes an empty
//!   list or map as nil;
//! * `resource.Quantity`, `intstr.IntOrString`, `metav1.Time` and `metav1.FieldsV1` print their
//!   Go internals, which `spew_values` rebuilds from the JSON form.

use serde_json::Value;

use super::spew_layout::{GoType, Json, Kind};
use super::spew_table::{ROOT, TYPES};
use super::spew_values;

/// The text go-spew prints for `v1.PodTemplateSpec` given as JSON, `dump.ForHash(template)`.
pub(crate) fn dump_pod_template(template: &Value) -> String {
    let mut w = Writer { out: String::new() };
    w.value(ROOT, present(Some(template)), true);
    w.out
}

/// `None` for an absent or null JSON value.
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

struct Writer {
    out: String,
}

impl Writer {
    /// Writes the Go value of type `ty` whose JSON form is `v` (`None`: absent, the zero value).
    /// `typed`: whether spew prints the type first (false for slice elements and map entries).
    fn value(&mut self, ty: usize, v: Option<&Value>, typed: bool) {
        let Some(t) = TYPES.get(ty) else {
            return;
        };
        if let Kind::Ptr(elem) = t.kind {
            return self.pointer(t, elem, v, typed);
        }
        if typed {
            self.typename(t.name);
        }
        if t.json != Json::Plain
            && let Some(json) = v
        {
            let internal = spew_values::go_internals(t.json, json);
            return self.plain(t, present(Some(&internal)));
        }
        self.plain(t, v);
    }

    fn pointer(&mut self, t: &GoType, elem: usize, v: Option<&Value>, typed: bool) {
        match (v, typed) {
            (None, true) => {
                self.typename(t.name);
                self.out.push_str("<nil>");
            }
            (None, false) => self.out.push_str("<nil>"),
            (Some(target), true) => {
                let elem_name = TYPES.get(elem).map_or("", |e| e.name);
                self.out.push_str("(*");
                self.out.push_str(elem_name);
                self.out.push(')');
                self.value(elem, Some(target), false);
            }
            (Some(target), false) => {
                self.out.push_str("<*>");
                self.value(elem, Some(target), false);
            }
        }
    }

    fn typename(&mut self, name: &str) {
        self.out.push('(');
        self.out.push_str(name);
        self.out.push(')');
    }

    fn plain(&mut self, t: &GoType, v: Option<&Value>) {
        match t.kind {
            Kind::Bool => {
                let b = v.and_then(Value::as_bool).unwrap_or(false);
                self.out.push_str(if b { "true" } else { "false" });
            }
            Kind::Int | Kind::Uint => match v {
                Some(Value::Number(n)) => self.out.push_str(&n.to_string()),
                _ => self.out.push('0'),
            },
            Kind::String => {
                if let Some(s) = v.and_then(Value::as_str) {
                    self.out.push_str(s);
                }
            }
            Kind::Ptr(_) => {}
            Kind::Slice(elem) => match v.and_then(Value::as_array).filter(|a| !a.is_empty()) {
                None => self.out.push_str("<nil>"),
                Some(items) => {
                    self.out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            self.out.push(' ');
                        }
                        self.value(elem, present(Some(item)), false);
                    }
                    self.out.push(']');
                }
            },
            Kind::Map(_, elem) => match v.and_then(Value::as_object).filter(|m| !m.is_empty()) {
                None => self.out.push_str("<nil>"),
                Some(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    self.out.push_str("map[");
                    for (i, key) in keys.into_iter().enumerate() {
                        if i > 0 {
                            self.out.push(' ');
                        }
                        self.out.push_str(key);
                        self.out.push(':');
                        self.value(elem, present(map.get(key)), false);
                    }
                    self.out.push(']');
                }
            },
            Kind::Struct(fields) => {
                self.out.push('{');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push(' ');
                    }
                    self.out.push_str(f.name);
                    self.out.push(':');
                    let fv = match f.key {
                        "" => v,
                        "-" => None,
                        key => present(v.and_then(|o| o.get(key))),
                    };
                    self.value(f.ty, fv, true);
                }
                self.out.push('}');
            }
        }
    }
}
