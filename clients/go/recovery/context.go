// What a step sees: its state and messages, journalled tools, side effects under an intent and
// an idempotency key, the LLM hook and approvals. A step must be deterministic given the state,
// the messages and the journalled tool results, so that re-executing it after a rewind makes
// the same tool calls and reuses their results.
package recovery

import (
	"context"
	"encoding/json"
	"fmt"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

// InDoubtPolicy is what to do with a side-effecting call whose intent was journalled but no
// result (the process died between). Never a silent re-run.
type InDoubtPolicy string

const (
	// RetryWithKey runs it again with the same idempotency key (safe: the tool honours it).
	RetryWithKey InDoubtPolicy = "retry_with_key"
	// Ask parks the run for a human (approval action "in_doubt CALL_ID"); approved, it re-runs.
	Ask InDoubtPolicy = "ask"
	// Fail fails the run fatally, naming the call.
	Fail InDoubtPolicy = "fail"
)

// InDoubtAction is the approval action that asks a human about an in-doubt call.
func InDoubtAction(callID string) string { return "in_doubt " + callID }

// SettleInDoubt returns nil when the call may re-run with its key, and the error that stops the
// run otherwise. A corrupt entry always goes to a human: only an operator's repair settles it.
func SettleInDoubt(call InDoubt, policy InDoubtPolicy, approved *bool) error {
	effective := policy
	if call.Corrupt {
		effective = Ask
	}
	switch {
	case effective == RetryWithKey, effective == Ask && approved != nil && *approved:
		return nil
	case effective == Ask && approved == nil:
		return &ApprovalRequired{Action: InDoubtAction(call.CallID), Details: call}
	case effective == Ask:
		return Fatal(fmt.Errorf("tool call %s is in doubt and a human rejected running it again", call.CallID))
	}
	return Fatal(fmt.Errorf("tool call %s (%s) is in doubt: its intent was journalled but no result; the tool's policy is %s",
		call.CallID, call.ToolName, policy))
}

// StepContext is the context of one step of one run. State and Messages are the live values:
// change the state in place (or SetState) and add messages; a step that fails leaves no trace.
type StepContext struct {
	// Step is the step's number; the first is 1.
	Step int64

	session       *session
	executedTools bool
	start         *stepStart
	callIndexes   map[string]int
}

// stepStart is the state a step started from, kept for a before-LLM save.
type stepStart struct {
	state        State
	messageCount int
}

func newStepContext(s *session, step int64) (*StepContext, error) {
	c := &StepContext{Step: step, session: s, callIndexes: map[string]int{}}
	if s.strategy.BeforeLLM {
		state, err := cloneState(s.state)
		if err != nil {
			return nil, err
		}
		c.start = &stepStart{state: state, messageCount: len(s.messages)}
	}
	return c, nil
}

// RunID is the run's id.
func (c *StepContext) RunID() string { return c.session.runID }

// Task is what the run was given.
func (c *StepContext) Task() any { return c.session.task }

// State is the live state.
func (c *StepContext) State() State { return c.session.state }

// SetState replaces the state.
func (c *StepContext) SetState(state State) { c.session.state = state }

// Messages is the whole history, restored messages included; append with AddMessage.
func (c *StepContext) Messages() []Message { return c.session.messages }

// AddMessage appends a message to the history.
func (c *StepContext) AddMessage(role string, content any) {
	c.session.messages = append(c.session.messages, Message{Role: role, Content: content})
}

// ExecutedTools says whether this step ran a tool (not one replayed from the journal).
func (c *StepContext) ExecutedTools() bool { return c.executedTools }

// CallTool calls a tool, journalled: a result journalled by this or an earlier life of the run
// is returned without calling fn; otherwise fn runs and its JSON result is journalled before it
// is returned. The call id is "step-{step}/{name}/{n}" for the n-th call of name.
//
// It is not exactly once: a process that dies after fn returned and before its result is
// journalled runs fn again when the run resumes (use CallSideEffect, with an intent and an
// idempotency key, for a tool that must not). fn is a closure, so no arguments are compared on
// replay; [CallToolWith] journals the arguments' digest and refuses a replay for other ones.
func (c *StepContext) CallTool(ctx context.Context, name string, fn func(context.Context) (any, error)) (json.RawMessage, error) {
	return c.callTool(ctx, name, "", fn)
}

// callTool is CallTool with the call's arguments digest ("" for none).
func (c *StepContext) callTool(ctx context.Context, name, digest string, fn func(context.Context) (any, error)) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	callID := c.nextCallID(name)
	if replayed, ok, err := c.replay(callID, digest); err != nil || ok {
		return replayed, err
	}
	value, err := fn(ctx)
	if err != nil {
		return nil, err
	}
	return c.record(ctx, name, callID, digest, value)
}

// CallSideEffect calls a side-effecting tool at most once, even across a crash between its
// effect and its journalled result: an intent is journalled first and fn receives the call's
// idempotency key, which it must honour (a key seen before repeats no effect). A call left in
// doubt by a crash is settled by policy (RetryWithKey when empty). fn is a closure, so no
// arguments are compared on replay; [CallSideEffectWith] journals the arguments' digest with the
// intent and the result and refuses to reuse either for other arguments.
func (c *StepContext) CallSideEffect(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (any, error),
	policy InDoubtPolicy) (json.RawMessage, error) {
	return c.callSideEffect(ctx, name, "", fn, policy)
}

// callSideEffect is CallSideEffect with the call's arguments digest ("" for none), compared
// with the journalled result's, the journalled intent's and the server's before fn may run.
func (c *StepContext) callSideEffect(ctx context.Context, name, digest string,
	fn func(ctx context.Context, idempotencyKey string) (any, error), policy InDoubtPolicy) (json.RawMessage, error) {
	if policy == "" {
		policy = RetryWithKey
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	callID := c.nextCallID(name)
	if replayed, ok, err := c.replay(callID, digest); err != nil || ok {
		return replayed, err
	}
	store, runID := c.session.store, c.session.runID
	var key string
	if doubt, ok := store.InDoubtCall(runID, callID); ok {
		// An intent for other arguments: its effect, if any, was another call's.
		if intent := store.JournalledIntent(runID, callID); intent != nil {
			if err := checkpointd.CheckReplay(callID, intent.GetArgumentsDigest(), digest); err != nil {
				return nil, err
			}
		}
		if err := c.settle(doubt, policy); err != nil {
			return nil, err
		}
		key = doubt.IdempotencyKey
	} else {
		reply, err := store.RecordToolIntent(ctx, runID, callID, name, c.Step, digest)
		if err != nil {
			return nil, err
		}
		// Completed by another life of the run since this one resumed.
		if reply.GetResult() != nil {
			if err := checkpointd.CheckReplay(callID, reply.GetResult().GetArgumentsDigest(), digest); err != nil {
				return nil, err
			}
			return reply.GetResult().GetOutput(), nil
		}
		intent := reply.GetIntent()
		if intent == nil {
			return nil, fmt.Errorf("checkpointd: RecordToolIntent for %s answered no intent", callID)
		}
		key = intent.GetIdempotencyKey()
		if reply.GetAlreadyRecorded() {
			if err := checkpointd.CheckReplay(callID, intent.GetArgumentsDigest(), digest); err != nil {
				return nil, err
			}
			if err := c.settle(InDoubt{CallID: intent.GetCallId(), ToolName: intent.GetToolName(), Step: intent.GetStep(),
				IdempotencyKey: key}, policy); err != nil {
				return nil, err
			}
		}
	}
	value, err := fn(ctx, key)
	if err != nil {
		return nil, err
	}
	return c.record(ctx, name, callID, digest, value)
}

// LLM wraps an LLM call. With the BeforeLLM strategy the state this step started from is
// checkpointed first, so a crash during a long model call loses nothing before it.
func (c *StepContext) LLM(ctx context.Context, fn func(context.Context) error) error {
	if c.start != nil {
		start := c.start
		c.start = nil
		if c.Step > 1 {
			if err := c.session.save(ctx, c.Step-1, start.state, start.messageCount, nil); err != nil {
				return err
			}
		}
	}
	return fn(ctx)
}

// RequestApproval asks a human. It returns the decision once one was made for action; until
// then it returns *ApprovalRequired, which the step returns: the run is checkpointed and the
// step re-runs with the decision.
func (c *StepContext) RequestApproval(action string, details any) (Decision, error) {
	if decision := c.session.decision; decision != nil && decision.Action == action {
		return *decision, nil
	}
	return Decision{}, &ApprovalRequired{Action: action, Details: details}
}

func (c *StepContext) settle(call InDoubt, policy InDoubtPolicy) error {
	var approved *bool
	if decision := c.session.decision; decision != nil && decision.Action == InDoubtAction(call.CallID) {
		approved = &decision.Approved
	}
	if err := SettleInDoubt(call, policy, approved); err != nil {
		return err
	}
	c.session.store.logger.Warn("checkpointd: re-running an in-doubt tool call with its idempotency key",
		"run_id", c.RunID(), "call_id", call.CallID, "policy", string(policy))
	return nil
}

func (c *StepContext) nextCallID(name string) string {
	index := c.callIndexes[name]
	c.callIndexes[name] = index + 1
	return fmt.Sprintf("step-%d/%s/%d", c.Step, name, index)
}

// replay is the journalled output of callID, when there is one and it was journalled for the
// same arguments; a *checkpointd.ReplayMismatchError when it was journalled for other ones.
func (c *StepContext) replay(callID, digest string) (json.RawMessage, bool, error) {
	recorded := c.session.store.Journalled(c.RunID(), callID)
	if recorded == nil {
		return nil, false, nil
	}
	if err := checkpointd.CheckReplay(callID, recorded.GetArgumentsDigest(), digest); err != nil {
		return nil, false, err
	}
	c.session.stats.ToolsReplayed++
	c.session.store.logger.Info("checkpointd: tool result replayed from the journal", "run_id", c.RunID(), "call_id", callID)
	return recorded.GetOutput(), true, nil
}

func (c *StepContext) record(ctx context.Context, name, callID, digest string, value any) (json.RawMessage, error) {
	output, err := encodeOutput(value)
	if err != nil {
		return nil, err
	}
	recorded, err := c.session.store.RecordToolResult(ctx, c.RunID(), callID, name, c.Step, output, false, digest)
	if err != nil {
		return nil, err
	}
	c.session.stats.ToolsExecuted++
	c.executedTools = true
	return recorded.GetOutput(), nil
}

// CallTool is StepContext.CallTool with the result decoded into T (the journalled JSON).
func CallTool[T any](ctx context.Context, step *StepContext, name string, fn func(context.Context) (T, error)) (T, error) {
	raw, err := step.CallTool(ctx, name, func(ctx context.Context) (any, error) { return fn(ctx) })
	return decodeAs[T](raw, err)
}

// CallToolWith is CallTool for a tool that takes args: fn receives them, and their
// [checkpointd.ArgumentsDigest] is journalled with the result. A journalled result is replayed
// only for the same arguments: a call whose arguments differ from the journalled ones under the
// same call id (a step whose calls changed, a model that reused an id) returns a
// [*checkpointd.ReplayMismatchError] naming the call and both digests, fatal to the recovery
// loop, and fn is not called. A result journalled without a digest replays as before.
func CallToolWith[A, T any](ctx context.Context, step *StepContext, name string, args A,
	fn func(context.Context, A) (T, error)) (T, error) {
	digest, err := checkpointd.ArgumentsDigest(args)
	if err != nil {
		var none T
		return none, err
	}
	raw, err := step.callTool(ctx, name, digest, func(ctx context.Context) (any, error) { return fn(ctx, args) })
	return decodeAs[T](raw, err)
}

// CallSideEffect is StepContext.CallSideEffect with the result decoded into T.
func CallSideEffect[T any](ctx context.Context, step *StepContext, name string,
	fn func(ctx context.Context, idempotencyKey string) (T, error), policy InDoubtPolicy) (T, error) {
	raw, err := step.CallSideEffect(ctx, name, func(ctx context.Context, key string) (any, error) { return fn(ctx, key) }, policy)
	return decodeAs[T](raw, err)
}

func decodeAs[T any](raw json.RawMessage, err error) (T, error) {
	var value T
	if err != nil {
		return value, err
	}
	if err := json.Unmarshal(raw, &value); err != nil {
		return value, fmt.Errorf("checkpointd: the journalled output %q does not decode as %T: %w", raw, value, err)
	}
	return value, nil
}

// CallSideEffectWith is CallSideEffect for a tool that takes args: fn receives the idempotency
// key and them, and their [checkpointd.ArgumentsDigest] is journalled with the intent and the
// result. Neither is reused for other arguments under the same call id: that returns a
// [*checkpointd.ReplayMismatchError] (found here, or refused by the server) and fn is not called.
func CallSideEffectWith[A, T any](ctx context.Context, step *StepContext, name string, args A,
	fn func(ctx context.Context, idempotencyKey string, args A) (T, error), policy InDoubtPolicy) (T, error) {
	digest, err := checkpointd.ArgumentsDigest(args)
	if err != nil {
		var none T
		return none, err
	}
	raw, err := step.callSideEffect(ctx, name, digest,
		func(ctx context.Context, key string) (any, error) { return fn(ctx, key, args) }, policy)
	return decodeAs[T](raw, err)
}
