//! The JSONPath subset printer columns use (client-go `util/jsonpath`): `.a.b`, `[n]`,
//! `[*]` and `[?(@.k=="v")]` filters, evaluated to the first match, and a match printed as
//! `PrintResults` prints it (strings bare, other values as JSON).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    All,
    Filter { path: Vec<String>, value: String },
}

fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(p);
    let mut steps = Vec::new();
    let mut rest = p.strip_prefix('$').unwrap_or(p);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end > 0 {
                steps.push(Step::Key(r[..end].to_string()));
            }
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = &r[..end];
            rest = &r[end + 1..];
            if inner == "*" {
                steps.push(Step::All);
            } else if let Some(f) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
                let (lhs, rhs) = f.split_once("==")?;
                let path = lhs
                    .trim()
                    .strip_prefix('@')?
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                let value = rhs.trim().trim_matches(['"', '\'']).to_string();
                steps.push(Step::Filter { path, value });
            } else if let Ok(i) = inner.parse() {
                steps.push(Step::Index(i));
            } else {
                steps.push(Step::Key(inner.trim_matches(['"', '\'']).to_string()));
            }
        } else {
            return None;
        }
    }
    Some(steps)
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn eval<'a>(v: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    let Some((first, rest)) = steps.split_first() else {
        return Some(v);
    };
    match first {
        Step::Key(k) => eval(v.get(k)?, rest),
        Step::Index(i) => eval(v.get(*i)?, rest),
        Step::All => v.as_array()?.iter().find_map(|x| eval(x, rest)),
        Step::Filter { path, value } => v.as_array()?.iter().find_map(|x| {
            let mut cur = x;
            for p in path {
                cur = cur.get(p)?;
            }
            if scalar_text(cur) == *value {
                eval(x, rest)
            } else {
                None
            }
        }),
    }
}

/// The first value `path` selects in `obj`.
pub fn find<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    eval(obj, &parse(path)?)
}

/// A value as a `string` column prints it.
pub fn print(v: &Value) -> String {
    scalar_text(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn column_paths() {
        let o = json!({"spec": {"replicas": 3, "tags": ["a", "b"]},
                       "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}});
        let cases = [
            (".spec.replicas", Some(json!(3))),
            (".spec.tags[1]", Some(json!("b"))),
            (".spec.tags[*]", Some(json!("a"))),
            (
                ".status.conditions[?(@.type==\"Synced\")].status",
                Some(json!("False")),
            ),
            (
                "{.status.conditions[?(@.type=='Ready')].status}",
                Some(json!("True")),
            ),
            (".spec.missing", None),
        ];
        for (p, want) in cases {
            assert_eq!(find(&o, p).cloned(), want, "{p}");
        }
        assert_eq!(print(&json!({"a": 1})), "{\"a\":1}");
    }
}
