//! Go duration parsing: no input panics, results stay within `i64::MAX` nanoseconds, and a
//! parsed duration printed the Go way parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The file itself, not the `kcm` crate: it has no dependencies, the binary crate has many.
#[path = "../../cmd/src/duration.rs"]
#[allow(dead_code)]
mod duration;

fuzz_target!(|data: &str| {
    if let Ok(d) = duration::parse_go_duration(data) {
        assert!(d.as_nanos() <= i64::MAX as u128);
        let printed = duration::format_go_duration(d);
        assert_eq!(duration::parse_go_duration(&printed), Ok(d), "{printed}");
    }
});
