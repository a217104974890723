//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, in Rust.

use std::process::ExitCode;

use kcm::app::{self, Exit};
use kcm::options::Options;

/// The controllers compiled into this binary, under their canonical `--controllers` names.
fn controllers() -> Vec<app::Controller> {
    vec![
        app::Controller {
            name: "deployment-controller",
            build: Box::new(|ctx: &app::ControllerContext| {
                let factory = &ctx.factory;
                strip_managed_fields::<k8s_openapi::api::apps::v1::Deployment>(factory)?;
                strip_managed_fields::<k8s_openapi::api::apps::v1::ReplicaSet>(factory)?;
                let config = kcm_deployment::DeploymentControllerConfig {
                    workers: ctx.options.concurrent_deployment_syncs as usize,
                    features: gates(&ctx.options).deployment(),
                    namespace_gate: ctx.namespace_gate.clone(),
                    ..Default::default()
                };
                let controller =
                    kcm_deployment::DeploymentController::new(ctx.client.clone(), factory, config)?;
                Ok(Box::new(move |cancel| {
                    Box::pin(controller.run(cancel)) as app::RunFuture
                }))
            }),
        },
        app::Controller {
            name: "replicaset-controller",
            build: Box::new(|ctx: &app::ControllerContext| {
                let factory = &ctx.factory;
                strip_managed_fields::<k8s_openapi::api::apps::v1::ReplicaSet>(factory)?;
                let config = kcm_replicaset::ReplicaSetControllerConfig {
                    workers: ctx.options.concurrent_replicaset_syncs as usize,
                    features: gates(&ctx.options).replica_set(),
                    namespace_gate: ctx.namespace_gate.clone(),
                    ..Default::default()
                };
                let controller =
                    kcm_replicaset::ReplicaSetController::new(ctx.client.clone(), factory, config)?;
                Ok(Box::new(move |cancel| {
                    Box::pin(controller.run(cancel)) as app::RunFuture
                }))
            }),
        },
    ]
}

/// The feature gates of `--feature-gates` (validated at start, so defaults on a parse error).
fn gates(options: &Options) -> kcm::feature_gates::Gates {
    kcm::feature_gates::resolve(options.feature_gates.as_deref())
        .map(|(g, _)| g)
        .unwrap_or_default()
}

/// Caches never hold managedFields: the controllers do not read them, and they are often the
/// largest part of an object. (Pods are cached as `PodView`, which never parses them.)
fn strip_managed_fields<K>(factory: &kcm_informer::InformerFactory) -> anyhow::Result<()>
where
    K: kcm_informer::informer::InformerObject
        + k8s_openapi::Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
{
    let informer = factory.informer::<K>();
    if informer.is_started() {
        return Ok(());
    }
    // A second controller asking for the same informer sets the same transform again.
    informer.set_transform(|mut obj: K| {
        obj.metadata_mut().managed_fields = None;
        obj
    })?;
    Ok(())
}

fn main() -> ExitCode {
    let parsed = match Options::parse_args(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    let options = parsed.options;
    if let Err(e) = options.validate() {
        eprintln!("kcm: {e}");
        return ExitCode::from(2);
    }
    let vmodule = match options.vmodule() {
        Ok(vmodule) => vmodule,
        Err(e) => {
            eprintln!("kcm: {e}");
            return ExitCode::from(2);
        }
    };
    kcm::logging::init(
        u32::from(options.verbosity),
        vmodule,
        &options.logging_format,
    );
    match kcm::feature_gates::resolve(options.feature_gates.as_deref()) {
        Ok((gates, unused)) => {
            tracing::info!(?gates, "feature gates");
            if !unused.is_empty() {
                tracing::warn!(
                    gates = unused.join(","),
                    "ignoring feature gates the Deployment and ReplicaSet controllers do not consult"
                );
            }
        }
        Err(e) => {
            eprintln!("kcm: --feature-gates: {e}");
            return ExitCode::from(2);
        }
    }
    if !parsed.ignored.is_empty() {
        tracing::warn!(
            flags = parsed.ignored.join(","),
            "ignoring flags that have no effect in kcm (they configure kube-controller-manager's other controllers or features kcm does not have)"
        );
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kcm: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let result = async {
            let loaded =
                kcm::client::load_config(options.kubeconfig.as_deref(), options.master.as_deref())
                    .await?;
            tracing::info!(
                server = %loaded.config.cluster_url,
                config = %loaded.source,
                credentials = kcm::client::config::credentials(&loaded.config.auth_info),
                user_agent = kcm::client::user_agent::default_user_agent(),
                "using the API server"
            );
            let metrics = kcm::metrics::Metrics::new();
            let clients = kcm::client::ClientFactory::new(
                loaded.config,
                options.kube_api_qps,
                options.kube_api_burst,
                metrics.clone(),
            )?;
            let whoami = clients.client("kcm")?;
            tokio::spawn(async move { kcm::client::config::log_identity(&whoami).await });
            let stop = tokio_util::sync::CancellationToken::new();
            let signal_stop = stop.clone();
            tokio::spawn(async move {
                app::shutdown_signal().await;
                signal_stop.cancel();
            });
            app::run(&options, clients, metrics, controllers(), stop).await
        }
        .await;
        match result {
            Ok(Exit::Stopped) => ExitCode::SUCCESS,
            Ok(Exit::LeaderElectionLost) => ExitCode::FAILURE,
            Err(e) => {
                tracing::error!(error = kcm::error_chain::display_anyhow(&e), "kcm failed");
                ExitCode::FAILURE
            }
        }
    })
}
