//! The field manager kube-apiserver runs on every write (apimachinery's
//! `util/managedfields/internal/fieldmanager.go` and the managers it chains: version check,
//! last-applied annotation, `before-first-apply`, the cap on update managers, manager
//! identifiers, times, metadata stripping, then the structured merge).
//!
//! [`FieldManager::update`] tracks a create, update or non-apply patch: the request's manager
//! owns what it changed. [`FieldManager::apply`] runs a server-side apply. Both take the
//! stored object as `live` (`{}` for a create) and `now` as an RFC 3339 time, and return the
//! object with `metadata.managedFields` set; nothing here touches storage.

use serde_json::{Map, Value};

use super::conflict::{Conflict, conflict_error};
use super::last_applied;
use super::managed_fields::{self, Managed, ManagerId};
use super::path::Path;
use super::schema::TypedSchema;
use super::set::Set;
use super::typed;
use super::updater::{UpdateError, Updater};
use crate::registry::api_status::ApiError;
use crate::registry::meta;

/// At most this many Update managers are kept; older ones merge into `ancient-changes`.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// Why an apply failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Fields other managers own would change (409).
    #[error("{} conflict(s)", .0.len())]
    Conflicts(Vec<Conflict>),
    /// The request is wrong (400).
    #[error("{0}")]
    BadRequest(String),
    /// An object does not fit the schema, or managedFields cannot be read (500, a plain
    /// error upstream: no reason).
    #[error("{0}")]
    Internal(String),
}

impl ApplyError {
    /// The Status kube-apiserver answers.
    pub fn to_api_error(&self) -> ApiError {
        match self {
            ApplyError::Conflicts(c) => conflict_error(c),
            ApplyError::BadRequest(m) => ApiError::bad_request(m.clone()),
            ApplyError::Internal(m) => ApiError::plain(m.clone()),
        }
    }
}

impl From<UpdateError> for ApplyError {
    fn from(e: UpdateError) -> Self {
        match e {
            UpdateError::Conflicts(c) => ApplyError::Conflicts(c),
            UpdateError::Internal(m) => ApplyError::Internal(m),
        }
    }
}

/// The field manager of one endpoint (a kind's resource or one of its subresources).
#[derive(Debug)]
pub struct FieldManager<'a> {
    /// The kind's types.
    pub schema: &'a TypedSchema,
    /// The endpoint's group/version (`apps/v1`, `v1`).
    pub api_version: &'a str,
    /// The kind (`Deployment`).
    pub kind: &'a str,
    /// The subresource (`status`), `""` for the resource itself.
    pub subresource: &'a str,
    /// Fields the endpoint's strategy resets, which nobody owns through it.
    pub reset: Option<&'a Set>,
    /// A custom resource's: a manager at a version of another group fails the tracking of a
    /// write (the stored managers are kept) where a built-in kind drops the manager.
    pub strict_versions: bool,
}

/// The fields nobody owns: type and object metadata the server sets.
fn strip_set() -> Set {
    let mut paths = vec![
        Path::fields(&["apiVersion"]),
        Path::fields(&["kind"]),
        Path::fields(&["metadata"]),
    ];
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        paths.push(Path::fields(&["metadata", f]));
    }
    Set::from_paths(&paths)
}

fn managed_fields_of(obj: &Value) -> Option<&Value> {
    meta::at(obj, &["metadata", "managedFields"])
}

fn set_managed_fields(obj: &mut Value, entries: Option<Value>) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(m) = m.as_object_mut() {
        match entries {
            Some(e) => {
                m.insert("managedFields".into(), e);
            }
            None => {
                m.remove("managedFields");
            }
        }
    }
}

fn has_uid(obj: &Value) -> bool {
    !meta::uid_of(obj).is_empty()
}

impl FieldManager<'_> {
    fn updater(&self) -> Updater<'_> {
        Updater {
            schema: self.schema,
            ignored: self.reset,
            group: Some(self.api_version.split_once('/').map_or("", |(g, _)| g)),
            strict_versions: self.strict_versions,
        }
    }

    fn identifier(&self, manager: &str, operation: &str) -> String {
        ManagerId {
            manager: if manager.is_empty() {
                "unknown".into()
            } else {
                manager.into()
            },
            operation: operation.into(),
            api_version: if operation == "Update" {
                self.api_version.into()
            } else {
                String::new()
            },
            subresource: self.subresource.into(),
        }
        .identifier()
    }

    /// Track a create, update or non-apply patch of `live` into `new` by `manager`. The
    /// managers come from `new` when the client sent valid ones (an empty list clears them),
    /// else from `live`; on any error `new` keeps `live`'s managedFields, as upstream's
    /// `UpdateNoErrors` does.
    pub fn update(&self, live: &Value, mut new: Value, manager: &str, now: &str) -> Value {
        let from_live = || managed_fields::decode(managed_fields_of(live)).unwrap_or_default();
        let managed = if !self.subresource.is_empty() {
            from_live()
        } else if managed_fields::is_reset(managed_fields_of(&new)) {
            Managed::default()
        } else {
            match managed_fields::decode(managed_fields_of(&new)) {
                Ok(m) if !m.fields.is_empty() => m,
                _ => from_live(),
            }
        };
        set_managed_fields(&mut new, None);
        match self.track_update(live, &new, managed, manager, now) {
            Ok(managed) => set_managed_fields(&mut new, managed_fields::encode(&managed)),
            Err(e) => {
                tracing::error!(error = %e, kind = self.kind, name = meta::name_of(&new),
                    "failed to update managedFields (kept the stored object's)");
                set_managed_fields(&mut new, managed_fields_of(live).cloned());
            }
        }
        new
    }

    /// The managers after an update. An object that exists and has no managers (created
    /// before tracking, or its managers cleared) stays untracked.
    fn track_update(
        &self,
        live: &Value,
        new: &Value,
        managed: Managed,
        manager: &str,
        now: &str,
    ) -> Result<Managed, UpdateError> {
        if managed.fields.is_empty() && has_uid(live) {
            return Ok(managed);
        }
        let mut managed = self.update_managers(live, new, managed, manager, now)?;
        cap_update_managers(&mut managed, MAX_UPDATE_MANAGERS);
        Ok(managed)
    }

    /// The update through identifiers, times, metadata stripping and the structured merge.
    fn update_managers(
        &self,
        live: &Value,
        new: &Value,
        mut managed: Managed,
        manager: &str,
        now: &str,
    ) -> Result<Managed, UpdateError> {
        for (what, obj) in [("new", new), ("live", live)] {
            typed::validate(self.schema, obj, true).map_err(|e| {
                UpdateError::Internal(format!("failed to convert {what} object to smd typed: {e}"))
            })?;
        }
        let id = self.identifier(manager, "Update");
        let current = "current-operation";
        let mut fields =
            self.updater()
                .update(live, new, self.api_version, managed.fields, current)?;
        if let Some(mut vs) = fields.remove(current) {
            vs.set = vs.set.difference(&strip_set());
            if !vs.set.is_empty() {
                if let Some(previous) = fields.get(&id) {
                    vs.set = vs.set.union(&previous.set);
                }
                fields.insert(id.clone(), vs);
                managed.times.insert(id, Some(now.to_string()));
            }
        }
        managed.fields = fields;
        managed.times.retain(|k, _| managed.fields.contains_key(k));
        Ok(managed)
    }

    /// Apply `config` to `live` as `manager`: the new object with its managedFields (the
    /// stored object with updated managedFields when nothing else changes).
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, ApplyError> {
        let managed = managed_fields::decode(managed_fields_of(live))
            .map_err(|e| ApplyError::Internal(format!("failed to decode managed fields: {e}")))?;
        let (group, version) = split_api_version(config["apiVersion"].as_str().unwrap_or(""));
        let (want_group, want_version) = split_api_version(self.api_version);
        let kind = config["kind"].as_str().unwrap_or("");
        if (group, version, kind) != (want_group, want_version, self.kind) {
            return Err(ApplyError::BadRequest(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
        let result = self.apply_managers(live, config, managed.clone(), manager, force, now);
        let (mut obj, managed) = match result {
            Err(ApplyError::Conflicts(c)) if manager == "kubectl" => {
                match last_applied::allowed_conflicts(self.schema, live, self.api_version) {
                    Some(allowed) => {
                        let left: Vec<Conflict> =
                            c.into_iter().filter(|c| !allowed.has(&c.path.0)).collect();
                        if !left.is_empty() {
                            return Err(ApplyError::Conflicts(left));
                        }
                        self.apply_managers(live, config, managed, manager, true, now)?
                    }
                    None => return Err(ApplyError::Conflicts(c)),
                }
            }
            other => other?,
        };
        if manager == "kubectl" {
            last_applied::update_annotation(&mut obj, config);
        }
        set_managed_fields(&mut obj, managed_fields::encode(&managed));
        Ok(obj)
    }

    /// The apply through `before-first-apply`, identifiers, times, stripping and the merge.
    fn apply_managers(
        &self,
        live: &Value,
        config: &Value,
        mut managed: Managed,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<(Value, Managed), ApplyError> {
        let live = live.clone();
        if managed.fields.is_empty() {
            // whoever wrote the object before the first apply owns what is there
            let empty = Value::Object(Map::new());
            managed = self.update_managers(&empty, &live, managed, "before-first-apply", now)?;
            cap_update_managers(&mut managed, MAX_UPDATE_MANAGERS);
        }
        if meta::at(config, &["metadata", "managedFields"]).is_some_and(|v| !v.is_null()) {
            return Err(ApplyError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        // Go prints a core GroupVersionKind with an empty group: `/v1, Kind=ConfigMap`
        let group_version = match self.api_version.contains('/') {
            true => self.api_version.to_string(),
            false => format!("/{}", self.api_version),
        };
        let gvknn = || {
            format!(
                "{}/{}; {group_version}, Kind={}",
                meta::namespace_of(config),
                meta::name_of(config),
                self.kind
            )
        };
        typed::validate(self.schema, config, false).map_err(|e| {
            ApplyError::Internal(format!(
                "failed to create typed patch object ({}): {e}",
                gvknn()
            ))
        })?;
        typed::validate(self.schema, &live, true).map_err(|e| {
            ApplyError::Internal(format!(
                "failed to create typed live object ({}): {e}",
                gvknn()
            ))
        })?;
        let id = self.identifier(manager, "Apply");
        let (new, mut fields) =
            self.updater()
                .apply(&live, config, self.api_version, managed.fields, &id, force)?;
        if let Some(vs) = fields.get_mut(&id) {
            vs.set = vs.set.difference(&strip_set());
            if vs.set.is_empty() {
                fields.remove(&id);
            }
        }
        let obj = match new {
            Some(obj) => {
                managed.times.insert(id, Some(now.to_string()));
                obj
            }
            None => live,
        };
        managed.fields = fields;
        managed.times.retain(|k, _| managed.fields.contains_key(k));
        Ok((obj, managed))
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
fn split_api_version(av: &str) -> (&str, &str) {
    av.split_once('/').unwrap_or(("", av))
}

/// Merge the oldest Update managers beyond `max` into one `ancient-changes` manager per API
/// version (upstream's `capmanagers.go`).
pub fn cap_update_managers(managed: &mut Managed, max: usize) {
    let seconds = |id: &str| -> i64 {
        managed
            .times
            .get(id)
            .and_then(|t| t.as_deref())
            .and_then(meta::parse_time)
            .map(|t| t.as_second())
            .unwrap_or(0)
    };
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, vs)| !vs.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= max {
        return;
    }
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_by_version: std::collections::BTreeMap<String, String> = Default::default();
    let mut length = updaters.len();
    for id in updaters {
        if length <= max {
            break;
        }
        let Some(vs) = managed.fields.get(&id).cloned() else {
            continue;
        };
        let time = managed.times.get(&id).cloned().flatten();
        let bucket = ManagerId {
            manager: "ancient-changes".into(),
            operation: "Update".into(),
            api_version: vs.api_version.clone(),
            subresource: String::new(),
        }
        .identifier();
        match first_by_version.get(&vs.api_version) {
            Some(first) => {
                if !managed.fields.contains_key(&bucket)
                    && let Some(s) = managed.fields.remove(first)
                {
                    managed.times.remove(first);
                    managed.fields.insert(bucket.clone(), s);
                }
                let merged = managed
                    .fields
                    .get(&bucket)
                    .map(|b| vs.set.union(&b.set))
                    .unwrap_or_else(|| vs.set.clone());
                managed.fields.insert(
                    bucket.clone(),
                    super::managed_fields::VersionedSet {
                        set: merged,
                        api_version: vs.api_version.clone(),
                        applied: vs.applied,
                    },
                );
                managed.fields.remove(&id);
                managed.times.remove(&id);
                length -= 1;
                managed.times.insert(bucket, time);
            }
            None => {
                first_by_version.insert(vs.api_version.clone(), id);
            }
        }
    }
}
