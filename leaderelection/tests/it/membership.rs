//! Membership Leases over real HTTP against the embedded test cluster: members see each other,
//! their acknowledged rings, a member that stops renewing goes out of the others' view only after
//! its own fence closed, and a member that leaves deletes its Lease.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kcm_leaderelection::{
    APPLIED_RING_ANNOTATION, LeaderElectionConfig, Membership, MembershipConfig, RING_LABEL,
};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, ListParams};

fn member(client: &kube::Client, identity: &str) -> Membership {
    let config = MembershipConfig {
        timing: LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(300),
            ..Default::default()
        },
        ..MembershipConfig::new("default", "shards", identity)
    };
    Membership::new(client.clone(), config).expect("valid member")
}

#[tokio::test]
async fn members_see_each_other_and_judge_a_silent_member_gone_after_its_fence_closed() {
    let env = TestEnv::start(TestEnvConfig::default())
        .await
        .expect("testenv");
    let client = env.client();
    let a = member(&client, "host-a_1");
    let b = member(&client, "host-b_2");
    assert!(
        a.fence().check().is_err(),
        "closed before the first renewal"
    );
    a.set_applied_ring(Some("00000000000000aa".into()));
    a.renew().await.expect("a renews");
    b.renew().await.expect("b renews");
    assert!(a.fence().check().is_ok() && b.fence().check().is_ok());

    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let listed = leases
        .list(&ListParams::default().labels(&format!("{RING_LABEL}=shards")))
        .await
        .expect("list");
    let names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|l| l.metadata.name.clone())
        .collect();
    assert_eq!(names, ["shards-host-a-1", "shards-host-b-2"]);
    let a_lease = &listed.items[0];
    assert_eq!(
        a_lease
            .metadata
            .annotations
            .as_ref()
            .and_then(|m| m.get(APPLIED_RING_ANNOTATION))
            .map(String::as_str),
        Some("00000000000000aa")
    );

    let view = b.observe().await.expect("observe");
    let live: Vec<_> = view.live().map(|m| m.identity.as_str()).collect();
    assert_eq!(live, ["host-a_1", "host-b_2"]);
    assert_eq!(
        view.members["host-a_1"].applied_ring.as_deref(),
        Some("00000000000000aa")
    );
    assert_eq!(view.members["host-b_2"].applied_ring, None);
    assert!(!view.version.is_empty());

    // a stops renewing (paused); b keeps renewing and observing.
    let silent_since = tokio::time::Instant::now();
    let mut a_closed_at = None;
    let gone_at = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        b.renew().await.expect("b renews");
        if a_closed_at.is_none() && !a.fence().is_open() {
            a_closed_at = Some(silent_since.elapsed());
        }
        let view = b.observe().await.expect("observe");
        if !view.members["host-a_1"].live {
            break silent_since.elapsed();
        }
        assert!(
            silent_since.elapsed() < Duration::from_secs(10),
            "a never went out of b's view"
        );
    };
    let a_closed_at = a_closed_at.expect("a's fence closed before b judged it gone");
    assert!(
        a_closed_at < gone_at,
        "a's fence closed at {a_closed_at:?}, b judged it gone at {gone_at:?}"
    );
    // Judged by b's clock from when b saw a's last change: a lease duration at least.
    assert!(gone_at >= Duration::from_millis(1900), "{gone_at:?}");

    // a comes back: one renewal makes it live again in b's view.
    a.renew().await.expect("a renews again");
    let view = b.observe().await.expect("observe");
    assert!(view.members["host-a_1"].live);

    // a leaves: its fence closes and its Lease is gone from the view.
    a.leave().await.expect("leave");
    assert!(a.fence().check().is_err());
    let view = b.observe().await.expect("observe");
    assert!(!view.members.contains_key("host-a_1"));
    assert!(view.members["host-b_2"].live);
}
