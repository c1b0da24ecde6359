//! Side-effecting tools: what a tool declares about a call whose outcome is unknown after a
//! crash (an intent journalled, no result), and how the step context settles such a call.
//!
//! A tool declares itself by how a step calls it: reads and pure tools through
//! `StepContext::call_tool` (journalled, no intent), side-effecting ones through
//! `StepContext::call_side_effect` with their [`InDoubtPolicy`].

use std::fmt;
use std::str::FromStr;

use crate::agent_error::AgentError;
use crate::proto::InDoubtCall;

/// What to do with an in-doubt call of a side-effecting tool. Never a silent re-run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InDoubtPolicy {
    /// Run it again with the same idempotency key: safe because the tool honours the key.
    #[default]
    RetryWithKey,
    /// Park the task in `input_required`, naming the call, until a human decides: approve
    /// re-runs it with the key; an operator may instead mark it done with an output.
    Ask,
    /// Fail the task fatally, naming the call.
    Fail,
}

impl FromStr for InDoubtPolicy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "retry_with_key" => Ok(Self::RetryWithKey),
            "ask" => Ok(Self::Ask),
            "fail" => Ok(Self::Fail),
            other => Err(format!(
                "unknown in-doubt policy {other:?}: expected retry_with_key, ask or fail"
            )),
        }
    }
}

impl fmt::Display for InDoubtPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RetryWithKey => "retry_with_key",
            Self::Ask => "ask",
            Self::Fail => "fail",
        })
    }
}

/// The approval action that asks a human about an in-doubt call.
pub fn in_doubt_action(call_id: &str) -> String {
    format!("in_doubt {call_id}")
}

/// What a step does with one in-doubt call under `policy`, given whether a human approved it
/// (`None`: nobody decided yet). `Ok(())` means "re-run it with its key".
pub fn settle_in_doubt(
    call: &InDoubtCall,
    policy: InDoubtPolicy,
    approved: Option<bool>,
) -> Result<(), AgentError> {
    // A corrupt entry cannot be settled by the tool alone: its journal needs an operator's
    // repair, so it is always put to a human.
    let policy = if call.corrupt {
        InDoubtPolicy::Ask
    } else {
        policy
    };
    match (policy, approved) {
        (InDoubtPolicy::RetryWithKey, _) | (InDoubtPolicy::Ask, Some(true)) => Ok(()),
        (InDoubtPolicy::Ask, Some(false)) => Err(AgentError::Fatal(format!(
            "tool call {} is in doubt and a human rejected running it again",
            call.call_id
        ))),
        (InDoubtPolicy::Ask, None) => Err(AgentError::ApprovalRequired {
            action: in_doubt_action(&call.call_id),
            details: serde_json::json!({
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "step": call.step,
                "idempotency_key": call.idempotency_key,
                "corrupt": call.corrupt,
            })
            .to_string()
            .into_bytes(),
        }),
        (InDoubtPolicy::Fail, _) => Err(AgentError::Fatal(format!(
            "tool call {} ({}) is in doubt: its intent was journalled but no result; \
             the tool's policy is fail",
            call.call_id, call.tool_name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(corrupt: bool) -> InDoubtCall {
        InDoubtCall {
            call_id: "step-2/send_email/0".into(),
            tool_name: "send_email".into(),
            step: 2,
            idempotency_key: "k".into(),
            corrupt,
        }
    }

    #[test]
    fn every_policy_settles_an_in_doubt_call_its_own_way() {
        assert!(settle_in_doubt(&call(false), InDoubtPolicy::RetryWithKey, None).is_ok());
        assert!(matches!(
            settle_in_doubt(&call(false), InDoubtPolicy::Ask, None),
            Err(AgentError::ApprovalRequired { action, .. }) if action == "in_doubt step-2/send_email/0"
        ));
        assert!(settle_in_doubt(&call(false), InDoubtPolicy::Ask, Some(true)).is_ok());
        assert!(matches!(
            settle_in_doubt(&call(false), InDoubtPolicy::Ask, Some(false)),
            Err(AgentError::Fatal(_))
        ));
        assert!(matches!(
            settle_in_doubt(&call(false), InDoubtPolicy::Fail, None),
            Err(AgentError::Fatal(message)) if message.contains("step-2/send_email/0")
        ));
    }

    #[test]
    fn a_corrupt_call_is_always_put_to_a_human() {
        assert!(matches!(
            settle_in_doubt(&call(true), InDoubtPolicy::RetryWithKey, None),
            Err(AgentError::ApprovalRequired { .. })
        ));
    }

    #[test]
    fn policies_read_and_print_their_flag_names() {
        for policy in [
            InDoubtPolicy::RetryWithKey,
            InDoubtPolicy::Ask,
            InDoubtPolicy::Fail,
        ] {
            assert_eq!(policy.to_string().parse::<InDoubtPolicy>(), Ok(policy));
        }
        assert!("sometimes".parse::<InDoubtPolicy>().is_err());
    }
}
