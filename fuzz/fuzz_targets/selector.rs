//! Label selector parsing: no input panics, and the canonical form of any parsed selector
//! parses back to the same selector.
#![no_main]

use kcm_store::Selector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    if let Ok(sel) = Selector::parse(data) {
        let canonical = sel.to_string();
        let again = Selector::parse(&canonical).expect("the canonical form parses");
        assert_eq!(again.to_string(), canonical);
    }
});
