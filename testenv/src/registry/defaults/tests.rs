//! Defaulting by type, with cases of upstream's `defaults_test.go` files and what
//! kube-apiserver v1.37.2 answered for the same creates.

use serde_json::{Value, json};

use super::*;

fn defaulted(id: StorageId, mut v: Value) -> Value {
    apply(id, &mut v);
    v
}

fn template(containers: Value) -> Value {
    json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": containers}})
}

#[test]
fn pull_policy_table() {
    // upstream TestSetDefaultContainerImagePullPolicy-like cases
    for (img, always) in [
        ("nginx", true),
        ("nginx:latest", true),
        ("nginx:1.25", false),
        ("nginx@sha256:abc", false),
        ("localhost:5000/app", true),
        ("localhost:5000/app:v1", false),
    ] {
        assert_eq!(pull_always(img), always, "{img}");
    }
}

#[test]
fn deployment_defaults() {
    let d = defaulted(
        StorageId::DEPLOYMENTS,
        json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": template(json!([{"name": "web", "image": "nginx"}]))}}),
    );
    let s = &d["spec"];
    assert_eq!(s["replicas"], 1);
    assert_eq!(
        s["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(s["revisionHistoryLimit"], 10);
    assert_eq!(s["progressDeadlineSeconds"], 600);
    let ps = &s["template"]["spec"];
    assert_eq!(ps["restartPolicy"], "Always");
    assert_eq!(ps["dnsPolicy"], "ClusterFirst");
    assert_eq!(ps["schedulerName"], "default-scheduler");
    assert_eq!(ps["terminationGracePeriodSeconds"], 30);
    assert_eq!(ps["securityContext"], json!({}));
    // a Pod's own defaults are not a template's
    assert!(ps.get("enableServiceLinks").is_none());
    let c = &ps["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["resources"], json!({}));
}

#[test]
fn recreate_gets_no_rolling_update() {
    let d = defaulted(
        StorageId::DEPLOYMENTS,
        json!({"spec": {"strategy": {"type": "Recreate"}}}),
    );
    assert!(d["spec"]["strategy"].get("rollingUpdate").is_none());
}

#[test]
fn pod_defaults() {
    let p = defaulted(
        StorageId::PODS,
        json!({"spec": {"containers": [{"name": "a", "image": "x:1", "resources": {
            "limits": {"cpu": "1", "memory": "1024Mi"}, "requests": {"cpu": "0.5"}}}],
            "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}]}}),
    );
    let r = &p["spec"]["containers"][0]["resources"];
    assert_eq!(r["limits"]["memory"], "1Gi");
    assert_eq!(r["requests"]["cpu"], "500m");
    assert_eq!(r["requests"]["memory"], "1Gi");
    assert_eq!(
        p["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(p["spec"]["enableServiceLinks"], true);
    assert_eq!(p["spec"]["volumes"][0]["emptyDir"], json!({}));
    assert_eq!(p["spec"]["volumes"][1]["secret"]["defaultMode"], 420);
    // TestSetDefaultsHostNetwork-like: host ports follow container ports
    let p = defaulted(
        StorageId::PODS,
        json!({"spec": {"hostNetwork": true, "containers": [{"name": "a", "image": "x",
            "ports": [{"containerPort": 80}]}]}}),
    );
    assert_eq!(
        p["spec"]["containers"][0]["ports"][0],
        json!({"containerPort": 80, "hostPort": 80, "protocol": "TCP"})
    );
}

#[test]
fn probes_and_handlers() {
    let p = defaulted(
        StorageId::PODS,
        json!({"spec": {"containers": [{"name": "a", "image": "x",
            "readinessProbe": {"httpGet": {"port": 80}},
            "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]}}),
    );
    let c = &p["spec"]["containers"][0];
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
               "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
}

#[test]
fn workload_kinds_as_kube_apiserver_answered() {
    let pod = json!([{"name": "c", "image": "nginx"}]);
    let ss = defaulted(
        StorageId::STATEFULSETS,
        json!({"spec": {"serviceName": "s", "template": template(pod.clone())}}),
    );
    assert_eq!(
        (
            &ss["spec"]["podManagementPolicy"],
            &ss["spec"]["updateStrategy"],
            &ss["spec"]["persistentVolumeClaimRetentionPolicy"],
            &ss["spec"]["replicas"],
            &ss["spec"]["revisionHistoryLimit"]
        ),
        (
            &json!("OrderedReady"),
            &json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "partition": 0}}),
            &json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            &json!(1),
            &json!(10)
        )
    );
    let ds = defaulted(
        StorageId::DAEMONSETS,
        json!({"spec": {"template": template(pod.clone())}}),
    );
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"})
    );
    let job = defaulted(
        StorageId::JOBS,
        json!({"spec": {"template": template(pod.clone())}}),
    );
    let s = &job["spec"];
    assert_eq!(
        [
            &s["backoffLimit"],
            &s["completionMode"],
            &s["completions"],
            &s["manualSelector"],
            &s["parallelism"],
            &s["podReplacementPolicy"],
            &s["suspend"]
        ],
        [
            &json!(6),
            &json!("NonIndexed"),
            &json!(1),
            &json!(false),
            &json!(1),
            &json!("TerminatingOrFailed"),
            &json!(false)
        ]
    );
    assert_eq!(job["metadata"]["labels"], json!({"a": "b"}));
    // TestSetDefaultJob: parallelism alone leaves completions unset
    let job = defaulted(
        StorageId::JOBS,
        json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1, "template": template(pod.clone())}}),
    );
    assert!(job["spec"].get("completions").is_none());
    assert_eq!(job["spec"]["backoffLimit"], i64::from(i32::MAX));
    let cj = defaulted(
        StorageId::CRONJOBS,
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template(pod)}}}}),
    );
    assert_eq!(
        (
            &cj["spec"]["concurrencyPolicy"],
            &cj["spec"]["failedJobsHistoryLimit"],
            &cj["spec"]["successfulJobsHistoryLimit"],
            &cj["spec"]["suspend"]
        ),
        (&json!("Allow"), &json!(1), &json!(3), &json!(false))
    );
    // the job template's pod spec is a PodSpec too
    let ps = &cj["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(ps["dnsPolicy"], "ClusterFirst");
    assert_eq!(ps["containers"][0]["imagePullPolicy"], "Always");
}

#[test]
fn hpa_v2_defaults() {
    let h = defaulted(
        StorageId::HORIZONTALPODAUTOSCALERS,
        json!({"spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}),
    );
    assert_eq!(h["spec"]["minReplicas"], 1);
    assert_eq!(
        h["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
    assert_eq!(
        h["spec"]["behavior"]["scaleDown"],
        json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
               "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
    );
    assert_eq!(h["spec"]["behavior"]["scaleUp"]["policies"][0]["value"], 4);
}

#[test]
fn core_kinds_as_kube_apiserver_answered() {
    let svc = defaulted(
        StorageId::SERVICES,
        json!({"spec": {"ports": [{"port": 80}]}}),
    );
    assert_eq!(
        svc["spec"],
        json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], "type": "ClusterIP",
               "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"})
    );
    let svc = defaulted(
        StorageId::SERVICES,
        json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP"}}),
    );
    assert_eq!(svc["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(svc["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(
        svc["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    let secret = defaulted(StorageId::SECRETS, json!({}));
    assert_eq!(secret["type"], "Opaque");
    let secret = defaulted(
        StorageId::SECRETS,
        json!({"data": {"a": "eA==", "k": "eA=="}, "stringData": {"k": "v"}}),
    );
    assert_eq!(secret["data"], json!({"a": "eA==", "k": "dg=="}));
    assert!(secret.get("stringData").is_none());
    let pvc = defaulted(StorageId::PERSISTENTVOLUMECLAIMS, json!({"spec": {}}));
    assert_eq!(
        (&pvc["spec"]["volumeMode"], &pvc["status"]["phase"]),
        (&json!("Filesystem"), &json!("Pending"))
    );
    let lr = defaulted(
        StorageId::LIMITRANGES,
        json!({"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}}),
    );
    assert_eq!(
        lr["spec"]["limits"][0],
        json!({"type": "Container", "default": {"cpu": "100m"}, "defaultRequest": {"cpu": "100m"}})
    );
    let ep = defaulted(
        StorageId::ENDPOINTS,
        json!({"subsets": [{"ports": [{"port": 80}]}]}),
    );
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
    let rc = defaulted(
        StorageId::REPLICATIONCONTROLLERS,
        json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}),
    );
    assert_eq!(rc["spec"]["selector"], json!({"a": "b"}));
    assert_eq!(rc["metadata"]["labels"], json!({"a": "b"}));
}

#[test]
fn other_groups_as_kube_apiserver_answered() {
    let np = defaulted(
        StorageId::NETWORKPOLICIES,
        json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}}),
    );
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress"]));
    assert_eq!(np["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
    let es = defaulted(
        StorageId::ENDPOINTSLICES,
        json!({"addressType": "IPv4", "ports": [{"port": 80}]}),
    );
    assert_eq!(
        es["ports"][0],
        json!({"name": "", "port": 80, "protocol": "TCP"})
    );
    let sc = defaulted(StorageId::STORAGECLASSES, json!({"provisioner": "x"}));
    assert_eq!(
        (&sc["reclaimPolicy"], &sc["volumeBindingMode"]),
        (&json!("Delete"), &json!("Immediate"))
    );
    let pc = defaulted(StorageId::PRIORITYCLASSES, json!({"value": 10}));
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
    let rb = defaulted(
        StorageId::ROLEBINDINGS,
        json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"},
              {"kind": "ServiceAccount", "name": "s"}]}),
    );
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(rb["subjects"][1].get("apiGroup").is_none());
    let wh = defaulted(
        StorageId::VALIDATINGWEBHOOKCONFIGURATIONS,
        json!({"webhooks": [{"name": "w", "clientConfig": {"service": {"name": "s", "namespace": "n"}},
               "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                          "resources": ["pods"]}]}]}),
    );
    let w = &wh["webhooks"][0];
    assert_eq!(
        (
            &w["failurePolicy"],
            &w["matchPolicy"],
            &w["timeoutSeconds"],
            &w["clientConfig"]["service"]["port"],
            &w["rules"][0]["scope"]
        ),
        (
            &json!("Fail"),
            &json!("Equivalent"),
            &json!(10),
            &json!(443),
            &json!("*")
        )
    );
}
