//! Sharded members over real HTTP against the embedded test cluster: members form a ring and
//! split the namespace hash space between them, never both active (with open fences) on one
//! hash; a member that stops (crash: no leave) has its shard taken over after its Lease expires;
//! a member that leaves hands its shard over at once; the informer side of each member follows
//! its shard.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kcm_leaderelection::{LeaderElectionConfig, MembershipConfig, OnActivate, ShardMember};
use kcm_sharding::{ShardRanges, hash_field};
use kcm_testenv::{TestEnv, TestEnvConfig};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

fn member(client: &kube::Client, identity: &str) -> Arc<ShardMember> {
    let config = MembershipConfig {
        timing: LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(300),
            ..Default::default()
        },
        ..MembershipConfig::new("default", "shards", identity)
    };
    let vnodes = std::num::NonZeroU32::new(16).expect("non-zero");
    Arc::new(ShardMember::new(client.clone(), config, vnodes).expect("valid member"))
}

struct Running {
    member: Arc<ShardMember>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    activated: Arc<Mutex<ShardRanges>>,
}

fn start(member: Arc<ShardMember>) -> Running {
    let stop = CancellationToken::new();
    let activated = Arc::new(Mutex::new(ShardRanges::new()));
    let seen = activated.clone();
    let on_activate: OnActivate = Arc::new(move |r: &ShardRanges| {
        let mut all = seen.lock();
        *all = all.union(r);
    });
    let task = tokio::spawn({
        let member = member.clone();
        let stop = stop.clone();
        async move { member.run(on_activate, stop).await }
    });
    Running {
        member,
        stop,
        task,
        activated,
    }
}

/// What a member may write now: its active shard while its fence is open.
fn writable(m: &ShardMember) -> ShardRanges {
    if m.fence().is_open() {
        m.gate().active()
    } else {
        ShardRanges::new()
    }
}

/// Polls until `done`, checking at every step that no hash is writable by two members.
async fn settle(members: &[&ShardMember], done: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for (i, a) in members.iter().enumerate() {
            for b in &members[i + 1..] {
                let both = writable(a).intersection(&writable(b));
                assert!(
                    both.is_empty(),
                    "{} and {} both active on {both}",
                    a.identity(),
                    b.identity()
                );
            }
        }
        if done() {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn members_split_the_space_hand_over_on_crash_and_on_leave() {
    let env = TestEnv::start(TestEnvConfig::default())
        .await
        .expect("testenv");
    let client = env.client();
    let a = start(member(&client, "host-a_1"));
    settle(
        &[&a.member],
        || a.member.gate().active().is_full(),
        "a alone owns everything",
    )
    .await;
    assert!(
        a.activated.lock().is_full(),
        "on_activate saw the whole space"
    );
    assert!(a.member.status().borrow().waiting.is_none());

    // b joins: the space is split, never shared.
    let b = start(member(&client, "host-b_2"));
    settle(
        &[&a.member, &b.member],
        || {
            let (sa, sb) = (a.member.gate().active(), b.member.gate().active());
            !sa.is_empty() && !sb.is_empty() && sa.union(&sb).is_full()
        },
        "a and b split the space",
    )
    .await;
    let status = b.member.status().borrow().clone();
    assert_eq!(status.ring_members, ["host-a_1", "host-b_2"]);
    assert!((status.active_fraction - status.shard_fraction).abs() < 1e-9);
    let owner_of = |ns: &str| {
        let h = hash_field(ns);
        [&a, &b]
            .iter()
            .filter(|m| m.member.gate().active().contains(h))
            .count()
    };
    for ns in ["default", "kube-system", "team-a", "team-b"] {
        assert_eq!(owner_of(ns), 1, "{ns} has exactly one owner");
    }

    // c joins, then a crashes (stops renewing, never leaves): b and c take a's shard over
    // once a's Lease expired, and a's own fence closed before.
    let c = start(member(&client, "host-c_3"));
    settle(
        &[&a.member, &b.member, &c.member],
        || {
            [&a, &b, &c]
                .iter()
                .all(|m| !m.member.gate().active().is_empty())
                && a.member
                    .gate()
                    .active()
                    .union(&b.member.gate().active())
                    .union(&c.member.gate().active())
                    .is_full()
        },
        "three members",
    )
    .await;
    a.stop.cancel();
    a.task.await.expect("a stops");
    let crashed = Instant::now();
    settle(
        &[&a.member, &b.member, &c.member],
        || {
            b.member
                .gate()
                .active()
                .union(&c.member.gate().active())
                .is_full()
        },
        "b and c take a's shard over",
    )
    .await;
    let takeover = crashed.elapsed();
    assert!(
        takeover >= Duration::from_secs(2),
        "not before a's Lease expired: {takeover:?}"
    );
    assert!(!a.member.fence().is_open(), "a's fence closed");

    // c leaves gracefully: b holds everything soon after, without waiting for an expiry.
    c.stop.cancel();
    c.task.await.expect("c stops");
    c.member.leave().await.expect("c leaves");
    let left = Instant::now();
    settle(
        &[&b.member, &c.member],
        || b.member.gate().active().is_full(),
        "b alone after c left",
    )
    .await;
    assert!(
        left.elapsed() < Duration::from_secs(2),
        "{:?}",
        left.elapsed()
    );
    let leases: kube::Api<Lease> = kube::Api::namespaced(client.clone(), "default");
    assert!(
        leases
            .get_opt("shards-host-c-3")
            .await
            .expect("get")
            .is_none(),
        "c's Lease is deleted"
    );
    b.stop.cancel();
    b.task.await.expect("b stops");
}
