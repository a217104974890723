//! Kubernetes integration (feature `k8s`): a blanket [`Object`] impl for every `kube::Resource`
//! (every k8s-openapi type, and every type of kube's `#[derive(CustomResource)]`, with no
//! impl to write), and [`Selector`] construction from `metav1.LabelSelector`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::key::ObjectKey;
use crate::object::Object;
use crate::selector::{Operator, Requirement, Selector, SelectorError};

impl<T> Object for T
where
    T: kube_core::Resource + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }
    fn namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.meta().labels.as_ref()
    }
}

impl ObjectKey {
    /// The key of the object with this metadata (client-go `MetaNamespaceKeyFunc`): an absent
    /// or empty namespace makes it cluster-scoped, an absent name is empty.
    ///
    /// ```
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kcm_store::ObjectKey;
    /// let meta = ObjectMeta {
    ///     name: Some("web-1".into()),
    ///     namespace: Some("prod".into()),
    ///     ..Default::default()
    /// };
    /// assert_eq!(ObjectKey::from_meta(&meta).to_string(), "prod/web-1");
    /// let namespace = ObjectMeta {
    ///     name: Some("prod".into()),
    ///     ..Default::default()
    /// };
    /// assert_eq!(ObjectKey::from_meta(&namespace).to_string(), "prod");
    /// ```
    pub fn from_meta(meta: &ObjectMeta) -> ObjectKey {
        ObjectKey::new(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }
}

impl Selector {
    /// Converts a `metav1.LabelSelector` like apimachinery's `LabelSelectorAsSelector`:
    /// no matchLabels and no matchExpressions → [`Selector::everything`]; each matchLabels
    /// entry becomes an `=` requirement, each expression `In`/`NotIn`/`Exists`/`DoesNotExist`
    /// a requirement with the usual value-count validation; any other operator is an error.
    ///
    /// ```
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    /// use kcm_store::Selector;
    /// let ls = LabelSelector {
    ///     match_labels: Some([("app".to_string(), "web".to_string())].into()),
    ///     ..Default::default()
    /// };
    /// assert_eq!(Selector::from_label_selector(&ls).unwrap().to_string(), "app=web");
    /// ```
    pub fn from_label_selector(sel: &LabelSelector) -> Result<Selector, SelectorError> {
        let labels = sel.match_labels.as_ref();
        let exprs = sel.match_expressions.as_deref().unwrap_or_default();
        if labels.is_none_or(|l| l.is_empty()) && exprs.is_empty() {
            return Ok(Selector::everything());
        }
        let mut reqs = Vec::new();
        for (k, v) in labels.into_iter().flatten() {
            reqs.push(Requirement::new(k, Operator::Equals, [v.as_str()])?);
        }
        for e in exprs {
            let op = match e.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => return Err(SelectorError::InvalidOperator(other.to_string())),
            };
            let values = e.values.as_deref().unwrap_or_default();
            reqs.push(Requirement::new(
                &e.key,
                op,
                values.iter().map(String::as_str),
            )?);
        }
        Ok(Selector::from_requirements(reqs))
    }

    /// Like [`Selector::from_label_selector`] for an optional selector: `None` (a nil
    /// `*LabelSelector` upstream) selects nothing.
    pub fn from_optional_label_selector(
        sel: Option<&LabelSelector>,
    ) -> Result<Selector, SelectorError> {
        match sel {
            None => Ok(Selector::nothing()),
            Some(s) => Selector::from_label_selector(s),
        }
    }
}
