//! `cargo xtask house`: the rules of the house that a machine can check, run by `cargo xtask
//! ci`. Each finding names a file, a line, what is wrong and what to do.
//!
//! - no module circle inside a crate ([`circles`], over [`module_graph`]'s arrows between
//!   files), test code included;
//! - no crate depending on a crate of its own or a higher layer ([`crate_layers`]);
//! - no file over 600 lines but generated ones ([`file_length`]);
//! - every library source file in `docs/upstream-map.md` ([`upstream_map`]);
//! - no citation of a document outside the repository ([`citations`]).

mod circles;
mod citations;
mod crate_layers;
mod file_length;
mod lexer;
mod module_graph;
mod module_syntax;
mod upstream_map;

use std::fmt;
use std::path::PathBuf;

use crate::workspace::Workspace;

/// One broken rule, where it is and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// The file, relative to the workspace root.
    pub file: String,
    pub line: usize,
    pub problem: String,
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}\n  fix: {}",
            self.file, self.line, self.problem, self.fix
        )
    }
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(extra) = args.first() {
        anyhow::bail!("`cargo xtask house` takes no arguments (got `{extra}`)");
    }
    let ws = Workspace::read()?;
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    for p in &ws.packages {
        let roots: Vec<PathBuf> = p.targets.iter().map(|t| t.src_path.clone()).collect();
        match circles::arrows_of(&roots) {
            Ok(arrows) => findings.extend(circles::findings(&arrows, &ws.workspace_root)),
            Err(e) => findings.push(Finding {
                file: ws.relative(&p.manifest_path),
                line: 1,
                problem: format!("could not read the modules of `{}`: {e:#}", p.name),
                fix: format!(
                    "make the crate build (`cargo check -p {}`), then run this again",
                    p.name
                ),
            }),
        }
    }
    let (layer_findings, layer_notes) = crate_layers::check(&ws);
    findings.extend(layer_findings);
    notes.extend(layer_notes);
    findings.extend(file_length::check(&ws)?);
    match upstream_map::check(&ws)? {
        Ok(missing) => findings.extend(missing),
        Err(skipped) => notes.push(skipped),
    }
    let tracked = citations::tracked_files(&ws.workspace_root)?;
    findings.extend(citations::check(&ws.workspace_root, &tracked));
    for f in &findings {
        eprintln!("{f}\n");
    }
    for n in &notes {
        eprintln!("xtask: house: {n}");
    }
    if !findings.is_empty() {
        anyhow::bail!("{} house rule(s) broken (see above)", findings.len());
    }
    eprintln!("xtask: house rules hold");
    Ok(())
}
