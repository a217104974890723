//! Flags of a binary's controllers: a `clap::Args` struct that a [`crate::Controller`] brings
//! with it ([`crate::Controller::flags`]), shown in `--help` after the manager's generic and
//! feature-gate flags (as `--concurrent-deployment-syncs` is in kube-controller-manager's),
//! checked before the process starts, and read back by the controller from
//! [`crate::Options::flags`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

/// A group of flags of a controller: a [`clap::Args`] struct (its fields' `help_heading` names
/// the section of `--help`, e.g. "Deployment controller flags"), with the checks clap cannot
/// make.
///
/// ```
/// use kcm_manager::ControllerFlags;
///
/// /// Flags of the Foo controller.
/// #[derive(Debug, Clone, clap::Args)]
/// struct FooFlags {
///     /// The number of foo objects that are allowed to sync concurrently.
///     #[arg(long, help_heading = "Foo controller flags", default_value_t = 5)]
///     concurrent_foo_syncs: u32,
/// }
///
/// impl ControllerFlags for FooFlags {
///     fn validate(&self) -> Result<(), String> {
///         if self.concurrent_foo_syncs == 0 {
///             return Err("--concurrent-foo-syncs must be greater than 0".into());
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait ControllerFlags: clap::Args + fmt::Debug + Send + Sync + 'static {
    /// Checks the parsed values once, before the process starts: an error is printed as
    /// `<binary>: <error>` and the process exits with status 2, as for the manager's own flags.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A registered flag group, its type erased: how to add it to the command and read it back.
#[derive(Clone, Copy)]
pub(crate) struct FlagGroup {
    type_id: TypeId,
    augment: fn(clap::Command) -> clap::Command,
    parse: fn(&clap::ArgMatches) -> Result<Arc<dyn FlagValue>, clap::Error>,
}

impl fmt::Debug for FlagGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlagGroup").finish_non_exhaustive()
    }
}

impl FlagGroup {
    /// The group of `F`.
    pub(crate) fn of<F: ControllerFlags>() -> Self {
        FlagGroup {
            type_id: TypeId::of::<F>(),
            augment: F::augment_args,
            parse: |matches| {
                let value = F::from_arg_matches(matches)?;
                Ok(Arc::new(value) as Arc<dyn FlagValue>)
            },
        }
    }

    /// Adds the group's flags to `command`.
    pub(crate) fn augment(&self, command: clap::Command) -> clap::Command {
        (self.augment)(command)
    }

    /// The group's values in `matches` (of a command the group augmented).
    pub(crate) fn parse(
        &self,
        matches: &clap::ArgMatches,
    ) -> Result<Arc<dyn FlagValue>, clap::Error> {
        (self.parse)(matches)
    }

    /// Whether two registrations are of one type (a group shared by controllers is added once).
    pub(crate) fn same_as(&self, other: &FlagGroup) -> bool {
        self.type_id == other.type_id
    }
}

/// A parsed flag group.
pub(crate) trait FlagValue: Any + fmt::Debug + Send + Sync {
    /// [`ControllerFlags::validate`].
    fn validate(&self) -> Result<(), String>;
    /// For downcasting.
    fn as_any(&self) -> &dyn Any;
}

impl<F: ControllerFlags> FlagValue for F {
    fn validate(&self) -> Result<(), String> {
        ControllerFlags::validate(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The parsed flag groups of the registered controllers.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlagValues(Vec<Arc<dyn FlagValue>>);

impl FlagValues {
    /// Adds a parsed group.
    pub(crate) fn push(&mut self, value: Arc<dyn FlagValue>) {
        self.0.push(value);
    }

    /// The values of `F`, if a registered controller brought that group.
    pub(crate) fn get<F: ControllerFlags>(&self) -> Option<&F> {
        self.0.iter().find_map(|v| v.as_any().downcast_ref::<F>())
    }

    /// Every group's [`ControllerFlags::validate`], first error first.
    pub(crate) fn validate(&self) -> Result<(), String> {
        self.0.iter().try_for_each(|v| v.validate())
    }
}
