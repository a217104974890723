//! Label selectors (`k=v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`) and field
//! selectors (`k=v`, `k==v`, `k!=v`) with the per-kind field labels of spec §5.

use serde_json::Value;

use crate::registry::StorageId;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `k=v` / `k==v`
    Equals(String, String),
    /// `k!=v` (also matches objects without `k`)
    NotEquals(String, String),
    /// `k in (a,b)`
    In(String, Vec<String>),
    /// `k notin (a,b)` (also matches objects without `k`)
    NotIn(String, Vec<String>),
    /// `k`
    Exists(String),
    /// `!k`
    DoesNotExist(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<Requirement>);

fn is_ident_char(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, ',' | '=' | '!' | '(' | ')'))
}

fn valid_label_value(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.ends_with(|c: char| c.is_ascii_alphanumeric())
}

struct Lexer<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }
    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if is_ident_char(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        &self.s[start..self.pos]
    }
}

impl LabelSelector {
    /// Parse the string form. Errors carry the upstream-like message.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        let mut lx = Lexer { s, pos: 0 };
        lx.skip_ws();
        if lx.peek().is_none() {
            return Ok(LabelSelector(reqs));
        }
        loop {
            lx.skip_ws();
            let req = if lx.eat('!') {
                lx.skip_ws();
                let k = lx.ident();
                if k.is_empty() {
                    return Err(format!(
                        "unable to parse requirement: found '{}', expected: identifier",
                        rest(&lx)
                    ));
                }
                Requirement::DoesNotExist(k.to_string())
            } else {
                let k = lx.ident();
                if k.is_empty() {
                    return Err(format!(
                        "unable to parse requirement: found '{}', expected: identifier",
                        rest(&lx)
                    ));
                }
                let key = k.to_string();
                lx.skip_ws();
                if lx.eat('=') {
                    lx.eat('=');
                    lx.skip_ws();
                    let v = lx.ident().to_string();
                    Requirement::Equals(key, check_value(v)?)
                } else if lx.eat('!') {
                    if !lx.eat('=') {
                        return Err("unable to parse requirement: found '!', expected: '='".into());
                    }
                    lx.skip_ws();
                    let v = lx.ident().to_string();
                    Requirement::NotEquals(key, check_value(v)?)
                } else if matches!(lx.peek(), Some(',') | None) {
                    Requirement::Exists(key)
                } else {
                    let op = lx.ident();
                    if op != "in" && op != "notin" {
                        return Err(format!(
                            "unable to parse requirement: found '{op}', expected: in, notin, =, ==, !=, gt, lt"
                        ));
                    }
                    lx.skip_ws();
                    if !lx.eat('(') {
                        return Err("unable to parse requirement: found '', expected: '('".into());
                    }
                    let mut vals = Vec::new();
                    loop {
                        lx.skip_ws();
                        let v = lx.ident().to_string();
                        vals.push(check_value(v)?);
                        lx.skip_ws();
                        if lx.eat(',') {
                            continue;
                        }
                        if lx.eat(')') {
                            break;
                        }
                        return Err(format!(
                            "unable to parse requirement: found '{}', expected: ',', ')'",
                            rest(&lx)
                        ));
                    }
                    if op == "in" {
                        Requirement::In(key, vals)
                    } else {
                        Requirement::NotIn(key, vals)
                    }
                }
            };
            reqs.push(req);
            lx.skip_ws();
            if lx.peek().is_none() {
                break;
            }
            if !lx.eat(',') {
                return Err(format!(
                    "found '{}', expected: ',' or 'end of string'",
                    rest(&lx)
                ));
            }
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether the labels (a JSON object or null) match.
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
    }

    /// Whether labels looked up through `get` match.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn rest(lx: &Lexer<'_>) -> String {
    lx.s[lx.pos..].chars().take(1).collect()
}

fn check_value(v: String) -> Result<String, String> {
    if valid_label_value(&v) {
        Ok(v)
    } else {
        Err(format!(
            "invalid label value: \"{v}\": at key: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ))
    }
}

/// One field requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Field label.
    pub field: String,
    /// `true` for `!=`.
    pub negate: bool,
    /// Value.
    pub value: String,
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(pub Vec<FieldRequirement>);

/// The field labels a bucket supports beyond `metadata.name`/`metadata.namespace`.
pub fn extra_fields(id: StorageId) -> &'static [&'static str] {
    match id {
        StorageId::Pods => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        StorageId::ReplicaSets => &["status.replicas"],
        StorageId::Namespaces => &["status.phase", "name"],
        StorageId::Nodes => &["spec.unschedulable"],
        StorageId::Events => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        StorageId::Deployments | StorageId::Leases => &[],
    }
}

impl FieldSelector {
    /// Parse and check the field labels against the bucket (400 text on error).
    pub fn parse(s: &str, id: StorageId) -> Result<FieldSelector, String> {
        let mut reqs = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, negate, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            let field = match (id, field) {
                // events.k8s.io names map onto the stored core fields
                (StorageId::Events, f) if f.starts_with("regarding.") => {
                    format!("involvedObject.{}", &f["regarding.".len()..])
                }
                (StorageId::Events, "reportingController") => "reportingComponent".to_string(),
                _ => field.to_string(),
            };
            if field != "metadata.name"
                && field != "metadata.namespace"
                && !extra_fields(id).contains(&field.as_str())
            {
                return Err(format!("field label not supported: {field}"));
            }
            reqs.push(FieldRequirement {
                field,
                negate,
                value: value.trim().to_string(),
            });
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether the object matches.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0
            .iter()
            .all(|r| (field_value(obj, &r.field) == r.value) != r.negate)
    }

    /// Whether field values looked up through `get` match (missing fields are `""`).
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0
            .iter()
            .all(|r| (get(&r.field).unwrap_or("") == r.value) != r.negate)
    }

    /// The value of `metadata.name=X` if the selector pins one name.
    pub fn pinned_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.field == "metadata.name" && !r.negate)
            .map(|r| r.value.as_str())
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

fn scalar(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// The string value of a field label on an object (missing fields are `""`).
pub fn field_value(obj: &Value, field: &str) -> String {
    match field {
        "name" => scalar(str_at(obj, &["metadata", "name"])),
        "spec.hostNetwork" => {
            let b = str_at(obj, &["spec", "hostNetwork"])
                .and_then(Value::as_bool)
                .unwrap_or(false);
            b.to_string()
        }
        "spec.unschedulable" => {
            let b = str_at(obj, &["spec", "unschedulable"])
                .and_then(Value::as_bool)
                .unwrap_or(false);
            b.to_string()
        }
        "status.replicas" => {
            let n = str_at(obj, &["status", "replicas"])
                .and_then(Value::as_i64)
                .unwrap_or(0);
            n.to_string()
        }
        "status.podIPs" => scalar(str_at(obj, &["status", "podIP"])),
        "source" => scalar(str_at(obj, &["source", "component"])),
        f => {
            let path: Vec<&str> = f.split('.').collect();
            scalar(str_at(obj, &path))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selector_parse_table() {
        // cases modelled on upstream labels TestLabelSelectorParse / TestSelectorMatches
        let labels = json!({"app": "web", "tier": "fe"});
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app = web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web,db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("missing notin (db)", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app in (web, db),!missing", true),
            ("app=web,tier=be", false),
            ("app=web , tier=fe", true),
        ];
        for (s, want) in cases {
            let sel = LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(sel.matches(Some(&labels)), *want, "{s}");
        }
        assert!(LabelSelector::parse("app=web,").is_err());
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("app=we b").is_err());
        assert!(LabelSelector::parse("a=@").is_err());
        assert!(!LabelSelector::parse("x=y").expect("ok").matches(None));
    }

    #[test]
    fn field_selectors() {
        let pod = json!({"metadata": {"name": "p", "namespace": "n"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}});
        let s = FieldSelector::parse("metadata.name=p,status.phase=Pending", StorageId::Pods)
            .expect("ok");
        assert!(s.matches(&pod));
        assert_eq!(s.pinned_name(), Some("p"));
        let s = FieldSelector::parse("spec.nodeName!=n1", StorageId::Pods).expect("ok");
        assert!(!s.matches(&pod));
        let s = FieldSelector::parse("spec.nodeName==", StorageId::Pods).expect("ok");
        assert!(!s.matches(&pod));
        assert_eq!(
            FieldSelector::parse("spec.foo=bar", StorageId::Pods)
                .err()
                .as_deref(),
            Some("field label not supported: spec.foo")
        );
        assert!(FieldSelector::parse("status.phase=x", StorageId::Deployments).is_err());
        let ev = json!({"involvedObject": {"name": "web", "kind": "Deployment"}, "source": {"component": "c"}});
        let s = FieldSelector::parse(
            "involvedObject.name=web,involvedObject.kind=Deployment,source=c",
            StorageId::Events,
        )
        .expect("ok");
        assert!(s.matches(&ev));
        let s = FieldSelector::parse("regarding.name=web", StorageId::Events).expect("ok");
        assert!(s.matches(&ev));
    }
}
