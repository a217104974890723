//! The `kcm` binary refuses bad logging flags before it starts, as kube-controller-manager
//! does: exit status 2 and one line naming the problem.

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kcm"))
        .args(args)
        .output()
        .expect("kcm runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_vmodule_is_refused_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--vmodule=sync=4", "--logging-format=json"],
            "kcm: logging.vmodule: Forbidden: Only supported for text log format\n",
        ),
        (
            &["--vmodule=sync"],
            "kcm: invalid argument \"sync\" for \"--vmodule\" flag: \"sync\" does not have the pattern=N format\n",
        ),
        (
            &["--vmodule=sync=x"],
            "kcm: invalid argument \"sync=x\" for \"--vmodule\" flag: parsing verbosity in \"sync=x\": invalid syntax\n",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(run(args), (Some(2), want.to_string()), "{args:?}");
    }
}
