//! Label selectors (apimachinery `k8s.io/apimachinery/pkg/labels`): parsing the string syntax,
//! building from label sets (and, with feature `k8s`, from `metav1.LabelSelector`), matching,
//! and the canonical string form.

mod error;
mod labels;
mod lexer;
mod parser;
mod requirement;
pub mod validation;

use std::collections::BTreeMap;
use std::fmt;

pub use error::{FieldError, SelectorError};
pub use labels::Labels;
pub use requirement::{Operator, Requirement};

/// A label selector: a conjunction of [`Requirement`]s, or "nothing".
///
/// ```
/// use std::collections::BTreeMap;
/// use kcm_store::Selector;
///
/// let sel = Selector::parse("tier in (web, db), env != prod, !canary").unwrap();
/// assert_eq!(sel.to_string(), "!canary,env!=prod,tier in (db,web)");
///
/// let labels = BTreeMap::from([
///     ("tier".to_string(), "web".to_string()),
///     ("env".to_string(), "dev".to_string()),
/// ]);
/// assert!(sel.matches(&labels));
/// assert!(Selector::everything().matches(&labels));
/// assert!(!Selector::nothing().matches(&labels));
/// assert!(Selector::parse("x in (a").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector {
    /// `None` = the "nothing" selector; `Some(reqs)` = all of `reqs` (empty = everything).
    requirements: Option<Vec<Requirement>>,
}

impl Selector {
    /// Parses the Kubernetes selector string syntax (apimachinery `labels.Parse`):
    /// `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, separated
    /// by commas (AND). The empty string selects everything.
    pub fn parse(s: &str) -> Result<Selector, SelectorError> {
        Ok(Selector {
            requirements: Some(parser::parse(s)?),
        })
    }

    /// The selector that matches every label set (`labels.Everything()`).
    pub fn everything() -> Self {
        Selector {
            requirements: Some(Vec::new()),
        }
    }

    /// The selector that matches nothing (`labels.Nothing()`).
    pub fn nothing() -> Self {
        Selector { requirements: None }
    }

    /// Builds an equality-only selector from a label set without validation, like
    /// `labels.SelectorFromSet` (an empty set selects everything).
    pub fn from_labels<I, K, V>(labels: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let reqs = labels
            .into_iter()
            .map(|(k, v)| Requirement::new_unchecked(k.into(), Operator::Equals, vec![v.into()]))
            .collect();
        Selector::from_requirements(reqs)
    }

    /// Like [`Selector::from_labels`] but validating keys and values
    /// (`labels.ValidatedSelectorFromSet`).
    pub fn try_from_labels<I, K, V>(labels: I) -> Result<Self, SelectorError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut reqs = Vec::new();
        for (k, v) in labels {
            let k: String = k.into();
            reqs.push(Requirement::new(&k, Operator::Equals, [v.into()])?);
        }
        Ok(Selector::from_requirements(reqs))
    }

    /// A selector of the given requirements (sorted by key; no requirements = everything).
    pub fn from_requirements(mut reqs: Vec<Requirement>) -> Self {
        reqs.sort_by(|a, b| a.key().cmp(b.key()));
        Selector {
            requirements: Some(reqs),
        }
    }

    /// Adds requirements (`Selector.Add`); adding to "nothing" yields "nothing", as upstream.
    pub fn add_requirements(mut self, reqs: impl IntoIterator<Item = Requirement>) -> Self {
        if let Some(r) = self.requirements.as_mut() {
            r.extend(reqs);
            r.sort_by(|a, b| a.key().cmp(b.key()));
        }
        self
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_labels(labels)
    }

    /// Like [`Selector::matches`] for labels kept in any shape ([`Labels`]).
    pub fn matches_labels<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        match &self.requirements {
            None => false,
            Some(reqs) => reqs.iter().all(|r| r.matches_labels(labels)),
        }
    }

    /// Like [`Selector::matches`] for an object's optional labels (`None` = no labels).
    pub fn matches_opt(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        self.matches(labels.unwrap_or(&EMPTY))
    }

    /// True for the selector that matches everything (no requirements) (`Empty()`).
    pub fn is_everything(&self) -> bool {
        matches!(&self.requirements, Some(r) if r.is_empty())
    }

    /// True for [`Selector::nothing`].
    pub fn is_nothing(&self) -> bool {
        self.requirements.is_none()
    }

    /// The requirements, sorted by key (empty for both everything and nothing).
    pub fn requirements(&self) -> &[Requirement] {
        self.requirements.as_deref().unwrap_or_default()
    }

    /// If the selector requires `label` to equal exactly one value, that value
    /// (`RequiresExactMatch`).
    pub fn requires_exact_match(&self, label: &str) -> Option<&str> {
        // Only the first requirement on the key is considered, as upstream.
        let r = self.requirements().iter().find(|r| r.key() == label)?;
        match (r.operator(), r.values()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => Some(v.as_str()),
            _ => None,
        }
    }
}

impl Default for Selector {
    /// The everything selector.
    fn default() -> Self {
        Selector::everything()
    }
}

impl std::str::FromStr for Selector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selector::parse(s)
    }
}

impl fmt::Display for Selector {
    /// Upstream's canonical form: requirements sorted by key joined by `,`, values sorted;
    /// everything and nothing both print as the empty string (as upstream).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}
