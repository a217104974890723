//! The difference between two sorted lists of lines (a baseline and the tree's), in the style of
//! a unified diff: lines only the baseline has with `-`, lines only the tree has with `+`, in
//! order.

use std::cmp::Ordering;

/// The `-`/`+` lines from `old` to `new` (both sorted); empty when they are equal.
pub(crate) fn diff(old: &[String], new: &[String]) -> Vec<String> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => Ordering::Less,
            (None, _) => Ordering::Greater,
        };
        match order {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Less => {
                out.push(format!("-{}", old[i]));
                i += 1;
            }
            Ordering::Greater => {
                out.push(format!("+{}", new[j]));
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::diff;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn removed_and_added_lines_in_order() {
        let old = lines(&["fn a", "fn b", "struct C"]);
        let new = lines(&["fn a", "fn b2", "struct C", "trait D"]);
        assert_eq!(diff(&old, &new), ["-fn b", "+fn b2", "+trait D"]);
        assert!(diff(&old, &old).is_empty());
        assert_eq!(diff(&[], &lines(&["x"])), ["+x"]);
        assert_eq!(diff(&lines(&["x"]), &[]), ["-x"]);
    }
}
