//! Kubernetes-aware version order (upstream `apimachinery/pkg/version`
//! `CompareKubeAwareVersionStrings`): GA before beta before alpha, higher numbers first, then
//! the versions that do not look like Kubernetes versions, alphabetically.

use std::cmp::Ordering;

/// `(major, 0 alpha | 1 beta | 2 GA, minor)` of `v1`, `v2beta1`, `v1alpha3`.
fn parse(v: &str) -> Option<(u64, u8, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major: u64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((major, 2, 0));
    }
    let (kind, minor) = if let Some(m) = tail.strip_prefix("alpha") {
        (0, m)
    } else if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, kind, minor.parse().ok()?))
}

/// Order for sorting versions by priority: `Less` means `a` comes first.
pub fn by_priority(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.1.cmp(&x.1).then(y.0.cmp(&x.0)).then(y.2.cmp(&x.2)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_order() {
        // the example order of upstream's CompareKubeAwareVersionStrings documentation
        let mut v = vec![
            "foo10",
            "v11alpha2",
            "v1",
            "v12alpha1",
            "v10beta3",
            "v3beta1",
            "v10",
            "v2",
            "foo1",
            "v11beta2",
            "v1beta1",
        ];
        v.sort_by(|a, b| by_priority(a, b));
        assert_eq!(
            v,
            vec![
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "foo1",
                "foo10"
            ]
        );
    }
}
