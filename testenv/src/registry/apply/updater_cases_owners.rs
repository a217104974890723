//! More cases of structured-merge-diff's `merge/*_test.go` tables, run by
//! `updater_cases.rs`'s runner: several appliers of one map list, keys with defaults,
//! atomic maps, duplicated items, ignored fields and deduced (schema-less) objects.

use super::path::Path;
use super::schema::TypedSchema;
use super::set::Set;
use super::test_types::smd_schema;
use super::updater_cases::{Case, Op, run};

const ASSOCIATIVE: &str = r#"
types:
- name: type
  map:
    fields:
    - name: list
      type: {namedType: associativeList}
- name: associativeList
  list:
    elementType: {namedType: myElement}
    elementRelationship: associative
    keys: [name]
- name: myElement
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: numeric}
"#;

#[test]
fn several_appliers_of_a_map_list() {
    use Op::*;
    let cases = [
        Case {
            name: "remove_one",
            ops: &[
                Apply("apply-one", "v1", "list:\n- name: a\n- name: b"),
                Apply("apply-two", "v2", "list:\n- name: c"),
                Apply("apply-one", "v3", "list:\n- name: a"),
            ],
            object: Some("list:\n- name: a\n- name: c"),
            managed: Some(&[
                (
                    "apply-one",
                    "v3",
                    &[".list[name=\"a\"]", ".list[name=\"a\"].name"],
                ),
                (
                    "apply-two",
                    "v2",
                    &[".list[name=\"c\"]", ".list[name=\"c\"].name"],
                ),
            ]),
        },
        Case {
            name: "same_value_no_conflict",
            ops: &[
                Apply("apply-one", "v1", "list:\n- name: a\n  value: 0"),
                Apply("apply-two", "v2", "list:\n- name: a\n  value: 0"),
            ],
            object: Some("list:\n- name: a\n  value: 0"),
            managed: Some(&[
                (
                    "apply-one",
                    "v1",
                    &[
                        ".list[name=\"a\"]",
                        ".list[name=\"a\"].name",
                        ".list[name=\"a\"].value",
                    ],
                ),
                (
                    "apply-two",
                    "v2",
                    &[
                        ".list[name=\"a\"]",
                        ".list[name=\"a\"].name",
                        ".list[name=\"a\"].value",
                    ],
                ),
            ]),
        },
        Case {
            name: "change_value_yes_conflict",
            ops: &[
                Apply("apply-one", "v1", "list:\n- name: a\n  value: 0"),
                Conflicts(
                    "apply-two",
                    "v2",
                    "list:\n- name: a\n  value: 1",
                    &[("apply-one", ".list[name=\"a\"].value")],
                ),
            ],
            object: Some("list:\n- name: a\n  value: 0"),
            managed: Some(&[(
                "apply-one",
                "v1",
                &[
                    ".list[name=\"a\"]",
                    ".list[name=\"a\"].name",
                    ".list[name=\"a\"].value",
                ],
            )]),
        },
        Case {
            name: "remove_one_keep_one",
            ops: &[
                Apply("apply-one", "v1", "list:\n- name: a\n- name: b\n- name: c"),
                Apply("apply-two", "v2", "list:\n- name: c\n- name: d"),
                Apply("apply-one", "v3", "list:\n- name: a"),
            ],
            object: Some("list:\n- name: a\n- name: c\n- name: d"),
            managed: Some(&[
                (
                    "apply-one",
                    "v3",
                    &[".list[name=\"a\"]", ".list[name=\"a\"].name"],
                ),
                (
                    "apply-two",
                    "v2",
                    &[
                        ".list[name=\"c\"]",
                        ".list[name=\"d\"]",
                        ".list[name=\"c\"].name",
                        ".list[name=\"d\"].name",
                    ],
                ),
            ]),
        },
    ];
    let schema = smd_schema(ASSOCIATIVE, "type");
    for c in &cases {
        run(&schema, None, c);
    }
}

const PORTS: &str = r#"
types:
- name: v1
  map:
    fields:
    - name: containerPorts
      type:
        list:
          elementType:
            map:
              fields:
              - name: port
                type: {scalar: numeric}
              - name: protocol
                default: "TCP"
                type: {scalar: string}
              - name: name
                type: {scalar: string}
          elementRelationship: associative
          keys: [port, protocol]
"#;

#[test]
fn keys_with_defaults() {
    use Op::*;
    let cases = [
        Case {
            name: "apply_missing_defaulted_key_A",
            ops: &[Apply("default", "v1", "containerPorts:\n- port: 80")],
            object: Some("containerPorts:\n- port: 80"),
            managed: Some(&[(
                "default",
                "v1",
                &[
                    r#".containerPorts[port=80,protocol="TCP"]"#,
                    r#".containerPorts[port=80,protocol="TCP"].port"#,
                ],
            )]),
        },
        Case {
            name: "apply_missing_defaulted_key_B",
            ops: &[Apply(
                "default",
                "v1",
                "containerPorts:\n- port: 80\n- port: 80\n  protocol: UDP",
            )],
            object: Some("containerPorts:\n- port: 80\n- port: 80\n  protocol: UDP"),
            managed: Some(&[(
                "default",
                "v1",
                &[
                    r#".containerPorts[port=80,protocol="TCP"]"#,
                    r#".containerPorts[port=80,protocol="TCP"].port"#,
                    r#".containerPorts[port=80,protocol="UDP"]"#,
                    r#".containerPorts[port=80,protocol="UDP"].port"#,
                    r#".containerPorts[port=80,protocol="UDP"].protocol"#,
                ],
            )]),
        },
        Case {
            name: "apply_missing_defaulted_key_with_conflict",
            ops: &[
                Apply(
                    "apply-one",
                    "v1",
                    "containerPorts:\n- port: 80\n  protocol: TCP\n  name: foo",
                ),
                Conflicts(
                    "apply-two",
                    "v1",
                    "containerPorts:\n- port: 80\n  name: bar",
                    &[(
                        "apply-one",
                        r#".containerPorts[port=80,protocol="TCP"].name"#,
                    )],
                ),
            ],
            object: Some("containerPorts:\n- port: 80\n  protocol: TCP\n  name: foo"),
            managed: Some(&[(
                "apply-one",
                "v1",
                &[
                    r#".containerPorts[port=80,protocol="TCP"]"#,
                    r#".containerPorts[port=80,protocol="TCP"].name"#,
                    r#".containerPorts[port=80,protocol="TCP"].port"#,
                    r#".containerPorts[port=80,protocol="TCP"].protocol"#,
                ],
            )]),
        },
        Case {
            name: "apply_missing_undefaulted_defaulted_key",
            ops: &[Apply(
                "default",
                "v1",
                "containerPorts:\n- protocol: TCP\n  name: A",
            )],
            object: Some("containerPorts:\n- protocol: TCP\n  name: A"),
            managed: Some(&[(
                "default",
                "v1",
                &[
                    r#".containerPorts[protocol="TCP"]"#,
                    r#".containerPorts[protocol="TCP"].name"#,
                    r#".containerPorts[protocol="TCP"].protocol"#,
                ],
            )]),
        },
    ];
    let schema = smd_schema(PORTS, "v1");
    for c in &cases {
        run(&schema, None, c);
    }
}

const ATOMIC_MAP: &str = r#"
types:
- name: v1
  map:
    fields:
    - name: atomicMap
      type: {namedType: atomicMap}
- name: atomicMap
  map:
    fields:
    - name: field1
      type: {scalar: string}
    - name: field2
      type: {scalar: string}
    elementRelationship: atomic
"#;

const DUPLICATES: &str = r#"
types:
- name: type
  map:
    fields:
    - name: list
      type: {namedType: associativeList}
    - name: unrelated
      type: {scalar: numeric}
    - name: set
      type:
        list:
          elementType: {scalar: numeric}
          elementRelationship: associative
- name: associativeList
  list:
    elementType: {namedType: myElement}
    elementRelationship: associative
    keys: [name]
- name: myElement
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value1
      type: {scalar: numeric}
    - name: value2
      type: {scalar: numeric}
"#;

#[test]
fn atomic_maps_and_duplicates() {
    use Op::*;
    run(
        &smd_schema(ATOMIC_MAP, "v1"),
        None,
        &Case {
            name: "force",
            ops: &[
                Apply("apply-one", "v1", "atomicMap:\n  field1: a"),
                Conflicts(
                    "apply-two",
                    "v1",
                    "atomicMap:\n  field2: b",
                    &[("apply-one", ".atomicMap")],
                ),
                Force("apply-two", "v1", "atomicMap:\n  field2: b"),
            ],
            object: Some("atomicMap:\n  field2: b"),
            managed: Some(&[("apply-two", "v1", &[".atomicMap"])]),
        },
    );
    let schema = smd_schema(DUPLICATES, "type");
    let cases = [
        Case {
            name: "list/ownership/duplicated_items",
            ops: &[Update(
                "updater",
                "v1",
                "list:\n- name: a\n  value1: 1\n- name: a\n  value1: 2\n- name: b\n  value1: 3",
            )],
            object: None,
            managed: Some(&[(
                "updater",
                "v1",
                &[
                    ".list",
                    ".list[name=\"a\"]",
                    ".list[name=\"b\"]",
                    ".list[name=\"b\"].name",
                    ".list[name=\"b\"].value1",
                ],
            )]),
        },
        Case {
            name: "list/ownership/change_duplicated_items",
            ops: &[
                Update(
                    "updater-one",
                    "v1",
                    "list:\n- name: a\n  value1: 1\n- name: a\n  value1: 2\n- name: b\n  value1: 3",
                ),
                Update(
                    "updater-two",
                    "v1",
                    "list:\n- name: a\n  value1: 1\n- name: a\n  value1: 3\n- name: b\n  value1: 3",
                ),
            ],
            object: None,
            managed: Some(&[
                (
                    "updater-one",
                    "v1",
                    &[
                        ".list",
                        ".list[name=\"b\"]",
                        ".list[name=\"b\"].name",
                        ".list[name=\"b\"].value1",
                    ],
                ),
                ("updater-two", "v1", &[".list[name=\"a\"]"]),
            ]),
        },
        Case {
            name: "sets/ownership/remove_duplicate",
            ops: &[
                Update("updater-one", "v1", "set: [1, 1, 3, 4]"),
                Update("updater-two", "v1", "set: [1, 3, 4]"),
            ],
            object: None,
            managed: Some(&[
                ("updater-one", "v1", &[".set", ".set[=3]", ".set[=4]"]),
                ("updater-two", "v1", &[".set[=1]"]),
            ]),
        },
        Case {
            name: "sets/merging/remove_duplicate",
            ops: &[
                Update("updater", "v1", "set: [1, 1, 3, 4]"),
                Conflicts("applier", "v1", "set: [1]", &[("updater", ".set[=1]")]),
                Force("applier", "v1", "set: [1]"),
            ],
            object: Some("set: [1, 3, 4]"),
            managed: Some(&[
                ("updater", "v1", &[".set", ".set[=3]", ".set[=4]"]),
                ("applier", "v1", &[".set[=1]"]),
            ]),
        },
    ];
    for c in &cases {
        run(&schema, None, c);
    }
}

#[test]
fn ignored_fields_and_deduced_objects() {
    use Op::*;
    let deduced = TypedSchema::deduced();
    let ignore_string = Set::from_paths(&[Path::fields(&["string"])]);
    let ignore_obj = Set::from_paths(&[Path::fields(&["obj"])]);
    let owned_numeric: super::updater_cases::Owned = &[("default", "v1", &[".numeric"])];
    for (op, ignored) in [
        (
            Update("default", "v1", "numeric: 1\nstring: some"),
            &ignore_string,
        ),
        (
            Apply("default", "v1", "numeric: 1\nstring: some"),
            &ignore_string,
        ),
        (
            Update(
                "default",
                "v1",
                r#"{"numeric": 1, "obj": {"string": "foo", "numeric": 2}}"#,
            ),
            &ignore_obj,
        ),
        (
            Apply(
                "default",
                "v1",
                r#"{"numeric": 1, "obj": {"string": "foo", "numeric": 2}}"#,
            ),
            &ignore_obj,
        ),
    ] {
        let ops: &'static [Op] = Box::leak(Box::new([op]));
        run(
            &deduced,
            Some(ignored),
            &Case {
                name: "does_not_own_ignored",
                ops,
                object: None,
                managed: Some(owned_numeric),
            },
        );
    }
    let cases = [
        Case {
            name: "apply_twice_list_is_atomic",
            ops: &[
                Apply("default", "v1", "list: [a, c]"),
                Apply("default", "v1", "list: [a, d, c, b]"),
            ],
            object: Some("list: [a, d, c, b]"),
            managed: Some(&[("default", "v1", &[".list"])]),
        },
        Case {
            name: "apply_update_apply_list",
            ops: &[
                Apply("default", "v1", "list: [a, c]"),
                Update("controller", "v1", "list: [a, b, c, d]"),
                Force("default", "v1", "list: [a, b, c]"),
            ],
            object: Some("list: [a, b, c]"),
            managed: Some(&[("default", "v1", &[".list"])]),
        },
        Case {
            name: "apply_update_apply_nested",
            ops: &[
                Apply(
                    "default",
                    "v1",
                    "a: 1\nb:\n  c:\n    d: 2\n    e: [1, 2, 3]\n    f:\n    - name: n\n      value: 1",
                ),
                Update(
                    "controller",
                    "v1",
                    "a: 1\nb:\n  c:\n    d: 3\n    e: [1, 2, 3, 4]\n    f:\n    - name: n\n      value: 2\ng: 5",
                ),
                Conflicts(
                    "default",
                    "v1",
                    "a: 2\nb:\n  c:\n    d: 2\n    e: [3, 2, 1]\n    f:\n    - name: n\n      value: 1",
                    &[
                        ("controller", ".b.c.d"),
                        ("controller", ".b.c.e"),
                        ("controller", ".b.c.f"),
                    ],
                ),
                Force(
                    "default",
                    "v1",
                    "a: 2\nb:\n  c:\n    d: 2\n    e: [3, 2, 1]\n    f:\n    - name: n\n      value: 1",
                ),
            ],
            object: Some(
                "a: 2\nb:\n  c:\n    d: 2\n    e: [3, 2, 1]\n    f:\n    - name: n\n      value: 1\ng: 5",
            ),
            managed: None,
        },
    ];
    for c in &cases {
        run(&deduced, None, c);
    }
}
