//! kcm-testenv's protobuf body decoder: no input panics; the envelope is built around the fuzz
//! input for each kind (so the object decoder is reached) and the raw input is tried as a body.
#![no_main]

use kcm_testenv::apiserver::protobuf::{MAGIC, decode_body};
use libfuzzer_sys::fuzz_target;

const KINDS: &[(&str, &str)] = &[
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("v1", "Pod"),
    ("v1", "Event"),
    ("coordination.k8s.io/v1", "Lease"),
];

fn len_field(out: &mut Vec<u8>, number: u8, payload: &[u8]) {
    out.push((number << 3) | 2);
    let mut n = payload.len();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(payload);
}

fuzz_target!(|data: &[u8]| {
    let _ = decode_body(data);
    let Some((&selector, raw)) = data.split_first() else {
        return;
    };
    let (api_version, kind) = KINDS[usize::from(selector) % KINDS.len()];
    let mut type_meta = Vec::new();
    len_field(&mut type_meta, 1, api_version.as_bytes());
    len_field(&mut type_meta, 2, kind.as_bytes());
    let mut body = MAGIC.to_vec();
    len_field(&mut body, 1, &type_meta);
    len_field(&mut body, 2, raw);
    if let Ok(v) = decode_body(&body) {
        assert_eq!(v["kind"], kind);
    }
});
