//! pflag's command-line conventions where clap differs: Go's boolean syntax, and foreign
//! flags taken out of the command line before clap sees it.

use std::ffi::OsString;

use super::foreign::{FlagKind, foreign_flag};

/// Parses a boolean the way Go's `strconv.ParseBool` (and so pflag) does: `1 t T TRUE true
/// True` and `0 f F FALSE false False`.
pub(crate) fn parse_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {value:?}: invalid syntax"
        )),
    }
}

/// A foreign flag that cannot be skipped.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ForeignFlagError {
    /// A value flag at the end of the command line, without its value.
    #[error("flag needs an argument: --{0}")]
    MissingValue(String),
    /// A boolean flag given a value that is not a boolean.
    #[error("invalid argument {value:?} for \"--{name}\" flag: {reason}")]
    BadBool {
        /// The flag.
        name: String,
        /// What was given.
        value: String,
        /// Why it is not a boolean.
        reason: String,
    },
}

/// The command line without its foreign flags (see [`super::foreign`]), and the names of the
/// foreign flags removed, in order, each once.
///
/// `ours(name)` tells whether a long flag is the command's own (`Some`), then never foreign,
/// and whether it takes its value from the next argument when written without `=`
/// (`Some(true)`: `--kubeconfig path`), so that a value that looks like a flag is left to its
/// owner, as pflag does. Arguments after `--` are kept as they are.
pub(crate) fn strip_foreign<I>(
    argv: I,
    ours: impl Fn(&str) -> Option<bool>,
) -> Result<(Vec<OsString>, Vec<String>), ForeignFlagError>
where
    I: IntoIterator<Item = OsString>,
{
    let mut kept = Vec::new();
    let mut removed: Vec<String> = Vec::new();
    let mut args = argv.into_iter();
    if let Some(program) = args.next() {
        kept.push(program);
    }
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str().map(str::to_string) else {
            kept.push(arg);
            continue;
        };
        if text == "--" {
            kept.push(arg);
            kept.extend(args.by_ref());
            break;
        }
        let Some(flag) = text.strip_prefix("--") else {
            // `-v 4`: the short verbosity flag takes the next argument.
            let short_with_value = text == "-v";
            kept.push(arg);
            if short_with_value && let Some(value) = args.next() {
                kept.push(value);
            }
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        let own = ours(name);
        match foreign_flag(name).filter(|_| own.is_none()) {
            Some(kind) => {
                match (kind, value) {
                    (FlagKind::Bool, Some(v)) => {
                        parse_bool(v).map_err(|reason| ForeignFlagError::BadBool {
                            name: name.to_string(),
                            value: v.to_string(),
                            reason,
                        })?;
                    }
                    (FlagKind::Bool, None) | (FlagKind::Value, Some(_)) => {}
                    (FlagKind::Value, None) => {
                        if args.next().is_none() {
                            return Err(ForeignFlagError::MissingValue(name.to_string()));
                        }
                    }
                }
                if !removed.iter().any(|r| r == name) {
                    removed.push(name.to_string());
                }
            }
            None => {
                let next_is_value = value.is_none() && own == Some(true);
                kept.push(arg);
                if next_is_value && let Some(value) = args.next() {
                    kept.push(value);
                }
            }
        }
    }
    Ok((kept, removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_parse_like_go() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_bool(t), Ok(true), "{t}");
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_bool(f), Ok(false), "{f}");
        }
        for bad in ["", "yes", "no", "tRUE", "2", "on", " true"] {
            assert!(parse_bool(bad).is_err(), "{bad:?}");
        }
    }

    fn strip(args: &[&str]) -> Result<(Vec<String>, Vec<String>), ForeignFlagError> {
        let argv = std::iter::once("kcm")
            .chain(args.iter().copied())
            .map(OsString::from);
        // Ours: flags with a value, one of them a flag kube-controller-manager also has.
        let ours = |name: &str| {
            matches!(
                name,
                "kubeconfig" | "master" | "concurrent-deployment-syncs"
            )
            .then_some(true)
        };
        strip_foreign(argv, ours).map(|(kept, removed)| {
            let kept = kept
                .into_iter()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            (kept, removed)
        })
    }

    #[test]
    fn foreign_flags_are_removed_in_every_pflag_form() {
        type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str]);
        let cases: &[Case] = &[
            // (argv, kept, removed)
            (&["--cluster-cidr=10.244.0.0/16"], &[], &["cluster-cidr"]),
            (&["--cluster-cidr", "10.244.0.0/16"], &[], &["cluster-cidr"]),
            (&["--allocate-node-cidrs"], &[], &["allocate-node-cidrs"]),
            (&["--allocate-node-cidrs=T"], &[], &["allocate-node-cidrs"]),
            // A bool never takes the next argument: it stays (and clap refuses it).
            (
                &["--allocate-node-cidrs", "true"],
                &["true"],
                &["allocate-node-cidrs"],
            ),
            (
                &[
                    "--kubeconfig",
                    "/k",
                    "--root-ca-file=/ca",
                    "--leader-elect=1",
                ],
                &["--kubeconfig", "/k", "--leader-elect=1"],
                &["root-ca-file"],
            ),
            // Our flag's value is its own even when it looks like a foreign flag.
            (
                &["--kubeconfig", "--cluster-name"],
                &["--kubeconfig", "--cluster-name"],
                &[],
            ),
            (
                &["-v", "4", "--contention-profiling"],
                &["-v", "4"],
                &["contention-profiling"],
            ),
            (
                &["--cluster-name=a", "--cluster-name", "b"],
                &[],
                &["cluster-name"],
            ),
            // A flag of kube-controller-manager's the command has is not foreign.
            (
                &[
                    "--concurrent-deployment-syncs=3",
                    "--concurrent-replicaset-syncs=3",
                ],
                &["--concurrent-deployment-syncs=3"],
                &["concurrent-replicaset-syncs"],
            ),
            (
                &["--", "--cluster-name=a"],
                &["--", "--cluster-name=a"],
                &[],
            ),
        ];
        for (argv, kept, removed) in cases {
            let (k, r) = strip(argv).expect("strips");
            assert_eq!(k, *kept, "{argv:?}");
            assert_eq!(r, *removed, "{argv:?}");
        }
    }

    #[test]
    fn malformed_foreign_flags_are_errors() {
        assert_eq!(
            strip(&["--cluster-cidr"]),
            Err(ForeignFlagError::MissingValue("cluster-cidr".into()))
        );
        assert!(matches!(
            strip(&["--allocate-node-cidrs=yes"]),
            Err(ForeignFlagError::BadBool { .. })
        ));
    }
}
