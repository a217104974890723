//! Cases of structured-merge-diff's `merge/*_test.go` tables (leaves, sets, nested structs,
//! map lists with several appliers, defaulted keys, atomic maps, duplicates, ignored
//! fields), run through [`Updater`]: a sequence of applies and updates by named managers,
//! then the object and every manager's fields as upstream expects them. Cases that need
//! upstream's field-renaming converters are left out: every version shares one schema here.
//! More cases (several appliers, keys, duplicates, ignored fields) are in
//! `updater_cases_owners.rs`.

use serde_json::Value;

use super::managed_fields::Managers;
use super::path::Path;
use super::schema::TypedSchema;
use super::set::Set;
use super::test_types::smd_schema;
use super::updater::{UpdateError, Updater};
use super::value::equals;

/// One step of a case.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    /// `Apply(manager, version, object)`, expected to succeed.
    Apply(&'static str, &'static str, &'static str),
    /// An apply expected to fail with these `(manager, path)` conflicts.
    Conflicts(
        &'static str,
        &'static str,
        &'static str,
        &'static [(&'static str, &'static str)],
    ),
    /// A forced apply.
    Force(&'static str, &'static str, &'static str),
    /// `Update(manager, version, object)`.
    Update(&'static str, &'static str, &'static str),
}

pub(super) type Owned = &'static [(&'static str, &'static str, &'static [&'static str])];

pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) ops: &'static [Op],
    /// The object at the end (YAML), when the case checks it.
    pub(super) object: Option<&'static str>,
    /// `(manager, version, paths)` at the end, when the case checks them.
    pub(super) managed: Option<Owned>,
}

/// The YAML of a case, with its common indentation removed (`null` when blank).
fn yaml(text: &str) -> Value {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = text
        .lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect();
    serde_yaml::from_str(&body.join("\n")).unwrap_or_else(|e| panic!("YAML {text:?}: {e}"))
}

fn paths(s: &Set) -> Vec<String> {
    let mut v: Vec<String> = s.paths().iter().map(Path::to_string).collect();
    v.sort();
    v
}

pub(super) fn run(schema: &TypedSchema, ignored: Option<&Set>, case: &Case) {
    let up = Updater {
        schema,
        ignored,
        group: None,
        strict_versions: false,
    };
    let mut live = Value::Null;
    let mut managers = Managers::new();
    for op in case.ops {
        let (manager, version, text, force) = match *op {
            Op::Update(m, v, t) => {
                let new = yaml(t);
                managers = up
                    .update(&live, &new, v, managers, m)
                    .unwrap_or_else(|e| panic!("{}: {op:?}: {e:?}", case.name));
                live = new;
                continue;
            }
            Op::Conflicts(m, v, t, want) => {
                match up.apply(&live, &yaml(t), v, managers.clone(), m, false) {
                    Err(UpdateError::Conflicts(got)) => {
                        let mut got: Vec<(String, String)> = got
                            .iter()
                            .map(|c| (c.manager.clone(), c.path.to_string()))
                            .collect();
                        let mut want: Vec<(String, String)> = want
                            .iter()
                            .map(|(m, p)| (m.to_string(), p.to_string()))
                            .collect();
                        got.sort();
                        want.sort();
                        assert_eq!(got, want, "{}: conflicts of {op:?}", case.name);
                    }
                    other => panic!("{}: {op:?}: expected conflicts, got {other:?}", case.name),
                }
                continue;
            }
            Op::Apply(m, v, t) => (m, v, t, false),
            Op::Force(m, v, t) => (m, v, t, true),
        };
        let (new, ms) = up
            .apply(&live, &yaml(text), version, managers, manager, force)
            .unwrap_or_else(|e| panic!("{}: {op:?}: {e:?}", case.name));
        managers = ms;
        if let Some(n) = new {
            live = n;
        }
    }
    if let Some(want) = case.object {
        let want = yaml(want);
        assert!(
            equals(&live, &want),
            "{}: object\n got: {live}\nwant: {want}",
            case.name
        );
    }
    if let Some(want) = case.managed {
        let got: Vec<(String, String, Vec<String>)> = managers
            .iter()
            .map(|(m, vs)| (m.clone(), vs.api_version.clone(), paths(&vs.set)))
            .collect();
        let mut want: Vec<(String, String, Vec<String>)> = want
            .iter()
            .map(|(m, v, ps)| {
                let mut ps: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                ps.sort();
                (m.to_string(), v.to_string(), ps)
            })
            .collect();
        want.sort();
        assert_eq!(got, want, "{}: managers", case.name);
    }
}

const LEAF: &str = r#"
types:
- name: leafFields
  map:
    fields:
    - name: numeric
      type: {scalar: numeric}
    - name: string
      type: {scalar: string}
    - name: bool
      type: {scalar: boolean}
"#;

#[test]
fn leaf_fields() {
    use Op::*;
    let cases = [
        Case {
            name: "apply_twice",
            ops: &[
                Apply("default", "v1", "numeric: 1\nstring: string"),
                Apply("default", "v1", "numeric: 2\nstring: string\nbool: false"),
            ],
            object: Some("numeric: 2\nstring: string\nbool: false"),
            managed: Some(&[("default", "v1", &[".numeric", ".string", ".bool"])]),
        },
        Case {
            name: "apply_update_apply_no_conflict_different_version",
            ops: &[
                Apply("default", "v1", "numeric: 1\nstring: string"),
                Update("controller", "v2", "numeric: 1\nstring: string\nbool: true"),
                Apply("default", "v1", "numeric: 2\nstring: string"),
            ],
            object: Some("numeric: 2\nstring: string\nbool: true"),
            managed: Some(&[
                ("default", "v1", &[".numeric", ".string"]),
                ("controller", "v2", &[".bool"]),
            ]),
        },
        Case {
            name: "apply_update_apply_with_conflict",
            ops: &[
                Apply("default", "v1", "numeric: 1\nstring: string"),
                Update(
                    "controller",
                    "v1",
                    "numeric: 1\nstring: controller string\nbool: true",
                ),
                Conflicts(
                    "default",
                    "v1",
                    "numeric: 2\nstring: user string",
                    &[("controller", ".string")],
                ),
                Force("default", "v1", "numeric: 2\nstring: user string"),
            ],
            object: Some("numeric: 2\nstring: user string\nbool: true"),
            managed: Some(&[
                ("default", "v1", &[".numeric", ".string"]),
                ("controller", "v1", &[".bool"]),
            ]),
        },
        Case {
            name: "apply_twice_remove",
            ops: &[
                Apply("default", "v1", "numeric: 1\nstring: string\nbool: false"),
                Apply("default", "v2", "string: new string"),
            ],
            object: Some("string: new string"),
            managed: Some(&[("default", "v2", &[".string"])]),
        },
        Case {
            name: "update_apply_omits",
            ops: &[
                Apply("default", "v1", "numeric: 2"),
                Update("controller", "v1", "numeric: 1"),
                Apply("default", "v1", ""),
            ],
            object: Some("numeric: 1"),
            managed: Some(&[("controller", "v1", &[".numeric"])]),
        },
        Case {
            name: "update_remove_empty_set",
            ops: &[
                Apply("default", "v1", "string: string"),
                Update("controller", "v1", "string: new string"),
            ],
            object: Some("string: new string"),
            managed: Some(&[("controller", "v1", &[".string"])]),
        },
        Case {
            name: "apply_remove_empty_set",
            ops: &[
                Apply("default", "v1", "string: string"),
                Apply("default", "v1", ""),
            ],
            object: Some(""),
            managed: Some(&[]),
        },
    ];
    let schema = smd_schema(LEAF, "leafFields");
    for c in &cases {
        run(&schema, None, c);
    }
}

const SETS: &str = r#"
types:
- name: sets
  map:
    fields:
    - name: list
      type:
        list:
          elementType: {scalar: string}
          elementRelationship: associative
"#;

const ALL: &[&str] = &[
    ".list[=\"a\"]",
    ".list[=\"b\"]",
    ".list[=\"c\"]",
    ".list[=\"d\"]",
];

#[test]
fn sets() {
    use Op::*;
    let cases = [
        Case {
            name: "apply_twice_reorder",
            ops: &[
                Apply("default", "v1", "list: [a, b, c, d]"),
                Apply("default", "v1", "list: [a, d, c, b]"),
            ],
            object: Some("list: [a, d, c, b]"),
            managed: Some(&[("default", "v1", ALL)]),
        },
        Case {
            name: "apply_update_apply_reorder",
            ops: &[
                Apply("default", "v1", "list: [a, b, c, d]"),
                Update("controller", "v1", "list: [a, d, c, b]"),
                Apply("default", "v1", "list: [a, b, c, d]"),
            ],
            object: Some("list: [a, b, c, d]"),
            managed: Some(&[("default", "v1", ALL)]),
        },
        Case {
            name: "apply_update_apply_with_overlap",
            ops: &[
                Apply("default", "v1", "list: [a, c]"),
                Update("controller", "v1", "list: [a, b, c, d]"),
                Apply("default", "v1", "list: [a, b, c]"),
            ],
            object: Some("list: [a, b, c, d]"),
            managed: Some(&[
                (
                    "default",
                    "v1",
                    &[".list[=\"a\"]", ".list[=\"b\"]", ".list[=\"c\"]"],
                ),
                ("controller", "v1", &[".list[=\"b\"]", ".list[=\"d\"]"]),
            ]),
        },
        Case {
            name: "apply_twice_remove",
            ops: &[
                Apply("default", "v1", "list: [a, b, c, d]"),
                Apply("default", "v2", "list: [a, c]"),
            ],
            object: Some("list: [a, c]"),
            managed: Some(&[("default", "v2", &[".list[=\"a\"]", ".list[=\"c\"]"])]),
        },
    ];
    let schema = smd_schema(SETS, "sets");
    for c in &cases {
        run(&schema, None, c);
    }
}

const NESTED: &str = r#"
types:
- name: type
  map:
    fields:
    - name: listOfLists
      type: {namedType: listOfLists}
    - name: mapOfMapsRecursive
      type: {namedType: mapOfMapsRecursive}
    - name: struct
      type: {namedType: struct}
- name: struct
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: numeric}
- name: listOfLists
  list:
    elementType:
      map:
        fields:
        - name: name
          type: {scalar: string}
        - name: value
          type: {namedType: list}
    elementRelationship: associative
    keys: [name]
- name: list
  list:
    elementType: {scalar: string}
    elementRelationship: associative
- name: mapOfMapsRecursive
  map:
    elementType: {namedType: mapOfMapsRecursive}
    elementRelationship: associative
"#;

#[test]
fn nested_structs_and_lists() {
    use Op::*;
    let cases = [
        Case {
            name: "struct_apply_remove_all",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a\n  value: 1"),
                Apply("default", "v1", ""),
            ],
            object: Some(""),
            managed: Some(&[]),
        },
        Case {
            name: "struct_apply_remove_dangling",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a"),
                Apply("default", "v1", "struct:"),
            ],
            object: Some("struct:"),
            managed: Some(&[("default", "v1", &[".struct"])]),
        },
        Case {
            name: "struct_apply_update_remove_all",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a"),
                Update("controller", "v1", "struct:\n  name: a\n  value: 1"),
                Apply("default", "v1", ""),
            ],
            object: Some("struct:\n  value: 1"),
            managed: None,
        },
        Case {
            name: "struct_apply_update_dict_dangling",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a"),
                Update("controller", "v1", "struct:\n  name: a\n  value: 1"),
                Apply("default", "v1", "struct: {}"),
            ],
            object: Some("struct:\n  value: 1"),
            managed: None,
        },
        Case {
            name: "struct_apply_update_dict_null",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a"),
                Update("controller", "v1", "struct:\n  name: a\n  value: 1"),
                Apply("default", "v1", "struct:"),
            ],
            object: Some("struct:\n  value: 1"),
            managed: None,
        },
        Case {
            name: "struct_apply_update_took_over",
            ops: &[
                Apply("default", "v1", "struct:\n  name: a"),
                Update("controller", "v1", "struct:\n  name: b\n  value: 1"),
                Apply("default", "v1", "struct:"),
            ],
            object: Some("struct:\n  name: b\n  value: 1"),
            managed: None,
        },
        Case {
            name: "remove_one_keep_one_with_dangling_subitem",
            ops: &[
                Apply(
                    "apply-one",
                    "v1",
                    "listOfLists:\n- name: a\n- name: b\n  value: [c]",
                ),
                Apply("apply-two", "v2", "listOfLists:\n- name: b\n  value: [d]"),
                Update(
                    "controller",
                    "v2",
                    "listOfLists:\n- name: a\n- name: b\n  value: [c, d, e]",
                ),
                Apply("apply-one", "v3", "listOfLists:\n- name: a"),
            ],
            object: Some("listOfLists:\n- name: a\n- name: b\n  value: [d, e]"),
            managed: Some(&[
                (
                    "apply-one",
                    "v3",
                    &[".listOfLists[name=\"a\"]", ".listOfLists[name=\"a\"].name"],
                ),
                (
                    "apply-two",
                    "v2",
                    &[
                        ".listOfLists[name=\"b\"]",
                        ".listOfLists[name=\"b\"].name",
                        ".listOfLists[name=\"b\"].value[=\"d\"]",
                    ],
                ),
                (
                    "controller",
                    "v2",
                    &[".listOfLists[name=\"b\"].value[=\"e\"]"],
                ),
            ]),
        },
        Case {
            name: "remove_one_with_dangling_subitem_keep_one",
            ops: &[
                Apply(
                    "apply-one",
                    "v1",
                    "listOfLists:\n- name: a\n- name: b\n  value: [c]",
                ),
                Apply("apply-two", "v2", "listOfLists:\n- name: a\n  value: [b]"),
                Update(
                    "controller",
                    "v2",
                    "listOfLists:\n- name: a\n  value: [b]\n- name: b\n  value: [c, d]",
                ),
                Apply("apply-one", "v3", "listOfLists:\n- name: a"),
            ],
            object: Some("listOfLists:\n- name: a\n  value: [b]"),
            managed: Some(&[
                (
                    "apply-one",
                    "v3",
                    &[".listOfLists[name=\"a\"]", ".listOfLists[name=\"a\"].name"],
                ),
                (
                    "apply-two",
                    "v2",
                    &[
                        ".listOfLists[name=\"a\"]",
                        ".listOfLists[name=\"a\"].name",
                        ".listOfLists[name=\"a\"].value[=\"b\"]",
                    ],
                ),
            ]),
        },
    ];
    let schema = smd_schema(NESTED, "type");
    for c in &cases {
        run(&schema, None, c);
    }
}
