//! The source layers (see README "Layout"): `registry` imports no other layer of the crate,
//! `storage` only `registry`, `apiserver` only those two. Checked on the source text, so a new
//! upward import fails here before it grows into an import circle.

use std::path::Path;

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file");
            out.push((path.display().to_string(), text));
        }
    }
    out
}

fn assert_layer(layer: &str, forbidden: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let files = sources(&dir);
    assert!(!files.is_empty(), "no sources in {}", dir.display());
    for (file, text) in files {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for upper in forbidden {
                assert!(
                    !code.contains(&format!("crate::{upper}")),
                    "{file}:{}: the {layer} layer imports `crate::{upper}`: {line}",
                    n + 1
                );
            }
        }
    }
}

#[test]
fn lower_layers_do_not_import_upper_ones() {
    let above_apiserver = ["env", "sim", "faults", "TestEnv", "TestCluster"];
    assert_layer("apiserver", &above_apiserver);
    let above_storage = [&above_apiserver[..], &["apiserver"]].concat();
    assert_layer("storage", &above_storage);
    let above_registry = [&above_storage[..], &["storage"]].concat();
    assert_layer("registry", &above_registry);
}
