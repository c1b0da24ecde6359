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

func TestADrainEndsTheRunAfterTheRunningStepWithThatStepCheckpointed(t *testing.T) {
	memory := NewMemoryBackend("t")
	stop := make(chan struct{})
	agent, err := NewRecoverableAgent(drainAt(4, stop, false), NewInMemoryStore(memory, nil), WithCheckpointEveryN(3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Run(context.Background(), "drained", nil, WithDrain(stop, time.Minute))
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("want ErrStopped, got %v", err)
	}
	latest, err := NewInMemoryStore(memory, nil).LoadLatest(context.Background(), "drained")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Step != 4 || latest.State["last"] != float64(4) {
		t.Fatalf("latest checkpoint step %d state %v, want step 4", latest.Step, latest.State)
	}
}

func TestAStepRunningPastTheDrainDeadlineIsAbandonedAndTheStepBeforeItCheckpointed(t *testing.T) {
	memory := NewMemoryBackend("t")
	stop := make(chan struct{})
	agent, err := NewRecoverableAgent(drainAt(5, stop, true), NewInMemoryStore(memory, nil), WithCheckpointEveryN(3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Run(context.Background(), "abandoned", nil, WithDrain(stop, 20*time.Millisecond))
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("want ErrStopped, got %v", err)
	}
	latest, err := NewInMemoryStore(memory, nil).LoadLatest(context.Background(), "abandoned")
	if err != nil {
		t.Fatal(err)
	}
	// Step 5 left no trace: its change of "last" was rolled back before the save.
	if latest.Step != 4 || latest.State["last"] != float64(4) {
		t.Fatalf("latest checkpoint step %d state %v, want step 4", latest.Step, latest.State)
	}
}
