//! The citation check: no tracked file cites a document the repository does not hold — the
//! design notes kcm-rs was first written from (their folder, their "spec" sections) — nor a
//! bare section sign and number that names no document. A section of the repository's own
//! documents is cited with the document's path on the same line (`docs/sharding.md §6`); a
//! Markdown document's bare `§N` is one of its own sections.

use std::path::Path;

use super::Finding;

/// `§`, written as an escape so that this file's source holds no citation itself.
const SECTION: char = '\u{a7}';

/// What a line cites outside the repository, if anything.
fn outside_citation(
    line: &str,
    in_markdown: bool,
    is_document: impl Fn(&str) -> bool,
) -> Option<String> {
    // Joined at run time, for the same reason as [`SECTION`].
    let notes_folder = ["shared", "docs"].join("/");
    if line.contains(&notes_folder) {
        return Some(format!(
            "cites `{notes_folder}/…`, a folder outside the repository"
        ));
    }
    let lower = line.to_lowercase();
    for (at, _) in lower.match_indices("spec ") {
        let rest = &line[at + "spec ".len()..];
        let mut chars = rest.chars();
        let cited = match chars.next() {
            Some(c) if c == SECTION => true,
            Some('A') => {
                chars.next() == Some('.') && chars.next().is_some_and(|c| c.is_ascii_digit())
            }
            _ => false,
        };
        if cited {
            return Some(format!(
                "cites `{} {}`, a specification outside the repository",
                &line[at..at + "spec".len()],
                first_word(rest)
            ));
        }
    }
    if in_markdown || names_document(line, &is_document) {
        return None;
    }
    for (at, c) in line.char_indices() {
        if c != SECTION {
            continue;
        }
        let digit_follows = line[at + c.len_utf8()..]
            .trim_start_matches([' ', '\u{a0}'])
            .starts_with(|d: char| d.is_ascii_digit());
        if digit_follows {
            return Some(format!(
                "cites `{}` without naming the document (a reader cannot tell which)",
                first_word(&line[at..])
            ));
        }
    }
    None
}

/// The first word of `text`, without the punctuation that may end it.
fn first_word(text: &str) -> &str {
    text.split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_end_matches([')', ',', '.', ';', ':'])
}

/// Whether `line` names one of the repository's Markdown documents (a path ending in `.md`).
fn names_document(line: &str, is_document: &impl Fn(&str) -> bool) -> bool {
    line.match_indices(".md").any(|(at, _)| {
        let start = line[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '_' | '-' | '.')))
            .map_or(0, |i| i + 1);
        is_document(&line[start..at + ".md".len()])
    })
}

/// The citations of documents outside the repository in the tracked files `files` (paths
/// relative to `root`); a file that is not UTF-8 text is passed over.
pub(crate) fn check(root: &Path, files: &[String]) -> Vec<Finding> {
    let documents: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| f.ends_with(".md"))
        .collect();
    let is_document = |named: &str| {
        documents
            .iter()
            .any(|d| *d == named || d.ends_with(&format!("/{named}")))
    };
    let mut findings = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let markdown = file.ends_with(".md");
        for (i, line) in text.lines().enumerate() {
            if let Some(problem) = outside_citation(line, markdown, is_document) {
                findings.push(Finding {
                    file: file.clone(),
                    line: i + 1,
                    problem,
                    fix: "cite the upstream file (and function) it ports, e.g. \
                          `pkg/controller/replicaset/replica_set.go`, or a section of the \
                          repository's own documents with its path (`docs/sharding.md` and the \
                          section)"
                        .into(),
                });
            }
        }
    }
    findings
}

/// The files git tracks in `root`, relative to it.
pub(crate) fn tracked_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| anyhow::anyhow!("could not start `git ls-files`: {e}"))?;
    if !out.status.success() {
        anyhow::bail!("`git ls-files` failed ({})", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited(line: &str, markdown: bool) -> Option<String> {
        outside_citation(line, markdown, |d| {
            d == "docs/sharding.md" || d == "sharding.md"
        })
    }

    #[test]
    fn outside_documents_are_found() {
        let s = SECTION;
        let notes = format!("see {}/docs/spec/informer.md", "shared");
        assert!(
            cited(&notes, true)
                .expect("a folder")
                .contains("outside the repository")
        );
        let spec = format!("//! Constants (spec {s}1).");
        assert_eq!(
            cited(&spec, false).as_deref(),
            Some(format!("cites `spec {s}1`, a specification outside the repository").as_str())
        );
        let a = "A";
        let appendix = format!("/// (500, see spec {a}.4).");
        assert!(
            cited(&appendix, false)
                .expect("an appendix")
                .contains(&format!("`spec {a}.4`"))
        );
        let range = format!("//! Deletion (spec {s}7.1–7.3).");
        assert!(
            cited(&range, false)
                .expect("a range")
                .contains(&format!("`spec {s}7.1–7.3`"))
        );
        let bare = format!("/// {s}6 step 1: these ranges left");
        assert!(
            cited(&bare, false)
                .expect("bare")
                .contains(&format!("`{s}6`"))
        );
    }

    #[test]
    fn the_repositorys_own_documents_are_not() {
        let s = SECTION;
        assert_eq!(
            cited(&format!("//! (`docs/sharding.md` {s}5, {s}6)."), false),
            None
        );
        assert_eq!(cited(&format!("- the fence of {s}5 closes"), true), None);
        assert_eq!(cited("the spec is A-ok; a spec A.b", false), None);
        assert_eq!(cited(&format!("{s} alone, {s}x"), false), None);
        assert!(cited(&format!("other.md {s}3"), false).is_some());
    }
}
