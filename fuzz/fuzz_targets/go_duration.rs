//! Go duration parsing: no input panics, results stay within `i64::MAX` nanoseconds, and a
//! parsed duration printed the Go way parses back to itself.
#![no_main]

use kcm_util::go_duration::{format_go_duration, parse_go_duration};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    if let Ok(d) = parse_go_duration(data) {
        assert!(d.as_nanos() <= i64::MAX as u128);
        let printed = format_go_duration(d);
        assert_eq!(parse_go_duration(&printed), Ok(d), "{printed}");
    }
});
