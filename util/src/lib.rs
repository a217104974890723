//! Small utilities shared by the kcm-rs crates, with no dependencies (the kube-free crates may
//! use them too): [`go_duration`] parses and prints Go duration strings, [`go_quote`] quotes a
//! string as Go's `%q`, [`proc_stats`] reads
//! this process's CPU time and memory from `/proc` for the benchmark examples.
//!
//! ```
//! use std::time::Duration;
//! use kcm_util::go_duration::parse_go_duration;
//!
//! assert_eq!(parse_go_duration("2h45m"), Ok(Duration::from_secs(9900)));
//! let err = parse_go_duration("5 s").unwrap_err();
//! assert_eq!(err.to_string(), r#"time: unknown unit " s" in duration "5 s""#);
//! ```

/// Compiles and runs the README example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod go_duration;
pub mod go_quote;
pub mod proc_stats;
#[cfg(feature = "prometheus")]
pub mod prometheus;
pub mod quantity;
