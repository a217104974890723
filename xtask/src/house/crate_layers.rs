//! The crate layer check: every normal (or build) dependency between workspace crates points
//! down the layers below; dev-dependencies may point anywhere (tests run on top of everything).

use super::Finding;
use crate::workspace::Workspace;

/// The crates from the bottom layer to the top; a crate may depend on crates of lower layers
/// only (not on a crate of its own layer).
const LAYERS: &[&[&str]] = &[
    &["kcm-util"],
    &["kcm-store", "kcm-workqueue", "kcm-sharding"],
    &["kcm-reflector"],
    &["kcm-informer"],
    &["kcm-leaderelection"],
    // May use any library crate below kcm-controller.
    &["kcm-testenv"],
    &["kcm-testenv-cli"],
    &["kcm-controller"],
    &["kcm-replicaset", "kcm-deployment"],
    &["kcm-manager"],
    // Controllers under test: kcm-testenv and kcm-manager in one call.
    &["kcm-harness"],
    &["kcm"],
    // The sample runs kcm's controllers beside its own, as any binary on kcm-manager may.
    &["kcm-sample-controller", "kcm-example-configmap"],
    &["xtask"],
];

/// Test tools: only each other and xtask may name them as normal dependencies (a library
/// names them as dev-dependencies).
const TEST_TOOLS: &[&str] = &["kcm-testenv", "kcm-testenv-cli", "kcm-harness"];

/// Downward arrows that are still not allowed, and why.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    (
        "kcm-manager",
        "kcm-deployment",
        "the manager is for anyone's controllers: kcm registers its two in cmd/",
    ),
    (
        "kcm-manager",
        "kcm-replicaset",
        "the manager is for anyone's controllers: kcm registers its two in cmd/",
    ),
];

/// Broken rules the tree still has while a change is under way: reported, not failed on.
/// Each entry must go as soon as the arrow does (the check then says so).
pub(crate) const KNOWN_FAILURES: &[(&str, &str)] = &[];

/// The layer arrows of the workspace: findings (rules broken) and notes (known failures).
pub(crate) fn check(ws: &Workspace) -> (Vec<Finding>, Vec<String>) {
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    let mut seen_known = Vec::new();
    for p in &ws.packages {
        let manifest = std::fs::read_to_string(&p.manifest_path).unwrap_or_default();
        let file = ws.relative(&p.manifest_path);
        let Some(from) = layer(&p.name) else {
            findings.push(Finding {
                file,
                line: 1,
                problem: format!("crate `{}` has no layer", p.name),
                fix: "add it to LAYERS in xtask/src/house/crate_layers.rs".into(),
            });
            continue;
        };
        let deps = p
            .dependencies_of(None)
            .chain(p.dependencies_of(Some("build")));
        for dep in deps {
            let Some(to) = layer(dep) else { continue };
            let Some(problem) = arrow_problem(&p.name, from, dep, to) else {
                continue;
            };
            if KNOWN_FAILURES.contains(&(p.name.as_str(), dep)) {
                seen_known.push((p.name.as_str(), dep));
                notes.push(format!("known failure (KNOWN_FAILURES): {problem}"));
                continue;
            }
            findings.push(Finding {
                file: file.clone(),
                line: dependency_line(&manifest, dep),
                problem,
                fix: format!(
                    "move what `{}` needs from `{dep}` down into a lower crate (or, if only its \
                     tests need it, make it a dev-dependency)",
                    p.name
                ),
            });
        }
    }
    for (from, to) in KNOWN_FAILURES {
        if !seen_known.contains(&(*from, *to)) {
            findings.push(Finding {
                file: "xtask/src/house/crate_layers.rs".into(),
                line: 1,
                problem: format!("`{from}` → `{to}` is listed in KNOWN_FAILURES but is gone"),
                fix: "remove it from KNOWN_FAILURES, so that it cannot come back".into(),
            });
        }
    }
    (findings, notes)
}

/// The layer of a workspace crate (its index in [`LAYERS`]).
fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&name))
}

/// What is wrong with a normal dependency of `from` (layer `lf`) on `to` (layer `lt`), if
/// anything.
fn arrow_problem(from: &str, lf: usize, to: &str, lt: usize) -> Option<String> {
    if let Some((_, _, why)) = FORBIDDEN.iter().find(|(f, t, _)| *f == from && *t == to) {
        return Some(format!("`{from}` depends on `{to}`: {why}"));
    }
    if TEST_TOOLS.contains(&to) && !TEST_TOOLS.contains(&from) && from != "xtask" {
        return Some(format!(
            "`{from}` depends on the test tool `{to}` as a normal dependency (only tests may)"
        ));
    }
    if lt >= lf {
        let names = |l: usize| LAYERS[l].join(", ");
        return Some(format!(
            "`{from}` (layer {lf}: {}) depends on `{to}` (layer {lt}: {}): an arrow {} the \
             layers (bottom to top: {})",
            names(lf),
            names(lt),
            if lt == lf { "within one of" } else { "up" },
            LAYERS
                .iter()
                .map(|l| l.join(" + "))
                .collect::<Vec<_>>()
                .join(" → ")
        ));
    }
    None
}

/// The line of `manifest` that names the dependency `dep` (1 if none does).
fn dependency_line(manifest: &str, dep: &str) -> usize {
    manifest
        .lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(dep)
                .is_some_and(|rest| rest.starts_with(['.', ' ', '=']))
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downward_arrows_pass_upward_and_sideways_ones_do_not() {
        let l = |n: &str| layer(n).expect("has a layer");
        let check = |from: &str, to: &str| arrow_problem(from, l(from), to, l(to));
        assert_eq!(check("kcm-informer", "kcm-reflector"), None);
        assert_eq!(check("kcm-testenv", "kcm-leaderelection"), None);
        assert_eq!(check("xtask", "kcm-testenv"), None);
        assert_eq!(check("kcm-testenv-cli", "kcm-testenv"), None);
        let up = check("kcm-store", "kcm-informer").expect("upward");
        assert!(up.contains("an arrow up the layers"), "{up}");
        let side = check("kcm-deployment", "kcm-replicaset").expect("sideways");
        assert!(side.contains("within one of"), "{side}");
        assert!(check("kcm-testenv", "kcm-controller").is_some());
        let tool = check("kcm-manager", "kcm-testenv").expect("a test tool");
        assert!(tool.contains("test tool"), "{tool}");
        let forbidden = check("kcm-manager", "kcm-deployment").expect("forbidden");
        assert!(forbidden.contains("cmd/"), "{forbidden}");
    }

    #[test]
    fn every_layer_is_named_once() {
        let mut all: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
        for (from, to) in KNOWN_FAILURES {
            assert!(layer(from).is_some() && layer(to).is_some());
        }
    }

    #[test]
    fn the_manifest_line_of_a_dependency_is_found() {
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nkcm-store-extra = \"1\"\n\
                        kcm-store.workspace = true\nkcm-util = { path = \"u\" }\n";
        assert_eq!(dependency_line(manifest, "kcm-store"), 6);
        assert_eq!(dependency_line(manifest, "kcm-util"), 7);
        assert_eq!(dependency_line(manifest, "kcm-informer"), 1);
    }
}
