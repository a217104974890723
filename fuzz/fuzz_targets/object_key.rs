//! Object key parsing: no input panics, and the result is `strings.Split` on `/`.
#![no_main]

use kcm_store::ObjectKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    let parts = data.split('/').count();
    match ObjectKey::parse(data) {
        Ok(key) => {
            assert!(parts <= 2);
            assert_eq!(
                ObjectKey::parse(&key.to_string())
                    .expect("printed key parses")
                    .name,
                key.name
            );
        }
        Err(_) => assert!(parts > 2),
    }
});
