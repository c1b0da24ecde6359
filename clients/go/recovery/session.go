// One life of a run: what Resume restored and the live state since, saved by strategy. Below
// both the recovery loop and the step context, which each use it.
package recovery

import (
	"context"
	"encoding/json"
	"slices"
)

// ResultKey is the checkpoint metadata key of a finished run's result (JSON): a run restored
// from its final checkpoint is finished, and no step past the end runs again (nor its tools).
const ResultKey = "checkpointd.result"

// RunStats is what a run did in this process, across its resurrections.
type RunStats struct {
	StepsExecuted int
	ToolsExecuted int
	ToolsReplayed int
}

type session struct {
	store    *CheckpointStore
	runID    string
	task     any
	strategy Strategy
	decision *Decision
	stats    *RunStats

	state         State
	messages      []Message
	completedStep int64
	lastSavedStep int64
	saved         bool
	// finished holds the result of a run restored from its final checkpoint.
	finished json.RawMessage
}

func newSession(store *CheckpointStore, resumed *Resumed, task any, strategy Strategy, decision *Decision,
	initial State, stats *RunStats) *session {
	s := &session{store: store, runID: resumed.RunID, task: task, strategy: strategy, decision: decision,
		stats: stats, state: initial}
	if s.state == nil {
		s.state = State{}
	}
	if restored := resumed.Checkpoint; restored != nil {
		s.state, s.messages = restored.State, slices.Clone(restored.Messages)
		s.completedStep, s.lastSavedStep, s.saved = restored.Step, restored.Step, true
		if result, ok := restored.Metadata[ResultKey]; ok {
			s.finished = json.RawMessage(result)
		}
	}
	return s
}

// save checkpoints state and the first messageCount messages at step, unless that step is saved.
func (s *session) save(ctx context.Context, step int64, state State, messageCount int, metadata map[string]string) error {
	if s.saved && s.lastSavedStep == step {
		return nil
	}
	if _, err := s.store.Save(ctx, CheckpointInput{RunID: s.runID, Step: step, State: state,
		Messages: s.messages[:messageCount], Metadata: metadata}); err != nil {
		return err
	}
	s.lastSavedStep, s.saved = step, true
	return nil
}

// saveCompleted checkpoints the last completed step, unless it already is.
func (s *session) saveCompleted(ctx context.Context, metadata map[string]string) error {
	if s.completedStep == 0 {
		return nil
	}
	return s.save(ctx, s.completedStep, s.state, len(s.messages), metadata)
}
