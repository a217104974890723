//! The client-go `EventCorrelator` (`tools/record/events_cache.go`): decides,
//! for each event about to be written, whether to aggregate it with similar
//! events, whether it repeats an earlier event (→ PATCH of `count`,
//! `lastTimestamp`, `message`), and whether the spam filter drops it.
//!
//! Pure logic over a [`Clock`](crate::clock::Clock); the I/O lives in [`crate::event_recorder`].
//!
//! Per event, in order:
//! 1. **Aggregation**: events equal in everything but the message (source,
//!    involved object, type, reason, reporting controller/instance) are grouped;
//!    when a group has seen [`CorrelatorOptions::max_events`] (10) distinct
//!    messages within [`CorrelatorOptions::max_interval`] (600 s) of each other, the
//!    event is replaced by one whose message is prefixed
//!    `"(combined from similar events): "` and whose identity is the group.
//! 2. **Dedup**: an event identical to an earlier one (or the same aggregate)
//!    reuses its name and `firstTimestamp` and gets `count + 1`, plus a patch.
//! 3. **Spam filter**: a token bucket per source + involved object (burst 25,
//!    refilling one token per 5 minutes); no token → skip.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use parking_lot::Mutex;
use serde_json::json;

use crate::clock::{RealClock, SharedClock};
use crate::lru::Lru;

/// Prefix of an aggregated event's message.
pub const COMBINED_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// Tuning of the correlator (client-go defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelatorOptions {
    /// Entries in each LRU cache (4096).
    pub lru_cache_size: usize,
    /// Spam-filter bucket size per source+object (25).
    pub burst: u32,
    /// Spam-filter refill rate in events per second (1/300).
    pub qps: f64,
    /// Distinct messages in a group before aggregation kicks in (10).
    pub max_events: usize,
    /// A group is reset when its previous event is older than this (600 s).
    pub max_interval: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        Self {
            lru_cache_size: 4096,
            burst: 25,
            qps: 1.0 / 300.0,
            max_events: 10,
            max_interval: Duration::from_secs(600),
        }
    }
}

/// What to do with one event.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelateResult {
    /// The event to write (possibly aggregated, possibly with count > 1).
    pub event: Event,
    /// For a repeat (`event.count > 1`): the strategic-merge patch to send.
    pub patch: Option<serde_json::Value>,
    /// True when the spam filter dropped the event: write nothing.
    pub skip: bool,
}

#[derive(Debug, Default)]
struct AggregateRecord {
    local_keys: HashSet<String>,
    last_timestamp: Option<Timestamp>,
}

#[derive(Debug, Clone)]
struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: Option<String>,
    resource_version: Option<String>,
}

#[derive(Debug)]
struct TokenBucket {
    tokens: f64,
    last: Timestamp,
}

/// The correlator; share it between the recording task and nothing else.
#[derive(Debug)]
pub struct EventCorrelator {
    opts: CorrelatorOptions,
    clock: SharedClock,
    aggregates: Mutex<Lru<String, AggregateRecord>>,
    logs: Mutex<Lru<String, EventLog>>,
    spam: Mutex<Lru<String, TokenBucket>>,
}

impl Default for EventCorrelator {
    fn default() -> Self {
        Self::new(CorrelatorOptions::default(), Arc::new(RealClock))
    }
}

fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or_default()
}

/// Source + involved object (no fieldPath), the spam-filter key.
fn spam_key(e: &Event) -> String {
    let src = e.source.clone().unwrap_or_default();
    let o = &e.involved_object;
    [
        s(&src.component),
        s(&src.host),
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.uid),
        s(&o.api_version),
    ]
    .concat()
}

/// Everything identifying an event including its message (dedup key).
fn event_key(e: &Event) -> String {
    let src = e.source.clone().unwrap_or_default();
    let o = &e.involved_object;
    [
        s(&src.component),
        s(&src.host),
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.field_path),
        s(&o.uid),
        s(&o.api_version),
        s(&e.type_),
        s(&e.reason),
        s(&e.message),
    ]
    .concat()
}

/// (group key, message) for aggregation (`EventAggregatorByReasonFunc`).
fn aggregate_key(e: &Event) -> (String, String) {
    let src = e.source.clone().unwrap_or_default();
    let o = &e.involved_object;
    let key = [
        s(&src.component),
        s(&src.host),
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.uid),
        s(&o.api_version),
        s(&e.type_),
        s(&e.reason),
        s(&e.reporting_component),
        s(&e.reporting_instance),
    ]
    .concat();
    (key, s(&e.message).to_string())
}

impl EventCorrelator {
    /// A correlator with the given options and clock.
    pub fn new(opts: CorrelatorOptions, clock: SharedClock) -> Self {
        let n = opts.lru_cache_size;
        Self {
            opts,
            clock,
            aggregates: Mutex::new(Lru::new(n)),
            logs: Mutex::new(Lru::new(n)),
            spam: Mutex::new(Lru::new(n)),
        }
    }

    /// Runs aggregation, dedup and the spam filter for `event`.
    pub fn correlate(&self, event: Event) -> CorrelateResult {
        let (event, key) = self.aggregate(event);
        let (event, patch) = self.observe(event, &key);
        let skip = self.filter(&event);
        CorrelateResult { event, patch, skip }
    }

    /// Records the server's copy of a written event (its name and
    /// resourceVersion are reused by later repeats).
    pub fn update_state(&self, event: &Event) {
        self.logs.lock().insert(
            event_key(event),
            EventLog {
                count: event.count.unwrap_or(1),
                first_timestamp: event.first_timestamp.clone(),
                name: event.metadata.name.clone(),
                resource_version: event.metadata.resource_version.clone(),
            },
        );
    }

    fn aggregate(&self, event: Event) -> (Event, String) {
        let now = self.clock.now();
        let ekey = event_key(&event);
        let (akey, local) = aggregate_key(&event);
        let max_interval =
            SignedDuration::try_from(self.opts.max_interval).unwrap_or(SignedDuration::MAX);

        let mut cache = self.aggregates.lock();
        let mut record = match cache.get_mut(&akey) {
            Some(r) => std::mem::take(r),
            None => AggregateRecord::default(),
        };
        let stale = record
            .last_timestamp
            .is_none_or(|last| now.duration_since(last) > max_interval);
        if stale {
            record = AggregateRecord::default();
        }
        record.local_keys.insert(local);
        record.last_timestamp = Some(now);
        if record.local_keys.len() < self.opts.max_events {
            cache.insert(akey, record);
            return (event, ekey);
        }
        // Keep the set from growing past the limit.
        if let Some(any) = record.local_keys.iter().next().cloned() {
            record.local_keys.remove(&any);
        }
        cache.insert(akey.clone(), record);

        let t = Time(now);
        let involved_name = s(&event.involved_object.name).to_string();
        let aggregated = Event {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(format!("{involved_name}.{:x}", now.as_nanosecond())),
                namespace: event.metadata.namespace.clone(),
                ..Default::default()
            },
            count: Some(1),
            first_timestamp: Some(t.clone()),
            last_timestamp: Some(t),
            involved_object: event.involved_object.clone(),
            message: Some(format!("{COMBINED_MESSAGE_PREFIX}{}", s(&event.message))),
            type_: event.type_.clone(),
            reason: event.reason.clone(),
            source: event.source.clone(),
            ..Default::default()
        };
        (aggregated, akey)
    }

    fn observe(&self, mut event: Event, key: &str) -> (Event, Option<serde_json::Value>) {
        let mut logs = self.logs.lock();
        let mut patch = None;
        if let Some(last) = logs.get_mut(&key.to_string()).cloned()
            && last.count > 0
        {
            event.metadata.name = last.name;
            event.metadata.resource_version = last.resource_version;
            event.first_timestamp = last.first_timestamp;
            let count = last.count.saturating_add(1);
            event.count = Some(count);
            // The two-way merge patch against a copy with count 0, lastTimestamp
            // at the Unix epoch and an empty message: exactly these three fields.
            let mut p = serde_json::Map::new();
            p.insert("count".into(), json!(count));
            if let Some(lt) = &event.last_timestamp {
                p.insert(
                    "lastTimestamp".into(),
                    serde_json::to_value(lt).unwrap_or(serde_json::Value::Null),
                );
            }
            if let Some(m) = event.message.as_ref().filter(|m| !m.is_empty()) {
                p.insert("message".into(), json!(m));
            }
            patch = Some(serde_json::Value::Object(p));
        }
        logs.insert(
            key.to_string(),
            EventLog {
                count: event.count.unwrap_or(1),
                first_timestamp: event.first_timestamp.clone(),
                name: event.metadata.name.clone(),
                resource_version: event.metadata.resource_version.clone(),
            },
        );
        (event, patch)
    }

    /// True if the event must be dropped (no token left for its source+object).
    fn filter(&self, event: &Event) -> bool {
        let now = self.clock.now();
        let key = spam_key(event);
        let burst = f64::from(self.opts.burst);
        let mut cache = self.spam.lock();
        let mut bucket = match cache.get_mut(&key) {
            Some(b) => TokenBucket {
                tokens: b.tokens,
                last: b.last,
            },
            None => TokenBucket {
                tokens: burst,
                last: now,
            },
        };
        let elapsed = now.duration_since(bucket.last).as_secs_f64().max(0.0);
        bucket.tokens = (bucket.tokens + elapsed * self.opts.qps).min(burst);
        bucket.last = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        cache.insert(key, bucket);
        !allowed
    }
}

#[cfg(test)]
#[path = "event_correlator_tests.rs"]
mod tests;
