//! The upstream map check: every source file of a library crate appears, by its path from the
//! workspace root, in `docs/upstream-map.md` (which says what upstream file and function each
//! one ports, or that it ports none), so the map cannot fall behind the tree.

use super::Finding;
use super::file_length::rust_files;
use crate::workspace::Workspace;

/// The map, relative to the workspace root.
pub(crate) const MAP: &str = "docs/upstream-map.md";

/// The library files the map does not name; `Err` with a note when the map does not exist yet
/// (the check is then skipped).
pub(crate) fn check(ws: &Workspace) -> anyhow::Result<Result<Vec<Finding>, String>> {
    let path = ws.workspace_root.join(MAP);
    if !path.is_file() {
        return Ok(Err(format!(
            "skipped the upstream map check: {MAP} does not exist yet"
        )));
    }
    let map = std::fs::read_to_string(&path)?;
    let mut findings = Vec::new();
    for p in ws.libraries() {
        for file in rust_files(&p.dir().join("src"))? {
            let rel = ws.relative(&file);
            if !mentions(&map, &rel) {
                findings.push(Finding {
                    file: rel,
                    line: 1,
                    problem: format!("a library source file {MAP} does not name"),
                    fix: format!(
                        "add it to {MAP} with the upstream file and function it ports (or \
                         \"none\" and what it is)"
                    ),
                });
            }
        }
    }
    Ok(Ok(findings))
}

/// Whether `doc` names `path` as a whole path (not as the tail of a longer one, nor the head of
/// one that goes on: `a/src/lib.rs` is not in `xa/src/lib.rs` nor in `a/src/lib.rs2`).
fn mentions(doc: &str, path: &str) -> bool {
    let part_of_path = |c: char| c.is_alphanumeric() || matches!(c, '/' | '_' | '-' | '.');
    doc.match_indices(path).any(|(at, _)| {
        let before = doc[..at].chars().next_back();
        let mut after = doc[at + path.len()..].chars();
        let goes_on = match after.next() {
            // A sentence's full stop, or an extension (`.rs`).
            Some('.') => after.next().is_some_and(char::is_alphanumeric),
            Some(c) => c.is_alphanumeric() || c == '_' || c == '/',
            None => false,
        };
        !before.is_some_and(part_of_path) && !goes_on
    })
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn a_path_is_named_whole() {
        let doc = "| `store/src/lib.rs` | none |\n| xutil/src/a.rs | x |\n- util/src/b.rs.\n";
        assert!(mentions(doc, "store/src/lib.rs"));
        assert!(!mentions(doc, "util/src/a.rs"));
        assert!(mentions(doc, "util/src/b.rs"));
        assert!(!mentions(doc, "store/src/lib"));
    }
}
