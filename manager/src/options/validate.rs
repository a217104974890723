//! What clap cannot check in [`Options`]: the lock type, the log format and `--vmodule`, the
//! rate limits and the `--feature-gates` syntax, with upstream-like messages. (`--controllers`
//! is checked against the registered controllers: [`crate::registry`].)

use crate::feature_gates::parse_pairs;
use crate::logging::VModule;

use super::Options;

/// A flag value that parses but is not acceptable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum OptionsError {
    /// `--controllers` names something unknown.
    #[error("{0:?} is not in the list of known controllers")]
    UnknownController(String),
    /// `--leader-elect-resource-lock` is not `leases`.
    #[error("unsupported --leader-elect-resource-lock {0:?}: only \"leases\" is supported")]
    UnsupportedLock(String),
    /// `--logging-format` is neither text nor json.
    #[error("unsupported --logging-format {0:?}: permitted formats are \"json\" and \"text\"")]
    UnsupportedLogFormat(String),
    /// `--kube-api-qps` is not a number or `--kube-api-burst` is negative.
    #[error("--kube-api-qps must be a number and --kube-api-burst must not be negative")]
    BadRateLimit,
    /// `--vmodule` is not a list of `pattern=N`.
    #[error("invalid argument {value:?} for \"--vmodule\" flag: {reason}")]
    BadVModule {
        /// The flag's value.
        value: String,
        /// component-base's message.
        reason: String,
    },
    /// `--vmodule` with a log format other than text.
    #[error("logging.vmodule: Forbidden: Only supported for text log format")]
    VModuleNeedsText,
    /// `--feature-gates` is not a list of `name=bool`.
    #[error("invalid --feature-gates {0:?}: want name=true|false[,name=...]")]
    BadFeatureGates(String),
}

/// Checks what clap cannot, in this order: the lock type, the log format and `--vmodule`, the
/// rate limits, the `--feature-gates` syntax.
pub(crate) fn validate(options: &Options) -> Result<(), OptionsError> {
    if options.leader_elect_resource_lock != "leases" {
        return Err(OptionsError::UnsupportedLock(
            options.leader_elect_resource_lock.clone(),
        ));
    }
    if !matches!(options.logging_format.as_str(), "text" | "json") {
        return Err(OptionsError::UnsupportedLogFormat(
            options.logging_format.clone(),
        ));
    }
    if !vmodule(options)?.is_empty() && options.logging_format != "text" {
        return Err(OptionsError::VModuleNeedsText);
    }
    if options.kube_api_qps.is_nan() || options.kube_api_burst < 0 {
        return Err(OptionsError::BadRateLimit);
    }
    if let Some(gates) = &options.feature_gates {
        parse_pairs(gates).map_err(|_| OptionsError::BadFeatureGates(gates.clone()))?;
    }
    Ok(())
}

/// `--vmodule`, parsed.
pub(crate) fn vmodule(options: &Options) -> Result<VModule, OptionsError> {
    VModule::parse(&options.vmodule).map_err(|reason| OptionsError::BadVModule {
        value: options.vmodule.clone(),
        reason,
    })
}
