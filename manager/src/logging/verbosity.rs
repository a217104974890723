//! Which log calls are enabled: klog's `-v` and `--vmodule` over tracing levels.
//!
//! kcm's crates and the binary's own (a user's controllers) log at tracing's levels, each
//! enabled from the verbosity [`needed_verbosity`] gives it: their `info!` calls need verbosity
//! 0, `debug!` 2 and `trace!` 5. The client stack underneath (kube, hyper, h2, tower, rustls,
//! tokio, …) logs warnings and errors only. The global verbosity can change while kcm runs (`PUT /debug/flags/v`, as
//! kube-controller-manager allows with `--profiling`); tracing caches per call site whether
//! it is enabled, so a change rebuilds that cache.

use std::sync::atomic::{AtomicU32, Ordering};

use tracing::{Level, Metadata};

use super::vmodule::VModule;

/// The verbosity a tracing level needs.
pub fn needed_verbosity(level: &Level) -> u32 {
    match *level {
        Level::ERROR | Level::WARN | Level::INFO => 0,
        Level::DEBUG => 2,
        Level::TRACE => 5,
    }
}

/// The global verbosity and the per-file overrides.
#[derive(Debug, Default)]
pub struct Verbosity {
    global: AtomicU32,
    vmodule: VModule,
}

impl Verbosity {
    /// `-v` and `--vmodule`.
    pub fn new(global: u32, vmodule: VModule) -> Self {
        Verbosity {
            global: AtomicU32::new(global),
            vmodule,
        }
    }

    /// The current global verbosity.
    pub fn global(&self) -> u32 {
        self.global.load(Ordering::Relaxed)
    }

    /// Whether a log call is enabled.
    pub fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        let level = metadata.level();
        if *level <= Level::WARN {
            return true;
        }
        if is_client_stack(metadata.target()) {
            return false;
        }
        let needed = needed_verbosity(level);
        if self.global() >= needed {
            return true;
        }
        metadata
            .file()
            .and_then(|file| self.vmodule.verbosity_for(file))
            .is_some_and(|v| v >= needed)
    }

    /// Sets the global verbosity from the body of `PUT /debug/flags/v`, answering as
    /// component-base's `GlogSetter`: the confirmation, or the error.
    pub fn set_from_text(&self, value: &str) -> Result<String, String> {
        // Go's ParseUint takes no sign; Rust's takes a `+`, which `"+"` alone is not.
        let digits = if value.starts_with('+') { "+" } else { value };
        let parsed: u64 = digits.parse().map_err(|e: std::num::ParseIntError| {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow => "value out of range",
                _ => "invalid syntax",
            };
            format!("strconv.ParseUint: parsing {value:?}: {why}")
        })?;
        if parsed > u64::from(u32::MAX) {
            return Err(format!(
                "strconv.ParseUint: parsing {value:?}: value out of range"
            ));
        }
        if parsed > i32::MAX as u64 {
            return Err(format!(
                "failed set klog.logging.verbosity {value}: strconv.ParseInt: parsing {value:?}: value out of range"
            ));
        }
        let previous = self.global.swap(parsed as u32, Ordering::Relaxed);
        tracing::callsite::rebuild_interest_cache();
        tracing::info!(from = previous, to = parsed, "log verbosity changed");
        Ok(format!(
            "successfully set klog.logging.verbosity to {value}"
        ))
    }
}

/// The crates under kcm's client and runtime whose info and debug logs are noise for an operator
/// (kube-controller-manager does not show client-go's either).
const CLIENT_STACK: &[&str] = &[
    "kube",
    "kube_client",
    "kube_core",
    "kube_runtime",
    "hyper",
    "hyper_util",
    "hyper_rustls",
    "h2",
    "http",
    "tower",
    "tower_http",
    "rustls",
    "tokio_rustls",
    "tokio",
    "tokio_util",
    "mio",
    "want",
    "reqwest",
    "rcgen",
    "jiff",
    "tracing",
    "governor",
    "papaya",
    "dashmap",
];

/// Whether a tracing target belongs to the client stack underneath the controllers
/// ([`CLIENT_STACK`]); everything else is kcm's or the binary's own and follows `-v`.
fn is_client_stack(target: &str) -> bool {
    let krate = target.split("::").next().unwrap_or(target);
    CLIENT_STACK.contains(&krate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::callsite::Identifier;
    use tracing::field::FieldSet;
    use tracing::metadata::Kind;

    struct Site;
    impl tracing::Callsite for Site {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &Metadata<'_> {
            unreachable!("not registered")
        }
    }
    static SITE: Site = Site;

    fn meta(level: Level, target: &'static str, file: &'static str) -> Metadata<'static> {
        Metadata::new(
            "event",
            target,
            level,
            Some(file),
            Some(1),
            None,
            FieldSet::new(&[], Identifier(&SITE)),
            Kind::EVENT,
        )
    }

    #[test]
    fn verbosity_and_vmodule_decide_as_klog() {
        let v = Verbosity::new(0, VModule::parse("status=2,rolling=5").expect("valid"));
        let sync = "controllers/deployment/src/sync/status.rs";
        let roll = "controllers/deployment/src/rolling.rs";
        let other = "controllers/deployment/src/recreate.rs";
        let cases = [
            (Level::INFO, "kcm_deployment::recreate", other, true),
            (Level::DEBUG, "kcm_deployment::recreate", other, false),
            (Level::DEBUG, "kcm_deployment::sync", sync, true),
            (Level::TRACE, "kcm_deployment::sync", sync, false),
            (Level::TRACE, "kcm_deployment::rolling", roll, true),
            (Level::WARN, "hyper::proto", "src/proto.rs", true),
            (Level::INFO, "hyper::proto", "src/proto.rs", false),
            (Level::DEBUG, "kcm", "cmd/src/app.rs", false),
            (Level::INFO, "kube_client::client", "src/client.rs", false),
            // A user's controller on kcm-manager logs like kcm's own crates.
            (Level::INFO, "my_controller::sync", "src/sync.rs", true),
            (Level::DEBUG, "my_controller::sync", "src/sync.rs", false),
        ];
        for (level, target, file, want) in cases {
            assert_eq!(
                v.enabled(&meta(level, target, file)),
                want,
                "{level} {target} {file}"
            );
        }
    }

    #[test]
    fn vmodule_only_raises_verbosity() {
        let v = Verbosity::new(5, VModule::parse("status=1").expect("valid"));
        let m = meta(
            Level::TRACE,
            "kcm_deployment::sync",
            "controllers/deployment/src/sync/status.rs",
        );
        assert!(v.enabled(&m));
    }

    #[test]
    fn setting_verbosity_answers_as_glog_setter() {
        let v = Verbosity::new(0, VModule::default());
        let debug = meta(Level::DEBUG, "kcm", "cmd/src/app.rs");
        assert!(!v.enabled(&debug));
        assert_eq!(
            v.set_from_text("4"),
            Ok("successfully set klog.logging.verbosity to 4".to_string())
        );
        assert_eq!(v.global(), 4);
        assert!(v.enabled(&debug));
        let errors = [
            ("x", "strconv.ParseUint: parsing \"x\": invalid syntax"),
            ("4\n", "strconv.ParseUint: parsing \"4\\n\": invalid syntax"),
            ("+4", "strconv.ParseUint: parsing \"+4\": invalid syntax"),
            ("-1", "strconv.ParseUint: parsing \"-1\": invalid syntax"),
            (
                "4294967296",
                "strconv.ParseUint: parsing \"4294967296\": value out of range",
            ),
            (
                "99999999999999999999",
                "strconv.ParseUint: parsing \"99999999999999999999\": value out of range",
            ),
            (
                "3000000000",
                "failed set klog.logging.verbosity 3000000000: strconv.ParseInt: parsing \"3000000000\": value out of range",
            ),
        ];
        for (value, message) in errors {
            assert_eq!(
                v.set_from_text(value),
                Err(message.to_string()),
                "{value:?}"
            );
        }
        assert_eq!(v.global(), 4, "a refused value leaves the verbosity alone");
    }
}
