//! The status kube-apiserver's CRD controllers write, as pure decisions: the naming
//! controller accepts names that no other CRD of the group uses (`NamesAccepted`, and
//! `Established` False `Installing`), the establishing controller then sets `Established`,
//! and the finalizer reports its progress in `Terminating` (upstream `controller/status`,
//! `controller/establish`, `controller/finalizer`).

use serde_json::{Map, Value, json};

use crate::registry::meta::{at, strings};

/// Set a condition as upstream's `SetCRDCondition`: the transition time moves only when the
/// status changes.
pub fn set_condition(
    crd: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let Some(st) = crd.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let conds = st.entry("conditions").or_insert(Value::Null);
    if conds.is_null() {
        *conds = json!([]);
    }
    let Some(list) = conds.as_array_mut() else {
        return;
    };
    let new = |time: &str| json!({"type": kind, "status": status, "lastTransitionTime": time, "reason": reason, "message": message});
    match list.iter_mut().find(|c| c["type"] == kind) {
        Some(c) => {
            let time = if c["status"] == status {
                c["lastTransitionTime"].as_str().unwrap_or(now).to_string()
            } else {
                now.to_string()
            };
            *c = new(&time);
        }
        None => list.push(new(now)),
    }
}

fn condition_status<'a>(crd: &'a Value, kind: &str) -> Option<&'a str> {
    at(crd, &["status", "conditions"])
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

fn list_at(v: &Value, path: &[&str]) -> Vec<String> {
    strings(at(v, path))
}

/// Whether two names objects say the same (missing and empty are equal).
fn same_names(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| -> Map<String, Value> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(_, x)| match x {
                        Value::String(s) => !s.is_empty(),
                        Value::Array(a) => !a.is_empty(),
                        Value::Null => false,
                        _ => true,
                    })
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    norm(a) == norm(b)
}

/// The naming controller's status update for `crd`, given every CRD stored (itself
/// included), or `None` when the accepted names already match the spec.
pub fn naming(crd: &Value, all: &[Value], now: &str) -> Option<Value> {
    if same_names(
        at(crd, &["spec", "names"]),
        at(crd, &["status", "acceptedNames"]),
    ) {
        return None;
    }
    let group = str_at(crd, &["spec", "group"]);
    let mut resources: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    for other in all
        .iter()
        .filter(|c| str_at(c, &["spec", "group"]) == group)
    {
        let a = |k: &str| str_at(other, &["status", "acceptedNames", k]).to_string();
        resources.extend([a("plural"), a("singular")]);
        resources.extend(list_at(other, &["status", "acceptedNames", "shortNames"]));
        kinds.extend([a("kind"), a("listKind")]);
    }
    let fresh = |requested: &str, accepted: &str, used: &[String]| -> Result<(), String> {
        if requested == accepted || !used.iter().any(|u| u == requested) {
            Ok(())
        } else {
            Err(format!("{requested:?} is already in use"))
        }
    };
    let requested = |k: &str| str_at(crd, &["spec", "names", k]).to_string();
    let accepted = |k: &str| str_at(crd, &["status", "acceptedNames", k]).to_string();
    let mut names = at(crd, &["status", "acceptedNames"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut failure: Option<(&str, String)> = None;
    for (k, reason, used) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
    ] {
        match fresh(&requested(k), &accepted(k), used) {
            Ok(()) => {
                names.insert(k.into(), json!(requested(k)));
            }
            Err(e) => failure = Some((reason, e)),
        }
    }
    let want_short = list_at(crd, &["spec", "names", "shortNames"]);
    let have_short = list_at(crd, &["status", "acceptedNames", "shortNames"]);
    if want_short != have_short {
        let errs: Vec<String> = want_short
            .iter()
            .filter(|s| !have_short.contains(s))
            .filter_map(|s| fresh(s, "", &resources).err())
            .collect();
        if errs.is_empty() {
            names.insert("shortNames".into(), json!(want_short));
        } else {
            let msg = if errs.len() == 1 {
                errs[0].clone()
            } else {
                format!("[{}]", errs.join(", "))
            };
            failure = Some(("ShortNamesConflict", msg));
        }
    }
    for (k, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match fresh(&requested(k), &accepted(k), &kinds) {
            Ok(()) => {
                names.insert(k.into(), json!(requested(k)));
            }
            Err(e) => failure = Some((reason, e)),
        }
    }
    match at(crd, &["spec", "names", "categories"]) {
        Some(c) => names.insert("categories".into(), c.clone()),
        None => names.remove("categories"),
    };
    let mut out = crd.clone();
    if let Some(st) = out.get_mut("status").and_then(Value::as_object_mut) {
        st.insert("acceptedNames".into(), Value::Object(names));
    }
    let accepted_ok = failure.is_none();
    match &failure {
        None => set_condition(
            &mut out,
            "NamesAccepted",
            "True",
            "NoConflicts",
            "no conflicts found",
            now,
        ),
        Some((reason, msg)) => set_condition(&mut out, "NamesAccepted", "False", reason, msg, now),
    }
    if condition_status(crd, "Established") != Some("True") {
        if accepted_ok {
            set_condition(
                &mut out,
                "Established",
                "False",
                "Installing",
                "the initial names have been accepted",
                now,
            );
        } else if condition_status(crd, "Established").is_none() {
            set_condition(
                &mut out,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
                now,
            );
        }
    }
    Some(out)
}

/// The establishing controller's status update: `Established` once the names are accepted.
pub fn establishing(crd: &Value, now: &str) -> Option<Value> {
    if condition_status(crd, "NamesAccepted") != Some("True")
        || condition_status(crd, "Established") == Some("True")
    {
        return None;
    }
    let mut out = crd.clone();
    set_condition(
        &mut out,
        "Established",
        "True",
        "InitialNamesAccepted",
        "the initial names have been accepted",
        now,
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(plural: &str, kind: &str) -> Value {
        json!({
            "metadata": {"name": format!("{plural}.example.com")},
            "spec": {"group": "example.com",
                     "names": {"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind, "listKind": format!("{kind}List")}},
            "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]},
        })
    }

    #[test]
    fn names_accepted_then_established() {
        let c = crd("widgets", "Widget");
        let named = naming(&c, std::slice::from_ref(&c), "T1").expect("update");
        assert_eq!(named["status"]["acceptedNames"]["kind"], "Widget");
        let conds = &named["status"]["conditions"];
        assert_eq!(
            (
                conds[0]["type"].clone(),
                conds[0]["status"].clone(),
                conds[0]["reason"].clone()
            ),
            (json!("NamesAccepted"), json!("True"), json!("NoConflicts"))
        );
        assert_eq!(
            (conds[1]["status"].clone(), conds[1]["reason"].clone()),
            (json!("False"), json!("Installing"))
        );
        assert!(naming(&named, std::slice::from_ref(&named), "T2").is_none());
        let est = establishing(&named, "T2").expect("establish");
        let e = &est["status"]["conditions"][1];
        assert_eq!(
            (
                e["status"].clone(),
                e["reason"].clone(),
                e["lastTransitionTime"].clone()
            ),
            (json!("True"), json!("InitialNamesAccepted"), json!("T2"))
        );
        assert!(establishing(&est, "T3").is_none());
    }

    #[test]
    fn conflicting_kind_is_not_accepted() {
        let first = naming(&crd("widgets", "Widget"), &[], "T").expect("first");
        let second = crd("gadgets", "Widget");
        let out = naming(&second, &[first, second.clone()], "T").expect("second");
        let na = &out["status"]["conditions"][0];
        // kind and listKind both clash: the last check's reason stands, as upstream's
        assert_eq!(
            (
                na["status"].clone(),
                na["reason"].clone(),
                na["message"].clone()
            ),
            (
                json!("False"),
                json!("ListKindConflict"),
                json!("\"WidgetList\" is already in use")
            )
        );
        assert_eq!(out["status"]["acceptedNames"]["kind"], "");
        assert_eq!(out["status"]["conditions"][1]["reason"], "NotAccepted");
        assert_eq!(out["status"]["acceptedNames"]["plural"], "gadgets");
        assert!(establishing(&out, "T").is_none());
    }
}
