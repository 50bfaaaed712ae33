//! Counters for `/metrics`, in the Prometheus text format.
//!
//! A handful of series a person running the server actually watches: requests by route
//! and status, latency, refusals by reason, runs claimed and finished, catalog loads and
//! resident memory. Hand-written: the format is a few lines and a client library would
//! cost more to build than everything here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0,
];

#[derive(Default)]
struct Latency {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Why a request was turned away before a handler saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    Auth,
    Host,
    Busy,
    Timeout,
    /// A cross-origin (browser) request to the API: the CSRF guard.
    Origin,
    /// A JSON API body not declared `application/json`.
    MediaType,
    /// One caller already has its share of the server in flight.
    CallerBusy,
    /// One caller sent more than `max_rate_per_caller` requests a second.
    RateLimited,
}

impl Refusal {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Host => "host",
            Self::Busy => "busy",
            Self::Timeout => "timeout",
            Self::Origin => "origin",
            Self::MediaType => "media_type",
            Self::CallerBusy => "caller_busy",
            Self::RateLimited => "rate_limited",
        }
    }
}

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    latency: Mutex<BTreeMap<&'static str, Latency>>,
    refused: Mutex<BTreeMap<Refusal, u64>>,
    pub in_flight: AtomicI64,
    pub runs_submitted: AtomicU64,
    pub runs_claimed: AtomicU64,
    finished: Mutex<BTreeMap<String, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Metrics {
    /// Counts one answered request; `route` is the route's pattern, not the path.
    pub fn observe(&self, route: &'static str, status: u16, took: Duration) {
        *lock(&self.requests).entry((route, status)).or_default() += 1;
        let secs = took.as_secs_f64();
        let mut lat = lock(&self.latency);
        let l = lat.entry(route).or_default();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                l.counts[i] += 1;
            }
        }
        l.count += 1;
        l.sum += secs;
    }

    pub fn refuse(&self, why: Refusal) {
        *lock(&self.refused).entry(why).or_default() += 1;
    }

    pub fn run_finished(&self, status: &str) {
        *lock(&self.finished).entry(status.to_string()).or_default() += 1;
    }

    /// The text `/metrics` answers; `extra` are gauges the caller knows (catalog size…).
    pub fn render(&self, extra: &[(&str, &str, f64)]) -> String {
        let mut s = String::new();
        s.push_str("# HELP waypoint_http_requests_total Requests answered, by route and status.\n# TYPE waypoint_http_requests_total counter\n");
        for ((route, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                s,
                "waypoint_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        s.push_str("# HELP waypoint_http_request_duration_seconds Time to answer, by route.\n# TYPE waypoint_http_request_duration_seconds histogram\n");
        for (route, l) in lock(&self.latency).iter() {
            for (bound, n) in BUCKETS.iter().zip(l.counts) {
                let _ = writeln!(
                    s,
                    "waypoint_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                s,
                "waypoint_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}\nwaypoint_http_request_duration_seconds_sum{{route=\"{route}\"}} {}\nwaypoint_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                l.count, l.sum, l.count
            );
        }
        s.push_str("# HELP waypoint_http_refused_total Requests turned away before a handler, by reason.\n# TYPE waypoint_http_refused_total counter\n");
        for (why, n) in lock(&self.refused).iter() {
            let _ = writeln!(
                s,
                "waypoint_http_refused_total{{reason=\"{}\"}} {n}",
                why.as_str()
            );
        }
        let _ = writeln!(
            s,
            "# HELP waypoint_http_in_flight Requests being answered now.\n# TYPE waypoint_http_in_flight gauge\nwaypoint_http_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            s,
            "# HELP waypoint_runs_submitted_total Runs queued through this instance.\n# TYPE waypoint_runs_submitted_total counter\nwaypoint_runs_submitted_total {}",
            self.runs_submitted.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            s,
            "# HELP waypoint_runs_claimed_total Queued runs this instance claimed.\n# TYPE waypoint_runs_claimed_total counter\nwaypoint_runs_claimed_total {}",
            self.runs_claimed.load(Ordering::Relaxed)
        );
        s.push_str("# HELP waypoint_runs_finished_total Runs this instance drove to a status.\n# TYPE waypoint_runs_finished_total counter\n");
        for (status, n) in lock(&self.finished).iter() {
            let _ = writeln!(s, "waypoint_runs_finished_total{{status=\"{status}\"}} {n}");
        }
        for (name, help, value) in extra {
            let _ = writeln!(
                s,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        if let Some(rss) = resident_bytes() {
            let _ = writeln!(
                s,
                "# HELP process_resident_memory_bytes Resident memory of this process.\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {rss}"
            );
        }
        s
    }
}

/// Resident set size from `/proc/self/statm` (Linux; `None` elsewhere).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_has_counters_and_cumulative_buckets() {
        let m = Metrics::default();
        m.observe("/v1/plan", 200, Duration::from_micros(300));
        m.observe("/v1/plan", 200, Duration::from_millis(20));
        m.observe("/v1/plan", 401, Duration::from_micros(10));
        m.refuse(Refusal::Auth);
        m.run_finished("ok");
        let text = m.render(&[("waypoint_catalog_tools", "Tools.", 3.0)]);
        assert!(text.contains("waypoint_http_requests_total{route=\"/v1/plan\",status=\"200\"} 2"));
        assert!(text.contains("waypoint_http_requests_total{route=\"/v1/plan\",status=\"401\"} 1"));
        assert!(text.contains(
            "waypoint_http_request_duration_seconds_bucket{route=\"/v1/plan\",le=\"0.0005\"} 2"
        ));
        assert!(text.contains(
            "waypoint_http_request_duration_seconds_bucket{route=\"/v1/plan\",le=\"+Inf\"} 3"
        ));
        assert!(text.contains("waypoint_http_refused_total{reason=\"auth\"} 1"));
        assert!(text.contains("waypoint_runs_finished_total{status=\"ok\"} 1"));
        assert!(text.contains("waypoint_catalog_tools 3"));
    }
}
