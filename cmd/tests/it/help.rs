//! `kcm --help` as recorded in `tests/it/kcm-help.txt`: kube-controller-manager's flags for kcm's
//! two controllers, with upstream's help texts and defaults, in this order. A change to a flag's
//! name, text, default or place is a decision, recorded by updating that file
//! (`cargo run -p kcm -- --help > cmd/tests/it/kcm-help.txt`).

use std::process::Command;

#[test]
fn help_is_the_recorded_one() {
    let out = Command::new(env!("CARGO_BIN_EXE_kcm"))
        .arg("--help")
        .output()
        .expect("kcm runs");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    let want = include_str!("kcm-help.txt");
    if help != want {
        let first = help
            .lines()
            .zip(want.lines())
            .position(|(got, want)| got != want)
            .unwrap_or(help.lines().count().min(want.lines().count()));
        panic!(
            "kcm --help differs from tests/it/kcm-help.txt from line {}:\n  got:  {:?}\n  want: {:?}\n\
             (if the change is intended: cargo run -p kcm -- --help > cmd/tests/it/kcm-help.txt)",
            first + 1,
            help.lines().nth(first),
            want.lines().nth(first),
        );
    }
}
