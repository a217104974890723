//! Walking a value together with its schema: [`visit_mut`] calls a function at every value with
//! its [`Node`] and [`Path`], parents before children (the order upstream's generated
//! defaulters run in: a type's own function, then its fields').

use std::fmt;

use serde_json::Value;

use super::node::{Node, Shape};

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A struct field.
    Field(String),
    /// A list index.
    Index(usize),
    /// A map key.
    Key(String),
}

/// A field path printed as upstream's `field.Path` does (`spec.containers[0].ports[1]`,
/// `metadata.labels[app]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

impl Path {
    /// The empty (root) path.
    pub fn root() -> Path {
        Path(Vec::new())
    }

    /// This path and one more field.
    pub fn child(&self, name: &str) -> Path {
        let mut p = self.clone();
        p.0.push(Step::Field(name.to_string()));
        p
    }

    /// This path and one more list index.
    pub fn index(&self, i: usize) -> Path {
        let mut p = self.clone();
        p.0.push(Step::Index(i));
        p
    }

    /// This path and one more map key.
    pub fn key(&self, k: &str) -> Path {
        let mut p = self.clone();
        p.0.push(Step::Key(k.to_string()));
        p
    }

    /// The field names only, joined by dots (`spec.template.spec.containers.ports`): how Go's
    /// JSON decoder names a field in its errors.
    pub fn json_fields(&self) -> String {
        let names: Vec<&str> = self
            .0
            .iter()
            .filter_map(|s| match s {
                Step::Field(f) => Some(f.as_str()),
                _ => None,
            })
            .collect();
        names.join(".")
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Step::Field(n) if i == 0 => write!(f, "{n}")?,
                Step::Field(n) => write!(f, ".{n}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
                Step::Key(k) => write!(f, "[{k}]")?,
            }
        }
        Ok(())
    }
}

/// Call `f` on `value` and then on every value below it that the schema describes (struct
/// properties, list items, map values), each with its node and path. `f` may change a value
/// before its children are visited (a default it adds is visited too).
pub fn visit_mut<'a>(
    node: Node<'a>,
    value: &mut Value,
    path: &Path,
    f: &mut dyn FnMut(Node<'a>, &mut Value, &Path),
) {
    f(node, value, path);
    match (node.shape(), value) {
        (Shape::Struct, Value::Object(o)) => {
            for (k, v) in o.iter_mut() {
                if let Some(child) = node.property(k) {
                    visit_mut(child, v, &path.child(k), f);
                }
            }
        }
        (Shape::Map, Value::Object(o)) => {
            if let Some(values) = node.values() {
                for (k, v) in o.iter_mut() {
                    visit_mut(values, v, &path.key(k), f);
                }
            }
        }
        (Shape::List, Value::Array(a)) => {
            if let Some(items) = node.items() {
                for (i, v) in a.iter_mut().enumerate() {
                    visit_mut(items, v, &path.index(i), f);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::schema::catalog;

    #[test]
    fn paths_print_as_upstream() {
        let p = Path::root()
            .child("spec")
            .child("containers")
            .index(0)
            .child("env")
            .index(2);
        assert_eq!(p.to_string(), "spec.containers[0].env[2]");
        assert_eq!(p.json_fields(), "spec.containers.env");
        assert_eq!(
            Path::root()
                .child("metadata")
                .child("labels")
                .key("app")
                .to_string(),
            "metadata.labels[app]"
        );
    }

    #[test]
    fn visits_every_typed_value_parents_first() {
        let c = catalog();
        let pod = c.kind("", "v1", "Pod").expect("Pod");
        let mut v = json!({
            "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]},
        });
        let mut seen = Vec::new();
        visit_mut(pod, &mut v, &Path::root(), &mut |n, _, p| {
            seen.push(format!("{p}:{}", n.type_name().unwrap_or("-")));
        });
        assert_eq!(
            seen,
            [
                ":Pod",
                "metadata:ObjectMeta",
                "metadata.labels:-",
                "metadata.labels[a]:-",
                "metadata.name:-",
                "spec:PodSpec",
                "spec.containers:-",
                "spec.containers[0]:Container",
                "spec.containers[0].name:-",
                "spec.containers[0].ports:-",
                "spec.containers[0].ports[0]:ContainerPort",
                "spec.containers[0].ports[0].containerPort:-",
            ]
        );
    }
}
