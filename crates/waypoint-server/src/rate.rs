//! Per-caller request rates: a token bucket per caller, so one caller's flood is refused
//! with 429 before it costs the others anything (docs/server.md, `max_rate_per_caller`).
//!
//! Concurrency limits alone let a caller with fast requests take a whole core; a rate
//! limit bounds what it gets over time. A bucket holds one second's worth of requests
//! and refills continuously, so a burst up to the rate passes and a steady stream above
//! it is refused in proportion.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Every caller's bucket at one rate.
#[derive(Debug)]
pub struct Buckets {
    per_second: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Buckets {
    /// Buckets for `per_second` requests a second (at least 1).
    pub fn new(per_second: u32) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// The sustained rate, in requests a second.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// Takes one request from `caller`'s bucket at `now`, or says how long until one is
    /// there. Callers are the configured ones (or the one local caller), so the map
    /// stays small.
    pub fn take(&self, caller: &str, now: Instant) -> Result<(), Duration> {
        let mut map = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let full = Bucket {
            tokens: self.per_second,
            at: now,
        };
        let bucket = map.entry(caller.to_string()).or_insert(full);
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.per_second);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_one_seconds_worth_passes_and_the_next_waits_for_its_token() {
        let b = Buckets::new(4);
        let t0 = Instant::now();
        for _ in 0..4 {
            assert!(b.take("alice", t0).is_ok());
        }
        let wait = b.take("alice", t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(250));
        // Another caller has its own bucket.
        assert!(b.take("bob", t0).is_ok());
        // A quarter second later one token is back, and only one.
        let t1 = t0 + Duration::from_millis(250);
        assert!(b.take("alice", t1).is_ok());
        assert!(b.take("alice", t1).is_err());
    }

    #[test]
    fn an_idle_bucket_fills_to_one_seconds_worth_and_no_more() {
        let b = Buckets::new(2);
        let t0 = Instant::now();
        assert!(b.take("c", t0).is_ok());
        let later = t0 + Duration::from_mins(1);
        assert!(b.take("c", later).is_ok());
        assert!(b.take("c", later).is_ok());
        assert!(
            b.take("c", later).is_err(),
            "the bucket holds one second's worth"
        );
    }
}
