//! The controllers a manager can run and what `--controllers` selects among them, with
//! kube-controller-manager's rules (`IsControllerEnabled` in
//! `staging/src/k8s.io/controller-manager/app/helper.go`): an entry naming a controller (or an alias) enables it, `-name`
//! disables it, the first entry naming it wins, and otherwise `*` enables it (every registered
//! controller is on by default). Names of kube-controller-manager's other controllers are
//! accepted and run nothing (kubeadm's `--controllers=*,bootstrapsigner,tokencleaner`).

use crate::controller::Controller;
use crate::feature_gates::{self, FeatureGate, RELEASE_LEADER_ELECTION_LOCK_ON_EXIT};
use crate::flags::FlagGroup;
use crate::options::foreign::UPSTREAM_CONTROLLERS;
use crate::options::validate::OptionsError;

/// The registered controllers, in registration order.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    controllers: Vec<Controller>,
}

impl Registry {
    /// Registers a controller.
    pub(crate) fn push(&mut self, controller: Controller) {
        self.controllers.push(controller);
    }

    /// The canonical names, in registration order.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.controllers.iter().map(Controller::name).collect()
    }

    /// The flag groups of every controller, each once.
    pub(crate) fn flag_groups(&self) -> Vec<FlagGroup> {
        let mut groups: Vec<FlagGroup> = Vec::new();
        for group in self.controllers.iter().flat_map(|c| c.flag_groups()) {
            if !groups.iter().any(|g| g.same_as(group)) {
                groups.push(*group);
            }
        }
        groups
    }

    /// The gates the controllers declare, then the manager's own, each once.
    pub(crate) fn feature_gates(&self) -> Vec<FeatureGate> {
        let declared = self.controllers.iter().flat_map(|c| c.declared_gates());
        feature_gates::distinct(
            declared
                .copied()
                .chain([RELEASE_LEADER_ELECTION_LOCK_ON_EXIT]),
        )
    }

    /// `--controllers`' help: the registered controllers and their aliases.
    pub(crate) fn help(&self) -> String {
        let mut help = "A list of controllers to enable. '*' enables all on-by-default \
            controllers, 'foo' enables the controller named 'foo', '-foo' disables the \
            controller named 'foo'."
            .to_string();
        if !self.controllers.is_empty() {
            help.push_str(&format!(" All controllers: {}", self.names().join(", ")));
            let aliases: Vec<&str> = self
                .controllers
                .iter()
                .flat_map(|c| c.aliases().iter().copied())
                .collect();
            if !aliases.is_empty() {
                help.push_str(&format!(" (aliases: {})", aliases.join(", ")));
            }
        }
        help
    }

    /// Checks that every `--controllers` entry names a registered controller, an alias, or one
    /// of kube-controller-manager's.
    pub(crate) fn check(&self, entries: &[String]) -> Result<(), OptionsError> {
        for entry in entries {
            let name = entry.strip_prefix('-').unwrap_or(entry);
            let known = name.is_empty()
                || name == "*"
                || self.controllers.iter().any(|c| answers_to(c, name))
                || UPSTREAM_CONTROLLERS.contains(&name);
            if !known {
                return Err(OptionsError::UnknownController(name.to_string()));
            }
        }
        Ok(())
    }

    /// The names of the controllers `--controllers` enables, in registration order.
    pub(crate) fn enabled_names(&self, entries: &[String]) -> Vec<&'static str> {
        self.controllers
            .iter()
            .filter(|c| enabled(entries, c))
            .map(Controller::name)
            .collect()
    }

    /// The controllers `--controllers` enables, in registration order.
    pub(crate) fn into_enabled(self, entries: &[String]) -> Vec<Controller> {
        self.controllers
            .into_iter()
            .filter(|c| enabled(entries, c))
            .collect()
    }
}

/// Whether `name` is the controller's name or one of its aliases.
fn answers_to(controller: &Controller, name: &str) -> bool {
    controller.name() == name || controller.aliases().contains(&name)
}

/// Whether the `--controllers` entries enable `controller`.
fn enabled(entries: &[String], controller: &Controller) -> bool {
    let mut star = false;
    for entry in entries {
        if entry == "*" {
            star = true;
            continue;
        }
        let (negated, name) = match entry.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, entry.as_str()),
        };
        if answers_to(controller, name) {
            return !negated;
        }
    }
    star
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(name: &'static str, alias: Option<&'static str>) -> Controller {
        let controller = Controller::new(name, |_| {
            Ok(
                |cancel: tokio_util::sync::CancellationToken| async move { cancel.cancelled().await },
            )
        });
        match alias {
            Some(alias) => controller.alias(alias),
            None => controller,
        }
    }

    fn registry() -> Registry {
        let mut registry = Registry::default();
        registry.push(idle("deployment-controller", Some("deployment")));
        registry.push(idle("replicaset-controller", Some("replicaset")));
        registry.push(idle("foo-controller", None));
        registry
    }

    fn entries(flag: &str) -> Vec<String> {
        flag.split(',').map(str::to_string).collect()
    }

    #[test]
    fn controllers_flag_follows_upstream_rules() {
        // (--controllers, deployment, replicaset, foo enabled)
        let cases: &[(&str, [bool; 3])] = &[
            ("*", [true, true, true]),
            ("*,-deployment", [false, true, true]),
            ("-replicaset-controller,*", [true, false, true]),
            ("deployment", [true, false, false]),
            ("replicaset-controller", [false, true, false]),
            ("-deployment,deployment,*", [false, true, true]),
            ("", [false, false, false]),
            ("*,-garbagecollector,tokencleaner", [true, true, true]),
            ("*,-foo-controller", [true, true, false]),
            ("foo-controller,-deployment", [false, false, true]),
            ("-foo-controller,foo-controller,*", [true, true, false]),
        ];
        for (flag, want) in cases {
            let entries = entries(flag);
            assert_eq!(registry().check(&entries), Ok(()), "{flag}");
            let on = registry().into_enabled(&entries);
            let got: Vec<bool> = [
                "deployment-controller",
                "replicaset-controller",
                "foo-controller",
            ]
            .iter()
            .map(|n| on.iter().any(|c| c.name() == *n))
            .collect();
            assert_eq!(got, want, "{flag}");
        }
    }

    #[test]
    fn only_registered_and_upstream_names_are_known() {
        let cases: &[(&str, Option<&str>)] = &[
            ("*,-bogus", Some("bogus")),
            ("*,bar-controller", Some("bar-controller")),
            ("*,bootstrapsigner,tokencleaner", None),
            // kube-controller-manager's Deployment controller is known to a binary without it.
            ("*,-deployment", None),
        ];
        let mut foo_only = Registry::default();
        foo_only.push(idle("foo-controller", None));
        for (flag, unknown) in cases {
            let want = unknown.map(|n| OptionsError::UnknownController(n.to_string()));
            assert_eq!(foo_only.check(&entries(flag)).err(), want, "{flag}");
        }
        assert_eq!(
            OptionsError::UnknownController("bogus".into()).to_string(),
            "\"bogus\" is not in the list of known controllers"
        );
    }

    #[test]
    fn help_lists_the_registered_controllers_and_aliases() {
        assert!(registry().help().ends_with(
            "named 'foo'. All controllers: deployment-controller, replicaset-controller, \
             foo-controller (aliases: deployment, replicaset)"
        ));
        let mut foo_only = Registry::default();
        foo_only.push(idle("foo-controller", None));
        assert!(foo_only.help().ends_with("All controllers: foo-controller"));
        assert!(Registry::default().help().ends_with("named 'foo'."));
    }
}
