// The recovery loop: resume, step, checkpoint by strategy, resurrect after transient errors
// within a budget and after a cooldown. The semantics are the Rust runner's (crates/runner) and
// the TypeScript and Python clients' RecoverableAgent.
package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

// DefaultCooldown is the pause before each resurrection: without one, a failure that lasts a
// moment (a server restarting, a provider's brief outage) spends the whole budget at once.
const DefaultCooldown = 2 * time.Second

// DefaultMaxResurrections is the in-process resurrection budget.
const DefaultMaxResurrections = 3

// Done finishes a run; Result (JSON-serialisable) is its result.
type Done struct{ Result any }

// AgentFunc executes step.Step of a run (the first is 1): it reads and changes the step's state
// and messages, calls tools through the step, and returns a *Done to finish the run (nil
// continues). An error fails the step, which leaves no trace; it is classified fatal or
// transient, and a transient one resurrects the run from its latest valid checkpoint.
type AgentFunc func(ctx context.Context, step *StepContext) (*Done, error)

// Policy is how the loop checkpoints and recovers.
type Policy struct {
	Strategy         Strategy
	MaxResurrections int
	Cooldown         time.Duration
	Classifier       Classifier
	// MaxSteps fails a run past this many steps fatally; 0 is no limit.
	MaxSteps int64
	// InitialState is the state a run starts from when nothing is restored ({} when nil).
	InitialState func(task any) State
}

// Option changes a Policy.
type Option func(*Policy)

// WithStrategy sets when to checkpoint.
func WithStrategy(strategy Strategy) Option { return func(p *Policy) { p.Strategy = strategy } }

// WithCheckpointEveryN checkpoints every n steps.
func WithCheckpointEveryN(n int) Option { return func(p *Policy) { p.Strategy = Strategy{EveryN: n} } }

// WithMaxResurrections sets the in-process resurrection budget.
func WithMaxResurrections(n int) Option { return func(p *Policy) { p.MaxResurrections = n } }

// WithCooldown sets the pause before each resurrection.
func WithCooldown(d time.Duration) Option { return func(p *Policy) { p.Cooldown = d } }

// WithClassifier sets what is fatal.
func WithClassifier(c Classifier) Option { return func(p *Policy) { p.Classifier = c } }

// WithMaxSteps fails a run that has not finished after n steps.
func WithMaxSteps(n int64) Option { return func(p *Policy) { p.MaxSteps = n } }

// WithInitialState sets the state a run starts from when nothing is restored.
func WithInitialState(fn func(task any) State) Option { return func(p *Policy) { p.InitialState = fn } }

// RecoveryResult is what a finished run reports.
type RecoveryResult struct {
	RunID  string
	Result json.RawMessage
	// RecoveredFromStep is the step the last recovery restored; 0 from scratch.
	RecoveredFromStep    int64
	RestartedFromScratch bool
	// SkippedSteps are the corrupt checkpoints the last Resume found, newest first.
	SkippedSteps []int64
	// PassedOver is every quarantined checkpoint newer than the one the last Resume restored,
	// newest first: reported (and warned about) on every Resume until an operator drops them.
	PassedOver    []checkpointd.PassedOver
	Resurrections int
	RunStats
}

// RecoverableAgent runs an AgentFunc step by step with checkpoints and recovers it after crashes.
type RecoverableAgent struct {
	agent  AgentFunc
	store  *CheckpointStore
	policy Policy
}

// NewRecoverableAgent is an agent on store; by default it checkpoints every 3 steps and
// resurrects 3 times, each after DefaultCooldown.
func NewRecoverableAgent(agent AgentFunc, store *CheckpointStore, opts ...Option) (*RecoverableAgent, error) {
	policy := Policy{Strategy: DefaultStrategy, MaxResurrections: DefaultMaxResurrections, Cooldown: DefaultCooldown}
	for _, opt := range opts {
		opt(&policy)
	}
	if err := policy.Strategy.validate(); err != nil {
		return nil, err
	}
	return &RecoverableAgent{agent: agent, store: store, policy: policy}, nil
}

// RunOption changes one Run.
type RunOption func(*runSettings)

type runSettings struct {
	decision *Decision
	drain    *drain
}

// WithDecision hands a human's decision to the step (or the call in doubt) that asked for it.
func WithDecision(decision Decision) RunOption {
	return func(r *runSettings) { r.decision = &decision }
}

// Run runs (or resumes) runID to its end and returns the step it recovered from. It returns
// the step's error when it is fatal or the budget is spent, *ApprovalRequired when a step needs
// a human, a fencing refusal when another writer took the run over, and ctx's error when ctx ends.
func (a *RecoverableAgent) Run(ctx context.Context, runID string, task any, opts ...RunOption) (*RecoveryResult, error) {
	var settings runSettings
	for _, opt := range opts {
		opt(&settings)
	}
	stats := &RunStats{}
	for resurrections := 0; ; resurrections++ {
		resumed, result, err := a.life(ctx, runID, task, &settings, stats)
		if err == nil {
			return &RecoveryResult{RunID: runID, Result: result, RecoveredFromStep: resumed.RecoveredFromStep,
				RestartedFromScratch: resumed.RestartedFromScratch, SkippedSteps: resumed.SkippedSteps,
				PassedOver: resumed.PassedOver, Resurrections: resurrections, RunStats: *stats}, nil
		}
		var approval *ApprovalRequired
		if ctx.Err() != nil || IsFenced(err) || errors.As(err, &approval) || errors.Is(err, ErrStopped) ||
			a.policy.Classifier.Classify(err) == KindFatal || resurrections >= a.policy.MaxResurrections {
			return nil, err
		}
		a.store.logger.Warn("checkpointd: transient error; resurrecting from the latest valid checkpoint",
			"run_id", runID, "error", err.Error(), "resurrection", resurrections+1, "budget", a.policy.MaxResurrections)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-settings.drain.stopped():
			return nil, ErrStopped
		case <-time.After(a.policy.Cooldown):
		}
	}
}

// life is one life of the run: Resume, then steps until it finishes or fails.
func (a *RecoverableAgent) life(ctx context.Context, runID string, task any, settings *runSettings,
	stats *RunStats) (*Resumed, json.RawMessage, error) {
	resumed, err := a.store.Resume(ctx, runID, false)
	if err != nil {
		return nil, nil, err
	}
	a.store.logger.Info("checkpointd: resumed", "run_id", runID, "recovered_from_step", resumed.RecoveredFromStep,
		"restarted_from_scratch", resumed.RestartedFromScratch, "skipped", resumed.SkippedSteps)
	var initial State
	if a.policy.InitialState != nil {
		initial = a.policy.InitialState(task)
	}
	s := newSession(a.store, resumed, task, a.policy.Strategy, settings.decision, initial, stats)
	result, err := a.steps(ctx, s, settings.drain)
	return resumed, result, err
}

// steps runs a session's steps until it finishes (or a drain stops it); a failed step is
// rolled back first.
func (a *RecoverableAgent) steps(ctx context.Context, s *session, drain *drain) (json.RawMessage, error) {
	if s.finished != nil {
		return s.finished, nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if drain.stopping() {
			if err := s.saveCompleted(ctx, nil); err != nil {
				return nil, err
			}
			return nil, ErrStopped
		}
		step := s.completedStep + 1
		if a.policy.MaxSteps > 0 && step > a.policy.MaxSteps {
			return nil, Fatal(fmt.Errorf("run %s did not finish within %d steps", s.runID, a.policy.MaxSteps))
		}
		// A failed step must leave no trace in the state that gets checkpointed.
		rollbackState, err := cloneState(s.state)
		if err != nil {
			return nil, Fatal(err)
		}
		rollbackMessages := len(s.messages)
		stepContext, err := newStepContext(s, step)
		if err != nil {
			return nil, Fatal(err)
		}
		stepCtx, release := drain.stepContext(ctx)
		done, err := a.agent(stepCtx, stepContext)
		release()
		if err != nil {
			s.state, s.messages = rollbackState, s.messages[:rollbackMessages]
			if abandoned(stepCtx) && ctx.Err() == nil {
				a.store.logger.Warn("checkpointd: the drain deadline passed mid-step; the step is abandoned",
					"run_id", s.runID, "step", step)
				if saveErr := s.saveCompleted(ctx, nil); saveErr != nil {
					return nil, saveErr
				}
				return nil, ErrStopped
			}
			var approval *ApprovalRequired
			if errors.As(err, &approval) {
				if saveErr := s.saveCompleted(ctx, nil); saveErr != nil {
					return nil, saveErr
				}
			}
			return nil, err
		}
		s.completedStep = step
		s.stats.StepsExecuted++
		if done != nil {
			result, err := json.Marshal(done.Result)
			if err != nil {
				return nil, Fatal(fmt.Errorf("checkpointd: the run's result is not JSON-serialisable: %w", err))
			}
			if err := s.saveCompleted(ctx, map[string]string{ResultKey: string(result)}); err != nil {
				return nil, err
			}
			return result, nil
		}
		if a.policy.Strategy.SavesAfter(step, stepContext.executedTools) {
			if err := s.saveCompleted(ctx, nil); err != nil {
				return nil, err
			}
		}
	}
}
