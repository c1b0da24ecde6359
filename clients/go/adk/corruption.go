// Corruption reported to every reader (DESIGN.md, contract 13): a load that falls back past
// quarantined (corrupt) checkpoints of a session's run, or of an app's or user's state, logs a
// warning naming them on every read, and says so to the caller: Session.PassedOver, the
// session state's temp key StatePassedOverKey, and under Refuse an error on every read.

package adk

import (
	"context"
	"fmt"
	"log/slog"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

// CorruptPolicy says what a read does when newer checkpoints of a run are quarantined as
// corrupt and it falls back past them.
type CorruptPolicy int

const (
	// FallBack (the default) serves the newest checkpoint that verifies, logs a warning naming
	// the run and the checkpoints passed over on every such read, and lists their steps in the
	// session's PassedOver and its state under StatePassedOverKey.
	FallBack CorruptPolicy = iota
	// Refuse fails every such read (Get, List, and the app and user state they merge) with an
	// error wrapping checkpointd.ErrCheckpointCorrupt, until an operator drops the quarantined
	// checkpoints (`checkpointd runs drop-quarantined RUN`) or the session is deleted: for
	// agents where events silently lost should stop the conversation for a person.
	Refuse
)

// StatePassedOverKey is the session state key (a temp: key: never stored) whose value, the
// steps of the session run's quarantined checkpoints passed over, newest first ([]int64), tells
// an agent that events it saw may be gone. Absent when nothing was passed over.
const StatePassedOverKey = "temp:checkpointd.passed_over"

// Option configures a Service.
type Option func(*Service)

// WithLogger sets where fallbacks past corrupt checkpoints are reported (slog.Default() by
// default).
func WithLogger(logger *slog.Logger) Option { return func(s *Service) { s.logger = logger } }

// WithCorruptPolicy sets what a read does past quarantined checkpoints (FallBack by default).
func WithCorruptPolicy(policy CorruptPolicy) Option { return func(s *Service) { s.policy = policy } }

// passedOver reports what a load of runID fell back past: a warning on every read, and under
// Refuse the error the read returns.
func (s *Service) passedOver(ctx context.Context, runID string, passed []checkpointd.PassedOver) error {
	if len(passed) == 0 {
		return nil
	}
	steps := checkpointd.PassedOverSteps(passed)
	if s.policy == Refuse {
		return fmt.Errorf("adk: run %s: newer checkpoints are corrupt and quarantined (steps %s); refusing to read "+
			"past them (an operator drops them with `checkpointd runs drop-quarantined %s`): %w",
			runID, checkpointd.DescribePassedOver(passed), runID, checkpointd.ErrCheckpointCorrupt)
	}
	s.logger.WarnContext(ctx, "adk session service fell back past quarantined corrupt checkpoints; "+
		"events or state they held are not in this read (an operator drops them with `checkpointd runs drop-quarantined`)",
		"run_id", runID, "passed_over_steps", steps, "passed_over", checkpointd.DescribePassedOver(passed))
	return nil
}

// PassedOver is what the read that made this copy of the session fell back past in its run:
// the quarantined (corrupt) checkpoints newer than the one it was read from, newest first.
// Events they held are missing from Events. Empty when the read served the newest.
func (s *Session) PassedOver() []checkpointd.PassedOver {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.run == nil {
		return nil
	}
	return append([]checkpointd.PassedOver(nil), s.run.passedOver...)
}

// withPassedOver adds StatePassedOverKey to a session's merged state when its run has some.
func withPassedOver(state map[string]any, own *scope) map[string]any {
	if len(own.passedOver) > 0 {
		state[StatePassedOverKey] = checkpointd.PassedOverSteps(own.passedOver)
	}
	return state
}
