//! Table tests of flag parsing: defaults, pflag syntax, foreign flags, validation.

use super::validate::{OptionsError, validate, vmodule};
use super::*;
use crate::{Controller, Manager, NoFlags, ParsedArgs};

/// A manager named `kcm` with two idle controllers named as kcm's.
fn manager() -> Manager {
    let idle = |name: &'static str, alias: &'static str| {
        Controller::new(name, |_| {
            Ok(|cancel: tokio_util::sync::CancellationToken| async move {
                cancel.cancelled().await
            })
        })
        .alias(alias)
    };
    Manager::new("kcm")
        .controller(idle("deployment-controller", "deployment"))
        .controller(idle("replicaset-controller", "replicaset"))
}

fn parse(args: &[&str]) -> Options {
    parse_full(args).options
}

fn parse_full(args: &[&str]) -> ParsedArgs {
    let argv = std::iter::once("kcm").chain(args.iter().copied());
    let (parsed, NoFlags {}) = manager()
        .parse_args(argv)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    parsed
}

fn parse_err(args: &[&str]) -> String {
    let argv = std::iter::once("kcm").chain(args.iter().copied());
    match manager().parse_args::<NoFlags, _, _>(argv) {
        Ok((parsed, NoFlags {})) => panic!("{args:?} parsed: {:?}", parsed.options),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_repeated_flag_takes_its_last_value_and_lists_append_as_pflag() {
    let o = parse(&[
        "--secure-port",
        "0",
        "--secure-port=1234",
        "--kube-api-qps=7",
        "--kube-api-qps",
        "9",
    ]);
    assert_eq!(o.serving.secure_port, 1234);
    assert_eq!(o.kube_api_qps, 9.0);
    let o = parse(&["--controllers=*", "--controllers=-deployment-controller"]);
    assert_eq!(o.controllers, vec!["*", "-deployment-controller"]);
}

#[test]
fn defaults_are_kube_controller_managers() {
    let o = parse(&[]);
    assert_eq!(o.controllers, vec!["*"]);
    assert_eq!(o.kube_api_qps, 20.0);
    assert_eq!(o.kube_api_burst, 30);
    assert!(o.leader_elect);
    assert_eq!(o.leader_elect_lease_duration, Duration::from_secs(15));
    assert_eq!(o.leader_elect_renew_deadline, Duration::from_secs(10));
    assert_eq!(o.leader_elect_retry_period, Duration::from_secs(2));
    assert_eq!(o.leader_elect_resource_namespace, "kube-system");
    assert_eq!(o.leader_elect_resource_name, "kcm");
    assert_eq!(o.min_resync_period, Duration::from_secs(12 * 3600));
    assert_eq!(o.controller_start_interval, Duration::ZERO);
    assert_eq!(o.controller_shutdown_timeout, Duration::from_secs(10));
    assert!(!o.use_service_account_credentials);
    assert_eq!(o.serving.secure_port, 10257);
    assert_eq!(o.serving.bind_address.to_string(), "0.0.0.0");
    assert_eq!(
        o.serving.authorization_always_allow_paths,
        ["/healthz", "/readyz", "/livez"]
    );
    assert_eq!(o.serving.requestheader_username_headers, ["x-remote-user"]);
    assert!(validate(&o).is_ok());
}

#[test]
fn booleans_take_pflag_syntax_and_need_equals_for_a_value() {
    let cases: &[(&str, bool)] = &[
        ("--leader-elect", true),
        ("--leader-elect=1", true),
        ("--leader-elect=t", true),
        ("--leader-elect=T", true),
        ("--leader-elect=TRUE", true),
        ("--leader-elect=true", true),
        ("--leader-elect=True", true),
        ("--leader-elect=0", false),
        ("--leader-elect=f", false),
        ("--leader-elect=F", false),
        ("--leader-elect=FALSE", false),
        ("--leader-elect=false", false),
        ("--leader-elect=False", false),
    ];
    for (arg, want) in cases {
        assert_eq!(parse(&[arg]).leader_elect, *want, "{arg}");
    }
    for arg in [
        "--use-service-account-credentials",
        "--use-service-account-credentials=T",
    ] {
        assert!(parse(&[arg]).use_service_account_credentials, "{arg}");
    }
    assert!(parse_err(&["--leader-elect=yes"]).contains("invalid syntax"));
    // As pflag: a bool never takes the next argument, which is then a stray argument.
    parse_err(&["--leader-elect", "false"]);
}

#[test]
fn values_take_both_pflag_forms() {
    let cases: &[&[&str]] = &[
        &[
            "--kubeconfig=/etc/kubernetes/controller-manager.conf",
            "--kube-api-burst=7",
        ],
        &[
            "--kubeconfig",
            "/etc/kubernetes/controller-manager.conf",
            "--kube-api-burst",
            "7",
        ],
    ];
    for args in cases {
        let o = parse(args);
        assert_eq!(
            o.kubeconfig.as_deref(),
            Some(std::path::Path::new(
                "/etc/kubernetes/controller-manager.conf"
            ))
        );
        assert_eq!(o.kube_api_burst, 7);
    }
    let o = parse(&[
        "--leader-elect-lease-duration=1m30s",
        "--min-resync-period",
        "30m",
        "-v=4",
        "--controller-start-interval=500ms",
    ]);
    assert_eq!(o.leader_elect_lease_duration, Duration::from_secs(90));
    assert_eq!(o.min_resync_period, Duration::from_secs(1800));
    assert_eq!(o.verbosity, 4);
    assert_eq!(o.controller_start_interval, Duration::from_millis(500));
    assert_eq!(parse(&["-v", "3"]).verbosity, 3);
    assert_eq!(parse(&["--v=5"]).verbosity, 5);
    parse_err(&["--leader-elect-lease-duration=15"]);
}

#[test]
fn kube_api_qps_accepts_zero_and_negative_as_upstream() {
    let cases: &[(&[&str], f32, i32)] = &[
        (&["--kube-api-qps=0"], 0.0, 30),
        (&["--kube-api-qps=-1"], -1.0, 30),
        (&["--kube-api-qps", "-1"], -1.0, 30),
        (&["--kube-api-qps=50.5", "--kube-api-burst=0"], 50.5, 0),
    ];
    for (args, qps, burst) in cases {
        let o = parse(args);
        assert_eq!(
            (o.kube_api_qps, o.kube_api_burst),
            (*qps, *burst),
            "{args:?}"
        );
        assert!(validate(&o).is_ok(), "{args:?}");
    }
    assert_eq!(
        validate(&parse(&["--kube-api-burst=-1"])),
        Err(OptionsError::BadRateLimit)
    );
}

/// The command line kubeadm writes for kube-controller-manager, as an operator copies it.
const KUBEADM: &[&str] = &[
    "--allocate-node-cidrs=true",
    "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--bind-address=127.0.0.1",
    "--client-ca-file=/etc/kubernetes/pki/ca.crt",
    "--cluster-cidr=10.244.0.0/16",
    "--cluster-name=kubernetes",
    "--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt",
    "--cluster-signing-key-file=/etc/kubernetes/pki/ca.key",
    "--controllers=*,bootstrapsigner,tokencleaner",
    "--kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--leader-elect=true",
    "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
    "--root-ca-file=/etc/kubernetes/pki/ca.crt",
    "--service-account-private-key-file=/etc/kubernetes/pki/sa.key",
    "--service-cluster-ip-range=10.96.0.0/12",
    "--use-service-account-credentials=true",
];

#[test]
fn a_kubeadm_command_line_is_accepted_and_foreign_flags_named_once() {
    let parsed = parse_full(KUBEADM);
    let o = &parsed.options;
    assert!(validate(o).is_ok());
    assert!(o.use_service_account_credentials);
    assert_eq!(
        manager().enabled(o),
        ["deployment-controller", "replicaset-controller"]
    );
    assert_eq!(o.serving.bind_address.to_string(), "127.0.0.1");
    assert_eq!(
        o.serving.client_ca_file.as_deref(),
        Some(std::path::Path::new("/etc/kubernetes/pki/ca.crt"))
    );
    assert!(o.serving.requestheader_client_ca_file.is_some());
    assert!(o.serving.authentication_kubeconfig.is_some());
    assert_eq!(
        parsed.ignored,
        [
            "allocate-node-cidrs",
            "cluster-cidr",
            "cluster-name",
            "cluster-signing-cert-file",
            "cluster-signing-key-file",
            "root-ca-file",
            "service-account-private-key-file",
            "service-cluster-ip-range",
        ]
    );
}

#[test]
fn accepted_but_ineffective_flags_of_ours_are_reported() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["--kube-api-content-type=application/json"], &[]),
        (
            &["--kube-api-content-type=application/vnd.kubernetes.protobuf"],
            &["kube-api-content-type"],
        ),
        (&["--feature-gates=Foo=true,Bar=false"], &[]),
        (&["--profiling=false", "--vmodule=x=2"], &[]),
        (&["--contention-profiling"], &["contention-profiling"]),
    ];
    for (args, want) in cases {
        assert_eq!(parse_full(args).ignored, *want, "{args:?}");
    }
    assert!(matches!(
        validate(&parse(&["--feature-gates=Foo"])),
        Err(OptionsError::BadFeatureGates(_))
    ));
}

#[test]
fn invalid_values_are_rejected_with_clear_messages() {
    let o = parse(&["--leader-elect-resource-lock=endpoints"]);
    assert!(matches!(
        validate(&o),
        Err(OptionsError::UnsupportedLock(_))
    ));
    let o = parse(&["--logging-format=yaml"]);
    assert!(matches!(
        validate(&o),
        Err(OptionsError::UnsupportedLogFormat(_))
    ));
    assert!(parse_err(&["--cluster-cidr"]).contains("flag needs an argument: --cluster-cidr"));
    parse_err(&["--no-such-flag"]);
}

#[test]
fn profiling_and_vmodule_are_kcm_flags() {
    let o = parse(&[]);
    assert!(o.profiling, "profiling is on by default, as upstream");
    assert!(vmodule(&o).expect("empty").is_empty());
    let o = parse(&["--profiling=f", "--vmodule=sync=4,roll*=2"]);
    assert!(!o.profiling);
    assert!(validate(&o).is_ok());
    let vmodule = vmodule(&o).expect("valid");
    assert_eq!(
        vmodule.verbosity_for("controllers/deployment/src/rolling.rs"),
        Some(2)
    );
    let cases: &[(&[&str], OptionsError)] = &[
        (
            &["--vmodule=sync"],
            OptionsError::BadVModule {
                value: "sync".into(),
                reason: "\"sync\" does not have the pattern=N format".into(),
            },
        ),
        (
            &["--vmodule=sync=4", "--logging-format=json"],
            OptionsError::VModuleNeedsText,
        ),
    ];
    for (args, want) in cases {
        assert_eq!(validate(&parse(args)).as_ref(), Err(want), "{args:?}");
    }
    assert_eq!(
        OptionsError::BadVModule {
            value: "sync".into(),
            reason: "\"sync\" does not have the pattern=N format".into(),
        }
        .to_string(),
        "invalid argument \"sync\" for \"--vmodule\" flag: \"sync\" does not have the pattern=N format"
    );
}
