//! The pod-template hash against upstream's own: `tests/fixtures/template_hash.json` holds, for each
//! template of `tests/fixtures/template_hash_cases.json`, the template as the API server serves it
//! (`stored`) and the hash upstream's `controller.ComputeHash` (v1.37.2) gives it, both made by
//! `upstream/cmd/templatehash`. Regenerate, from `upstream/`, with
//!
//! ```text
//! f=../controllers/deployment/tests/fixtures
//! go run ./cmd/templatehash < $f/template_hash_cases.json > $f/template_hash.json
//! ```
//!
//! `tests/fixtures/template_hash_random.json` holds random templates (`-random 20 -seed 1`): every field
//! of the Go types, including ones newer than the k8s-openapi the tests build with, so those are
//! checked through the JSON entry point only.
//!
//! With `TEMPLATEHASH_DUMP=1` the Go program also writes upstream's go-spew text (`dump`); this
//! test then compares the text too, which shows where a mismatch starts.

use super::{compute_hash, compute_hash_json};
use crate::util::spew::dump_pod_template;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    collision_count: Option<i32>,
    stored: serde_json::Value,
    hash: String,
    dump: Option<String>,
}

fn cases(file: &str) -> Vec<Case> {
    let path = std::env::var("KCM_TEMPLATE_HASH_FIXTURE")
        .unwrap_or_else(|_| format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR")));
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    serde_json::from_str(&text).expect("fixture parses")
}

#[test]
fn pod_template_hash_matches_upstream() {
    let cases = cases("template_hash.json");
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    check(&cases, true);
}

#[test]
fn pod_template_hash_of_random_templates_matches_upstream() {
    let cases = cases("template_hash_random.json");
    assert!(cases.len() >= 20, "only {} cases", cases.len());
    check(&cases, false);
}

/// Checks each case through the JSON entry point and, with `typed`, through `PodTemplateSpec`.
fn check(cases: &[Case], typed: bool) {
    let mut failures = Vec::new();
    for case in cases {
        if let Some(want) = &case.dump {
            let got = dump_pod_template(&case.stored);
            if &got != want {
                let at = got
                    .bytes()
                    .zip(want.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = at.saturating_sub(80);
                failures.push(format!(
                    "{}: dump differs at byte {at}:\n  got  ...{}\n  want ...{}",
                    case.name,
                    got.get(from..(at + 80).min(got.len())).unwrap_or(""),
                    want.get(from..(at + 80).min(want.len())).unwrap_or(""),
                ));
            }
        }
        let got = compute_hash_json(&case.stored, case.collision_count);
        if got != case.hash {
            failures.push(format!(
                "{}: JSON hash {got}, upstream {}",
                case.name, case.hash
            ));
        }
        if typed {
            let typed: PodTemplateSpec =
                serde_json::from_value(case.stored.clone()).expect("stored template decodes");
            let got = compute_hash(&typed, case.collision_count);
            if got != case.hash {
                failures.push(format!(
                    "{}: typed hash {got}, upstream {}",
                    case.name, case.hash
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
