package recovery

import (
	"context"
	"errors"
	"testing"
	"time"
)

// drainAt closes stop during step at; when hang is set that step then waits for its context.
func drainAt(at int64, stop chan struct{}, hang bool) AgentFunc {
	return func(ctx context.Context, step *StepContext) (*Done, error) {
		step.State()["last"] = float64(step.Step)
		if step.Step == at {
			close(stop)
			if hang {
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}
		if step.Step == 10 {
			return &Done{}, nil
		}
		return nil, nil
	}
}

// drainedRun runs agent with a drain on stop and deadline, wants ErrStopped, and returns the
// run's latest checkpoint.
func drainedRun(t *testing.T, runID string, agent AgentFunc, stop chan struct{}, deadline time.Duration) *AgentCheckpoint {
	t.Helper()
	memory := NewMemoryBackend("t")
	recoverable, err := NewRecoverableAgent(agent, NewInMemoryStore(memory, nil), WithCheckpointEveryN(3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recoverable.Run(context.Background(), runID, nil, WithDrain(stop, deadline)); !errors.Is(err, ErrStopped) {
		t.Fatalf("want ErrStopped, got %v", err)
	}
	latest, err := NewInMemoryStore(memory, nil).LoadLatest(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return latest
}

func TestADrainEndsTheRunAfterTheRunningStepWithThatStepCheckpointed(t *testing.T) {
	stop := make(chan struct{})
	latest := drainedRun(t, "drained", drainAt(4, stop, false), stop, time.Minute)
	if latest.Step != 4 || latest.State["last"] != float64(4) {
		t.Fatalf("latest checkpoint step %d state %v, want step 4", latest.Step, latest.State)
	}
}

func TestAStepRunningPastTheDrainDeadlineIsAbandonedAndTheStepBeforeItCheckpointed(t *testing.T) {
	stop := make(chan struct{})
	latest := drainedRun(t, "abandoned", drainAt(5, stop, true), stop, 20*time.Millisecond)
	// Step 5 left no trace: its change of "last" was rolled back before the save.
	if latest.Step != 4 || latest.State["last"] != float64(4) {
		t.Fatalf("latest checkpoint step %d state %v, want step 4", latest.Step, latest.State)
	}
}
