//! `artifacts/crd.yaml` is what `sample-controller crd` prints: regenerate it with
//! `cargo run -p kcm-sample-controller -- crd > sample-controller/artifacts/crd.yaml`.

#[test]
fn checked_in_crd_is_the_generated_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/artifacts/crd.yaml");
    let checked_in = std::fs::read_to_string(path).expect("artifacts/crd.yaml is readable");
    let generated = kcm_sample_controller::crd_yaml().expect("the CRD serializes");
    assert!(
        checked_in == generated,
        "artifacts/crd.yaml differs from the CRD of the Foo type; regenerate it with\n  \
         cargo run -p kcm-sample-controller -- crd > sample-controller/artifacts/crd.yaml\n\
         --- generated:\n{generated}"
    );
}
