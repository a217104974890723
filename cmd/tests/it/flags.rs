//! The `kcm` binary refuses unusable flags before it starts, as kube-controller-manager does:
//! exit status 2 and one line naming the problem; kube-controller-manager's flags for its other
//! controllers are not among them.

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

#[test]
fn bad_controller_flags_are_refused_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--concurrent-deployment-syncs=0"],
            "kcm: --concurrent-deployment-syncs must be greater than 0\n",
        ),
        (
            &["--concurrent-replicaset-syncs=0"],
            "kcm: --concurrent-replicaset-syncs must be greater than 0\n",
        ),
        (
            &["--controllers=*,-bogus"],
            "kcm: \"bogus\" is not in the list of known controllers\n",
        ),
        (
            &["--feature-gates=PodDeletionCost"],
            "kcm: invalid --feature-gates \"PodDeletionCost\": want name=true|false[,name=...]\n",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(run(args), (Some(2), want.to_string()), "{args:?}");
    }
    // pflag's error for a value that is not a number, as before the controllers' flags moved.
    let (code, stderr) = run(&["--concurrent-deployment-syncs=x"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("invalid value 'x' for '--concurrent-deployment-syncs <int32>'"),
        "{stderr}"
    );
}
