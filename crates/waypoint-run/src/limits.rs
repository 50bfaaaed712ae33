//! The hard caps every run lives under, and the meter that enforces them.
//!
//! Each cap is checked *before* the work it would pay for: a call that would exceed
//! `max_usd` at its catalog price is not made. The meter starts from the journal's
//! totals on resume, so a crash cannot reset a budget.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use waypoint_protocol::LimitHit;

/// Limits of one run. Every field has a bounded default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Plan steps started, over every plan the run tries.
    pub max_steps: u32,
    /// Adapter calls (a pipeline step makes one per tool).
    pub max_tool_calls: u32,
    /// Wall time of the whole run, resumes included.
    pub max_wall_ms: u64,
    /// Spend, at catalog prices and model prices.
    pub max_usd: f64,
    /// New plans after a failure (K) before the run asks for a human.
    pub max_replans: u32,
    /// Longest one call may take.
    pub tool_timeout_ms: u64,
    /// Steps of one group that run at once.
    pub concurrency: usize,
    /// Largest output kept from one call; longer output fails the call.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 32,
            max_tool_calls: 64,
            max_wall_ms: 10 * 60 * 1000,
            max_usd: 1.0,
            max_replans: 2,
            tool_timeout_ms: 60_000,
            concurrency: 4,
            max_output_bytes: 1024 * 1024,
        }
    }
}

impl Limits {
    pub fn max_wall(&self) -> Duration {
        Duration::from_millis(self.max_wall_ms)
    }

    pub fn tool_timeout(&self) -> Duration {
        Duration::from_millis(self.tool_timeout_ms)
    }

    /// Checks that the limits make sense together; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.concurrency == 0 {
            return Err("concurrency must be at least 1".into());
        }
        if !self.max_usd.is_finite() || self.max_usd < 0.0 {
            return Err(format!(
                "max_usd must be a number ≥ 0, not {}",
                self.max_usd
            ));
        }
        if self.tool_timeout_ms == 0 {
            return Err("tool_timeout must be more than 0".into());
        }
        Ok(())
    }
}

/// Which cap a run hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Steps,
    ToolCalls,
    Wall,
    Usd,
    Replans,
}

impl Limit {
    /// The name used in reports, config keys and flags (`--max-steps`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Steps => "max_steps",
            Self::ToolCalls => "max_tool_calls",
            Self::Wall => "max_wall_ms",
            Self::Usd => "max_usd",
            Self::Replans => "max_replans",
        }
    }

    pub fn hit(self, limit: f64, used: f64) -> LimitHit {
        LimitHit {
            name: self.name().to_string(),
            limit,
            used,
        }
    }
}

/// What a run has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Used {
    pub steps: u32,
    pub tool_calls: u32,
    pub usd: f64,
    /// Wall time spent by earlier processes of this run (before a resume).
    pub earlier_wall_ms: u64,
}

/// Counts use against [`Limits`]. Not shared across threads on its own; the executor
/// keeps it behind a mutex so concurrent steps admit one at a time.
#[derive(Debug, Clone)]
pub struct Meter {
    limits: Limits,
    used: Used,
}

impl Meter {
    pub fn new(limits: Limits, used: Used) -> Self {
        Self { limits, used }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn used(&self) -> Used {
        self.used
    }

    /// Admits one more plan step, or names the cap it would break.
    pub fn admit_step(&mut self) -> Result<(), LimitHit> {
        let next = self.used.steps + 1;
        if next > self.limits.max_steps {
            return Err(Limit::Steps.hit(f64::from(self.limits.max_steps), f64::from(next)));
        }
        self.used.steps = next;
        Ok(())
    }

    /// Admits one more adapter call priced at `usd`, or names the cap it would break.
    pub fn admit_call(&mut self, usd: f64) -> Result<(), LimitHit> {
        let calls = self.used.tool_calls + 1;
        if calls > self.limits.max_tool_calls {
            return Err(
                Limit::ToolCalls.hit(f64::from(self.limits.max_tool_calls), f64::from(calls))
            );
        }
        let spend = self.used.usd + usd.max(0.0);
        if spend > self.limits.max_usd + f64::EPSILON {
            return Err(Limit::Usd.hit(self.limits.max_usd, spend));
        }
        self.used.tool_calls = calls;
        self.used.usd = spend;
        Ok(())
    }

    /// Books what a call really cost beyond its catalog price (model tokens).
    pub fn charge(&mut self, extra_usd: f64) {
        self.used.usd += extra_usd.max(0.0);
    }

    /// Whether the spend so far is over the cap (after a model call cost more than its
    /// price said).
    pub fn over_budget(&self) -> Option<LimitHit> {
        (self.used.usd > self.limits.max_usd + f64::EPSILON)
            .then(|| Limit::Usd.hit(self.limits.max_usd, self.used.usd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_admitted_up_to_the_cap() {
        let mut m = Meter::new(
            Limits {
                max_steps: 2,
                ..Limits::default()
            },
            Used::default(),
        );
        assert!(m.admit_step().is_ok());
        assert!(m.admit_step().is_ok());
        let hit = m.admit_step().unwrap_err();
        assert_eq!(hit.name, "max_steps");
        assert!((hit.used - 3.0).abs() < f64::EPSILON);
        assert_eq!(m.used().steps, 2);
    }

    #[test]
    fn a_call_over_budget_is_refused_before_it_is_made() {
        let mut m = Meter::new(
            Limits {
                max_usd: 0.01,
                ..Limits::default()
            },
            Used::default(),
        );
        assert!(m.admit_call(0.006).is_ok());
        let hit = m.admit_call(0.006).unwrap_err();
        assert_eq!(hit.name, "max_usd");
        assert_eq!(m.used().tool_calls, 1, "the refused call is not counted");
    }

    #[test]
    fn a_resumed_meter_starts_from_what_was_used() {
        let mut m = Meter::new(
            Limits {
                max_tool_calls: 3,
                ..Limits::default()
            },
            Used {
                tool_calls: 3,
                ..Used::default()
            },
        );
        assert_eq!(m.admit_call(0.0).unwrap_err().name, "max_tool_calls");
    }

    #[test]
    fn zero_concurrency_is_rejected_with_its_name() {
        let l = Limits {
            concurrency: 0,
            ..Limits::default()
        };
        assert!(l.check().unwrap_err().contains("concurrency"));
    }
}
