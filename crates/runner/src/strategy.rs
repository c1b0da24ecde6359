//! When the runner checkpoints: every step, every N steps, or both with modifiers.

use std::fmt;
use std::str::FromStr;

/// The base cadence of checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cadence {
    /// After every step (event-driven).
    EveryStep,
    /// After every N-th step (interval).
    EveryN(u64),
}

/// A checkpoint strategy: a cadence plus modifiers.
///
/// Written as `every_step`, `every_n:N` (or `every_n` for N=3), or `hybrid[:N]` (every N steps
/// plus after tools), followed by any of `,after_tools` and `,before_llm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategy {
    pub cadence: Cadence,
    /// Also checkpoint after a step that executed a tool (not one replayed from the journal).
    pub after_tools: bool,
    /// Also checkpoint the state a step starts from, right before its first LLM call.
    pub before_llm: bool,
}

impl Default for Strategy {
    fn default() -> Self {
        Self {
            cadence: Cadence::EveryN(3),
            after_tools: false,
            before_llm: false,
        }
    }
}

impl Strategy {
    /// Whether the state after `step` is checkpointed.
    pub fn saves_after(&self, step: u64, executed_tools: bool) -> bool {
        let on_cadence = match self.cadence {
            Cadence::EveryStep => true,
            Cadence::EveryN(n) => step.is_multiple_of(n),
        };
        on_cadence || (self.after_tools && executed_tools)
    }
}

impl FromStr for Strategy {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        let mut parts = raw.split(',').map(str::trim);
        let base = parts.next().unwrap_or_default();
        let interval = |value: Option<&str>| -> Result<u64, String> {
            match value {
                None => Ok(3),
                Some(n) => n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("checkpoint interval must be a positive integer, got {n:?}")
                }),
            }
        };
        let (name, argument) = match base.split_once(':') {
            Some((name, argument)) => (name, Some(argument)),
            None => (base, None),
        };
        let mut strategy = match name {
            "every_step" if argument.is_none() => Strategy {
                cadence: Cadence::EveryStep,
                ..Strategy::default()
            },
            "every_n" => Strategy {
                cadence: Cadence::EveryN(interval(argument)?),
                ..Strategy::default()
            },
            "hybrid" => Strategy {
                cadence: Cadence::EveryN(interval(argument)?),
                after_tools: true,
                before_llm: false,
            },
            _ => {
                return Err(format!(
                    "unknown checkpoint strategy {base:?}: use every_step, every_n:N or hybrid:N"
                ));
            }
        };
        for modifier in parts {
            match modifier {
                "after_tools" => strategy.after_tools = true,
                "before_llm" => strategy.before_llm = true,
                other => return Err(format!("unknown strategy modifier {other:?}")),
            }
        }
        Ok(strategy)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cadence {
            Cadence::EveryStep => f.write_str("every_step")?,
            Cadence::EveryN(n) => write!(f, "every_n:{n}")?,
        }
        if self.after_tools {
            f.write_str(",after_tools")?;
        }
        if self.before_llm {
            f.write_str(",before_llm")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_parse_and_decide_when_to_save() {
        let every_three: Strategy = "every_n".parse().unwrap();
        let saves: Vec<_> = (1..=7)
            .filter(|s| every_three.saves_after(*s, false))
            .collect();
        assert_eq!(saves, vec![3, 6]);
        let hybrid: Strategy = "hybrid:5".parse().unwrap();
        assert!(hybrid.saves_after(2, true) && !hybrid.saves_after(2, false));
        let each: Strategy = "every_step,before_llm".parse().unwrap();
        assert!(each.before_llm && each.saves_after(1, false));
        assert_eq!(each.to_string(), "every_step,before_llm");
        assert!("every_n:0".parse::<Strategy>().is_err());
        assert!("sometimes".parse::<Strategy>().is_err());
        assert!("every_n:2,after_lunch".parse::<Strategy>().is_err());
    }
}
