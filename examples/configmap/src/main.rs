//! `greeting-controller`: the Greeting controller on kcm-manager (kube-controller-manager's
//! flags, leader election or `--sharding=namespace`, metrics, health, logs, SIGTERM).

fn main() -> std::process::ExitCode {
    kcm_manager::Manager::new("greeting-controller")
        .controller(kcm_example_configmap::controller())
        .main()
}
