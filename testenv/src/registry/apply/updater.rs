//! Field ownership through updates and applies (structured-merge-diff's `merge/update.go`).
//!
//! An **update** (create, PUT, non-apply PATCH) gives its manager every field it added or
//! changed, and takes removed fields and changed ones from everybody else, without asking.
//! An **apply** merges the configuration into the live object, makes the manager own exactly
//! the configuration's fields, removes the fields it applied before and applies no more
//! (unless someone else owns them too), and fails with [`Conflict`]s where it would change a
//! field another manager owns, unless forced, in which case those managers lose the fields.
//!
//! All versions of a kind share one schema here (custom resources convert with strategy
//! None, and built-in kinds are served in one version each), so where upstream converts an
//! object to each manager's version the objects are used as they are; a manager recorded at
//! a version of another API group cannot be converted to, and is dropped as upstream drops it.

use serde_json::Value;

use super::conflict::Conflict;
use super::managed_fields::{Managers, VersionedSet};
use super::schema::TypedSchema;
use super::set::Set;
use super::typed::{self, Comparison, TypeErrors};
use super::value::equals;

/// Why an update or apply failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// The apply would change fields other managers own.
    #[error("{} conflict(s)", .0.len())]
    Conflicts(Vec<Conflict>),
    /// An object does not fit the schema (upstream answers 500 for these).
    #[error("{0}")]
    Internal(String),
}

fn internal(what: &str) -> impl Fn(TypeErrors) -> UpdateError + '_ {
    move |e| UpdateError::Internal(format!("{what}: {e}"))
}

/// Field ownership for one kind.
#[derive(Debug)]
pub struct Updater<'a> {
    /// The kind's types.
    pub schema: &'a TypedSchema,
    /// Fields nobody owns through this endpoint (the strategy resets them: `status` on the
    /// main resource, everything but `status` on the status subresource).
    pub ignored: Option<&'a Set>,
    /// The API group of the kind: managers recorded at a version of another group cannot be
    /// converted to (`None`: every version is the kind's).
    pub group: Option<&'a str>,
    /// Whether such a manager fails the write (a custom resource's converter refuses the
    /// version) rather than being dropped (a built-in kind's version is not registered, which
    /// upstream treats as a version gone).
    pub strict_versions: bool,
}

impl Updater<'_> {
    fn filter(&self, set: Set) -> Set {
        match self.ignored {
            Some(i) => set.recursive_difference(i),
            None => set,
        }
    }

    /// Managers after `old` became `new` through `workflow`: fields taken from the others,
    /// or the conflicts when not forced.
    fn track(
        &self,
        old: &Value,
        new: &Value,
        managers: &mut Managers,
        workflow: &str,
        force: bool,
    ) -> Result<Comparison, UpdateError> {
        let mut cmp =
            typed::compare(self.schema, old, new).map_err(internal("failed to compare objects"))?;
        if let Some(i) = self.ignored {
            cmp = cmp.exclude(i);
        }
        let changed = cmp.modified.union(&cmp.added);
        let mut conflicts: Vec<(String, Set)> = Vec::new();
        for (manager, vs) in managers.iter() {
            if manager == workflow {
                continue;
            }
            let c = vs.set.intersection(&changed);
            if !c.is_empty() {
                conflicts.push((manager.clone(), c));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(UpdateError::Conflicts(
                conflicts
                    .into_iter()
                    .flat_map(|(manager, set)| {
                        set.paths().into_iter().map(move |path| Conflict {
                            manager: manager.clone(),
                            path,
                        })
                    })
                    .collect(),
            ));
        }
        for (manager, c) in &conflicts {
            if let Some(vs) = managers.get_mut(manager) {
                vs.set = vs.set.difference(c);
            }
        }
        if !cmp.removed.is_empty() {
            for (manager, vs) in managers.iter_mut() {
                if manager != workflow {
                    vs.set = vs.set.difference(&cmp.removed);
                }
            }
        }
        managers.retain(|_, vs| !vs.set.is_empty());
        Ok(cmp)
    }

    /// Ownership where a schema change made owned parts atomic; managers of versions the kind
    /// has not are dropped.
    fn reconcile(&self, managers: &mut Managers) -> Result<(), UpdateError> {
        if let Some(g) = self.group {
            let group_of = |av: &str| av.split_once('/').map_or("", |(g, _)| g).to_string();
            if self.strict_versions
                && let Some(vs) = managers.values().find(|vs| group_of(&vs.api_version) != g)
            {
                return Err(UpdateError::Internal(format!(
                    "request to convert CR to an invalid group/version: {}",
                    vs.api_version
                )));
            }
            managers.retain(|_, vs| group_of(&vs.api_version) == g);
        }
        for vs in managers.values_mut() {
            if let Some(r) = typed::reconcile(&vs.set, self.schema) {
                vs.set = r;
            }
        }
        Ok(())
    }

    /// The managers after `manager` changed `live` into `new` with an update.
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        version: &str,
        mut managers: Managers,
        manager: &str,
    ) -> Result<Managers, UpdateError> {
        self.reconcile(&mut managers)?;
        let cmp = self.track(live, new, &mut managers, manager, true)?;
        let previous = managers
            .remove(manager)
            .map(|vs| vs.set)
            .unwrap_or_default();
        let set = self.filter(
            previous
                .difference(&cmp.removed)
                .union(&cmp.modified)
                .union(&cmp.added),
        );
        if !set.is_empty() {
            managers.insert(
                manager.to_string(),
                VersionedSet {
                    set,
                    api_version: version.to_string(),
                    applied: false,
                },
            );
        }
        Ok(managers)
    }

    /// `config` applied to `live` by `manager`: the new object (`None` when it equals
    /// `live`) and the managers.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        version: &str,
        mut managers: Managers,
        manager: &str,
        force: bool,
    ) -> Result<(Option<Value>, Managers), UpdateError> {
        self.reconcile(&mut managers)?;
        let merged =
            typed::merge(self.schema, live, config).map_err(internal("failed to merge config"))?;
        let last = managers.get(manager).map(|vs| vs.set.clone());
        let set =
            typed::to_set(self.schema, config).map_err(internal("failed to get field set"))?;
        managers.insert(
            manager.to_string(),
            VersionedSet {
                set: self.filter(set),
                api_version: version.to_string(),
                applied: true,
            },
        );
        let new = match last {
            Some(last) if !last.is_empty() => self
                .prune(&merged, &managers, &last)
                .map_err(internal("failed to prune fields"))?,
            _ => merged,
        };
        self.track(live, &new, &mut managers, manager, force)?;
        let new = (!equals(live, &new)).then_some(new);
        Ok((new, managers))
    }

    /// Remove what the manager applied last time and no longer does, unless someone owns it.
    fn prune(&self, merged: &Value, managers: &Managers, last: &Set) -> Result<Value, TypeErrors> {
        let named =
            |s: &Set| typed::to_set::ensure_named_fields(s, self.schema, Some(self.schema.root()));
        let pruned = typed::remove(self.schema, merged, &named(last));
        // add back what anybody owns
        let owned = managers
            .values()
            .fold(Set::new(), |acc, vs| acc.union(&vs.set));
        let merged_set = named(&typed::to_set(self.schema, merged)?);
        let pruned_set = named(&typed::to_set(self.schema, &pruned)?);
        let pruned = typed::remove(
            self.schema,
            merged,
            &merged_set.difference(&pruned_set.union(&named(&owned))),
        );
        // remove only what was applied last time and is gone now
        let pruned_set = named(&typed::to_set(self.schema, &pruned)?);
        Ok(typed::remove(
            self.schema,
            merged,
            &merged_set
                .difference(&pruned_set)
                .intersection(&named(last)),
        ))
    }
}
