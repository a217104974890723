//! Namespace sharding for Kubernetes controllers, the pure part: the shard key (64-bit FNV-1a of
//! the namespace, as kube-apiserver hashes it), a consistent-hash [`Ring`] of replicas, KEP-5866
//! shard selectors to list and watch only a replica's shard, and what changes between two rings
//! ([`Assignment`], [`moves`]), and the handover protocol as a pure state machine ([`Handover`],
//! model-checked) with the liveness rule it relies on ([`Liveness`]). No I/O and no Kubernetes
//! dependency: the membership Leases, the fence and the informers that use these live elsewhere
//! (design: `docs/sharding.md`).
//!
//! # Vocabulary
//!
//! One set of words for sharding, defined here and used by every crate that takes part:
//! *sharding* is the scheme, a *shard* is what one member owns, and the wire-level things are
//! named after KEP-5866 (shard key, shard range, shard selector).
//!
//! | word | meaning | here |
//! | --- | --- | --- |
//! | *shard key* | the field an object is sharded by (its namespace, or its UID), hashed with 64-bit FNV-1a into the *hash space* `[0, 2^64)` exactly as kube-apiserver hashes it | [`ShardKey`], [`hash_field`] |
//! | *range* | a half-open part `[start, end)` of the hash space; *ranges*: a sorted, merged set of them | [`ShardRange`], [`ShardRanges`] |
//! | *shard selector* | ranges of a shard key on the wire: the `shardSelector` parameter of a list or watch, echoed in the list's `shardInfo` | [`ShardSelector`]; [`ShardFilter`] (everything, a selector, or nothing); [`ServerFiltering`] |
//! | *member* | one replica taking part, named by its identity, holding a Lease of its own | [`LeaseRecord`], [`Liveness`] |
//! | *ring* | the consistent-hash ring of the live members (virtual nodes on the hash space), identified by its fingerprint | [`Ring`], [`RingFingerprint`] |
//! | *shard* | the ranges a ring gives one member: the namespaces it owns. Its *active* shard is the part it may write now | [`Ring::ranges`], [`Ring::shards`], [`Handover::active`] |
//! | *handover* | the protocol that moves ranges between members so that no range is ever active on two | [`Handover`], [`Event`], [`Action`] |
//!
//! Each layer keeps its sharding code in one place (with every file: `docs/sharding.md`, "Where
//! sharding lives"):
//!
//! | crate | where | what |
//! | --- | --- | --- |
//! | `kcm-sharding` | this crate | the pure parts: key, ranges, selectors, ring, liveness, handover |
//! | `kcm-reflector` | `src/shard/` | listing and watching a shard (`ShardScope`: a selector and the same test on the client), and following a `DynamicShard` as the handover changes it |
//! | `kcm-informer` | — | an informer lists and watches a shard through its `ReflectorConfig` |
//! | `kcm-leaderelection` | `src/member/` | one member: its Lease (`Membership`), its write gate (`ShardGate`), the handover's I/O shell (`ShardMember`) |
//! | `kcm-controller` | `src/namespace_gate.rs` | the workers sync only the keys of the member's active shard (`NamespaceGate`) |
//! | `kcm-manager` | `src/sharding.rs` | `--sharding=namespace`: the member wired into the process |
//!
//! # Example: three replicas, one selector each
//!
//! ```
//! use kcm_sharding::{Ring, ShardFilter, ShardKey};
//!
//! let ring = Ring::new(["kcm-0", "kcm-1", "kcm-2"]);
//! for member in ring.members() {
//!     match ring.filter(member, ShardKey::Namespace) {
//!         // Send as `?shardSelector=<url-encoded>` on list and watch.
//!         ShardFilter::Ranges(selector) => println!(
//!             "{member}: {:.0}% of the hash space in {} ranges: {selector}",
//!             selector.ranges().fraction() * 100.0,
//!             selector.requirements().len(),
//!         ),
//!         ShardFilter::Everything => println!("{member}: everything, no selector"),
//!         ShardFilter::Nothing => println!("{member}: nothing, do not list"),
//!     }
//! }
//!
//! // Every namespace has exactly one owner, and the owner's selector matches it.
//! for ns in ["default", "kube-system", "team-a-prod"] {
//!     let owner = ring.owner_of_namespace(ns).unwrap();
//!     for member in ring.members() {
//!         assert_eq!(ring.filter(member, ShardKey::Namespace).matches(ns), member == owner);
//!     }
//! }
//! ```
//!
//! # Example: the handover when a member joins
//!
//! One member's [`Handover`] state machine (`docs/sharding.md`, "Handover protocol"): views and
//! events in, actions for its I/O shell out, [`Handover::active`] for the write fence.
//!
//! ```
//! use std::num::NonZeroU32;
//! use kcm_sharding::{Action, Event, Handover, Ring, ShardRanges, View, Waiting};
//!
//! let vnodes = NonZeroU32::new(8).unwrap();
//! let one = Ring::with_vnodes(["a"], vnodes);
//! let mut a = Handover::new("a", vnodes);
//!
//! // a's informer shows its own Lease: a applies the ring {a} and acknowledges it.
//! let actions = a.handle(Event::View(View::new(1).with_member("a", true, None)));
//! assert_eq!(actions, [
//!     Action::Relist(ShardRanges::full()),
//!     Action::Acknowledge(Some(one.fingerprint())),
//! ]);
//! // The Lease write returned resourceVersion 2; the barrier waits for a view that contains it.
//! a.handle(Event::LeaseWritten { applied: Some(one.fingerprint()), version: 2 });
//! assert_eq!(a.waiting(), Some(Waiting::OwnAcknowledgement { view: 1, ack: 2 }));
//! let actions = a.handle(Event::View(View::new(2).with_member("a", true, Some(one.fingerprint()))));
//! assert_eq!(actions, [Action::Start { ring: one.fingerprint(), ranges: ShardRanges::full() }]);
//! assert!(a.active().is_empty(), "active only after the fresh list");
//! a.handle(Event::Listed { ring: one.fingerprint() });
//! assert!(a.active().is_full());
//!
//! // b's Lease shows up: a stops taking what b gains at once, and drains it.
//! let two = Ring::with_vnodes(["a", "b"], vnodes);
//! let lost = two.ranges("b");
//! let view = View::new(3)
//!     .with_member("a", true, Some(one.fingerprint()))
//!     .with_member("b", true, None);
//! let actions = a.handle(Event::View(view));
//! assert_eq!(actions, [Action::StopTaking(lost.clone()), Action::WaitDrain(lost.clone())]);
//! assert_eq!(a.active(), &two.ranges("a"), "the write fence refuses b's shard already");
//! // Drained: forget it, list only a's shard, acknowledge {a, b} (b starts after seeing that).
//! let actions = a.handle(Event::Drained(lost.clone()));
//! assert_eq!(actions, [
//!     Action::Forget(lost),
//!     Action::Relist(two.ranges("a")),
//!     Action::Acknowledge(Some(two.fingerprint())),
//! ]);
//! ```
//!
//! # On the wire (kube-apiserver v1.37.2)
//!
//! * **Request**: the query parameter `shardSelector` (`ListOptions.shardSelector`) on a
//!   collection GET, for a list and for a watch alike, e.g.
//!   `GET /api/v1/pods?shardSelector=shardRange%28object.metadata.namespace%2C+%270x0000000000000000%27%2C+%270x8000000000000000%27%29`.
//!   Send it on every page of a paginated list too: the `continue` token does not carry it.
//! * **Response**: a list filtered by the server carries the selector back, re-serialized in the
//!   canonical form [`ShardSelector`]'s `Display` writes, in `ListMeta`:
//!   `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","shardInfo":{"selector":"shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"}},"items":[…]}`.
//!   Sharded lists omit `remainingItemCount`. Watch events carry no `shardInfo`, nor does the
//!   initial-events-end bookmark of a streaming list (`sendInitialEvents=true`): only a plain list
//!   tells whether the server filtered ([`ShardSelector::check_echo`]).
//! * **Gate**: `ShardedListAndWatch`, alpha since v1.36, off by default in v1.37.2. With the gate
//!   off, or on a server older than v1.36, the parameter is ignored silently: the list holds every
//!   object and has no `shardInfo`. With it on, a malformed selector fails the request (a plain
//!   error, so HTTP 500 rather than 400). Filter on the client as well in any case: behind a load
//!   balancer the watch may reach another API server than the list that was checked, and during
//!   an upgrade not all of them have the gate. [`ShardFilter::matches`] is the server's exact test.
//! * **Resources**: every resource served by the API server's generic registry store, i.e. all
//!   built-in resources and custom resources (upstream's integration test lists each resource
//!   with the `list` verb, sharded two ways); aggregated APIs only if their own server implements
//!   it. Fields: `object.metadata.namespace` and `object.metadata.uid` only.
//! * **Rust types**: k8s-openapi 0.29 has `ListMeta::shard_info: Option<ShardInfo>` (with
//!   `selector: String`) only under its `v1_36` and `v1_37` features, and no `ListOptions` (request
//!   options live in kube-core, whose `ListParams`/`WatchParams` in 5.0 have no shard selector).
//!   So a client appends `shardSelector` to the query string itself, and reads
//!   `metadata.shardInfo.selector` from the list either as `ObjectList::metadata.shard_info`
//!   (binaries on `v1_36`+; a library can gate that code with `k8s_openapi::k8s_if_ge_1_36!`) or
//!   from the raw JSON with a two-field serde struct, which works under any version feature.
//!
//! # Limits
//!
//! * **A namespace is never split**: a Deployment, its ReplicaSets and their Pods always land on
//!   the same replica, and so does all of one namespace's load. One huge namespace is one hot
//!   shard; more replicas do not help it. Export objects per replica to see hot shards.
//! * **Cluster-scoped objects** have the empty namespace: they all hash to
//!   [`FNV_OFFSET_BASIS`] and land on one replica. Do not shard informers of cluster-scoped types
//!   by namespace.
//! * **Similar names cluster**: FNV-1a mixes the last bytes poorly; names differing only in their
//!   last character (`ns-1` … `ns-9`) hash within 2^48 of each other and nearly always share an
//!   owner. The server fixes the hash, so the ring cannot undo this; it shows as extra imbalance
//!   for sequentially named namespaces (README, measurements).
//! * **Selector size**: each range costs about 85 bytes (≈105 URL-encoded); the server accepts
//!   up to 100,000 code points. With [`DEFAULT_VNODES`] a member's selector has at most about 64
//!   ranges (≈5.5 KB), whatever the number of members.
//!
//! The parser ([`ShardSelector::parse`]) reads the CEL subset anyone writes and rejects the rest
//! of what cel-go would accept (string escapes, triple quotes, backquoted identifiers,
//! parenthesised arguments, receiver-style calls); whatever it accepts, the server accepts with
//! the same ranges.

mod assignment;
mod handover;
mod hash;
mod liveness;
mod parse;
mod range;
mod ring;
mod selector;

pub use assignment::{Assignment, Change, Move, moves};
pub use handover::{Action, Event, Handover, MemberLease, Phase, View, Waiting};
pub use hash::{FNV_OFFSET_BASIS, FNV_PRIME, fnv1a_64, hash_field, hash_field_hex};
pub use liveness::{LeaseRecord, Liveness};
pub use parse::{MAX_GROUPING_DEPTH, MAX_SELECTOR_CHARS, ParseError};
pub use range::{HASH_SPACE_END, InvalidRange, ShardRange, ShardRanges};
pub use ring::{DEFAULT_VNODES, InvalidFingerprint, Ring, RingFingerprint};
pub use selector::{ServerFiltering, ShardFilter, ShardKey, ShardSelector};
