//! A manager's command line: its name and description, the manager's flags ([`Options`]), the
//! flags its controllers bring (shown after the generic and feature-gate flags, before leader
//! election, as kube-controller-manager shows its controllers' flags among its own), and the
//! binary's own flags; parsed with pflag's conventions after kube-controller-manager's flags
//! the binary does not have are taken out ([`crate::options::foreign`]).

use std::ffi::OsString;

use clap::{Arg, ArgGroup, Args, Command, FromArgMatches};

use crate::flags::FlagGroup;
use crate::options::{Options, pflag};
use crate::registry::Registry;

/// Where the controllers' flags go in `--help`: before this section.
const CONTROLLER_FLAGS_BEFORE: &str = "Leader-election flags";

/// What names and describes a binary's command line.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// The program name.
    pub(crate) name: &'static str,
    /// `-h`'s description.
    pub(crate) about: Option<&'static str>,
    /// `--help`'s description (`about` when `None`).
    pub(crate) long_about: Option<&'static str>,
    /// Other defaults for the manager's flags: (long name, value).
    pub(crate) defaults: Vec<(&'static str, &'static str)>,
}

/// Parsed flags, and the flags given that the binary accepts but ignores.
#[derive(Debug, Clone)]
pub struct ParsedArgs {
    /// The flags (the controllers' among them: [`Options::flags`]).
    pub options: Options,
    /// Names (without dashes) of given flags that have no effect in this binary, each once:
    /// kube-controller-manager's that belong to controllers or features it does not have.
    pub ignored: Vec<String>,
}

/// No flags: what [`crate::Manager::parse_args`] parses beside the manager's for a binary
/// without flags of its own.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct NoFlags {}

/// The command of `program` with `registry`'s controllers.
///
/// # Panics
///
/// When a default of `program` names no flag, as clap does for a misspelt argument.
pub(crate) fn command(program: &Program, registry: &Registry) -> Command {
    let name = program.name;
    let manager = Options::augment_args(Command::new("options"));
    let mut controllers = Command::new("controllers");
    for group in registry.flag_groups() {
        controllers = group.augment(controllers);
    }
    let mut args: Vec<Arg> = manager.get_arguments().cloned().collect();
    let at = args
        .iter()
        .position(|a| a.get_help_heading() == Some(CONTROLLER_FLAGS_BEFORE))
        .unwrap_or(args.len());
    let after = args.split_off(at);
    args.extend(controllers.get_arguments().cloned());
    args.extend(after);
    // Described for this binary here, not with `Command::mut_arg`, which moves an argument to
    // the end of `--help`.
    let args = args.into_iter().map(|arg| {
        let arg = match arg.get_id().as_str() {
            "controllers" => arg.help(registry.help()),
            "feature_gates" => {
                arg.help(crate::feature_gates::help(name, &registry.feature_gates()))
            }
            "leader_elect_resource_name" => arg.default_value(name).help(format!(
                "The name of resource object that is used for locking during leader election. \
                 {name}'s own Lease by default, never kube-controller-manager's: the two run side \
                 by side"
            )),
            _ => arg,
        };
        match program
            .defaults
            .iter()
            .find(|(flag, _)| arg.get_long() == Some(flag))
        {
            Some((_, value)) => arg.default_value(*value),
            None => arg,
        }
    });
    let args: Vec<Arg> = args.collect();
    for (flag, _) in &program.defaults {
        if !args.iter().any(|a| a.get_long() == Some(flag)) {
            panic!("Manager::flag_default: no flag --{flag}");
        }
    }
    let groups: Vec<ArgGroup> = manager
        .get_groups()
        .chain(controllers.get_groups())
        .cloned()
        .collect();
    Command::new(name)
        .bin_name(name)
        .version(env!("CARGO_PKG_VERSION"))
        // pflag: a flag given twice takes its last value (list flags append).
        .args_override_self(true)
        .about(
            program
                .about
                .unwrap_or("A controller-manager built on kcm-manager."),
        )
        .long_about(program.long_about)
        .args(args)
        .groups(groups)
}

/// Parses `argv` (program name first) with `command`, the controllers' flag `groups` (those
/// `command` was built with) and the binary's own flags `A`: kube-controller-manager's flags
/// that `command` lacks are removed first and reported in [`ParsedArgs::ignored`], as are
/// given flags that have no effect.
pub(crate) fn parse<A, I, T>(
    command: Command,
    groups: &[FlagGroup],
    argv: I,
) -> Result<(ParsedArgs, A), clap::Error>
where
    A: clap::Args,
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    // `A`'s doc comment would replace the binary's description: keep the binary's.
    let (about, long_about) = (
        command.get_about().cloned(),
        command.get_long_about().cloned(),
    );
    let mut command = A::augment_args(command).about(None).long_about(None);
    if let Some(about) = about {
        command = command.about(about);
    }
    if let Some(long_about) = long_about {
        command = command.long_about(long_about);
    }
    let ours = |name: &str| {
        command
            .get_arguments()
            .find(|a| a.get_long() == Some(name))
            .map(|a| a.get_action().takes_values() && !a.is_require_equals_set())
    };
    let (kept, mut ignored) = pflag::strip_foreign(argv.into_iter().map(Into::into), ours)
        .map_err(|e| {
            command
                .clone()
                .error(clap::error::ErrorKind::InvalidValue, e)
        })?;
    let matches = command.try_get_matches_from(kept)?;
    let mut options = Options::from_arg_matches(&matches)?;
    for group in groups {
        options.controller_flags_mut().push(group.parse(&matches)?);
    }
    let extra = A::from_arg_matches(&matches)?;
    if options
        .kube_api_content_type
        .as_deref()
        .is_some_and(|t| t != "application/json")
    {
        ignored.push("kube-api-content-type".into());
    }
    Ok((ParsedArgs { options, ignored }, extra))
}
