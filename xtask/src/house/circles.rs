//! The module circle check: files of one crate that depend on each other, directly or round a
//! longer loop (a strongly connected component of the file graph), test code included. The
//! arrows are [`module_graph`](super::module_graph)'s: a module naming an item of a sibling, a
//! cousin or a descendant (not of an ancestor).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::Finding;
use super::module_graph::{Arrow, ModuleTree};

/// The circles among `arrows` (of one crate, any number of targets), as findings relative to
/// `root`: one per circle, naming every file in it and the arrows that close it.
pub(crate) fn findings(arrows: &[Arrow], root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for circle in circles(arrows) {
        let inside: Vec<&Arrow> = arrows
            .iter()
            .filter(|a| circle.contains(&a.from) && circle.contains(&a.to))
            .collect();
        // The first arrow of each (from, to) pair says where it is.
        let mut firsts: BTreeMap<(&PathBuf, &PathBuf), &Arrow> = BTreeMap::new();
        for a in &inside {
            firsts.entry((&a.from, &a.to)).or_insert(a);
        }
        let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let files: Vec<String> = circle.iter().map(|p| rel(p)).collect();
        let how: Vec<String> = firsts
            .values()
            .map(|a| {
                format!(
                    "{}:{} uses `{}` from {}",
                    rel(&a.from),
                    a.line,
                    a.path,
                    rel(&a.to)
                )
            })
            .collect();
        let first = firsts.values().next().copied();
        out.push(Finding {
            file: first.map_or_else(|| files[0].clone(), |a| rel(&a.from)),
            line: first.map_or(1, |a| a.line),
            problem: format!(
                "module circle of {} files ({}):\n    {}",
                files.len(),
                files.join(", "),
                how.join("\n    ")
            ),
            fix: "move what the files share into a module they both import (or merge them), \
                  so every arrow points one way"
                .into(),
        });
    }
    out
}

/// The arrows of every module tree rooted at `roots`.
pub(crate) fn arrows_of(roots: &[PathBuf]) -> anyhow::Result<Vec<Arrow>> {
    let mut all = Vec::new();
    for root in roots {
        all.extend(ModuleTree::load(root)?.arrows());
    }
    all.sort();
    all.dedup();
    Ok(all)
}

/// The strongly connected components of more than one file (Tarjan's algorithm), each sorted,
/// in order of their first file.
fn circles(arrows: &[Arrow]) -> Vec<Vec<PathBuf>> {
    let mut nodes: BTreeSet<&PathBuf> = BTreeSet::new();
    for a in arrows {
        nodes.insert(&a.from);
        nodes.insert(&a.to);
    }
    let index: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let names: Vec<&PathBuf> = nodes.into_iter().collect();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for a in arrows {
        next[index[&a.from]].insert(index[&a.to]);
    }
    let mut found: Vec<Vec<PathBuf>> = tarjan(&next)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut files: Vec<PathBuf> = c.into_iter().map(|i| names[i].clone()).collect();
            files.sort();
            files
        })
        .collect();
    found.sort();
    found
}

/// Strongly connected components of the graph `next` (node → successors), iteratively.
fn tarjan(next: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = next.len();
    let (mut index, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut components) = (Vec::new(), Vec::new());
    let mut counter = 0;
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        // (node, successors still to visit)
        let mut work: Vec<(usize, Vec<usize>)> =
            vec![(start, next[start].iter().copied().collect())];
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, next[w].iter().copied().collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrow(from: &str, to: &str, line: usize) -> Arrow {
        Arrow {
            from: from.into(),
            to: to.into(),
            line,
            path: format!("crate::{}", to.trim_end_matches(".rs")),
        }
    }

    #[test]
    fn a_pair_and_a_longer_loop_are_circles_a_chain_is_not() {
        let arrows = [
            arrow("a.rs", "b.rs", 1),
            arrow("b.rs", "a.rs", 2),
            arrow("c.rs", "d.rs", 3),
            arrow("d.rs", "e.rs", 4),
            arrow("e.rs", "c.rs", 5),
            arrow("e.rs", "f.rs", 6),
            arrow("f.rs", "g.rs", 7),
        ];
        let got = circles(&arrows);
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(got, [p(&["a.rs", "b.rs"]), p(&["c.rs", "d.rs", "e.rs"])]);
    }

    #[test]
    fn a_finding_names_the_files_and_the_arrows() {
        let arrows = [
            arrow("/w/x/a.rs", "/w/x/b.rs", 10),
            arrow("/w/x/b.rs", "/w/x/a.rs", 20),
        ];
        let f = findings(&arrows, Path::new("/w"));
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].file.as_str(), f[0].line), ("x/a.rs", 10));
        assert!(
            f[0].problem
                .contains("x/a.rs:10 uses `crate::/w/x/b` from x/b.rs")
        );
        assert!(f[0].problem.contains("x/b.rs:20 uses"));
    }

    #[test]
    fn a_test_only_pair_in_real_files_is_found() {
        let tree = ModuleTree::from_sources(&[
            ("src/lib.rs", "#[cfg(test)]\nmod model;\n"),
            ("src/model/mod.rs", "mod shell;\nmod world;\n"),
            (
                "src/model/shell.rs",
                "use super::world::World;\npub struct Node;\n",
            ),
            (
                "src/model/world.rs",
                "use super::shell::Node;\npub struct World;\n",
            ),
        ])
        .expect("loads");
        let got = circles(&tree.arrows());
        assert_eq!(
            got,
            [vec![
                PathBuf::from("src/model/shell.rs"),
                PathBuf::from("src/model/world.rs")
            ]]
        );
    }

    #[test]
    fn use_super_star_in_a_test_module_is_no_circle() {
        let tree = ModuleTree::from_sources(&[
            ("src/lib.rs", "mod a;\npub use a::f;\n"),
            (
                "src/a.rs",
                "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    \
                 fn t() { f(); crate::a::f(); }\n}\n",
            ),
        ])
        .expect("loads");
        assert!(circles(&tree.arrows()).is_empty());
    }
}
