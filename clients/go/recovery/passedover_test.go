// Corruption is reported to every reader until it is repaired (DESIGN.md, contract 13): each
// LoadLatest and Resume that falls back past quarantined checkpoints names them and logs a
// warning, not only the read that found them; a corrupt checkpoint asked for by its step is
// CHECKPOINT_CORRUPT; a newer checkpoint saved above them quiets the reads.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func TestEveryReadNamesAndWarnsOfTheQuarantinedCheckpointsItFallsBackPast(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		saveSteps(t, ctx, NewCheckpointStore(p.backend(t), nil), "r", 1, 2, 3, 4, 5)
		for _, step := range []int64{5, 4, 3} {
			p.corruptState(t, "r", step)
		}
		var log logged
		store := NewCheckpointStore(p.backend(t), log.logger())
		for read := 1; read <= 2; read++ {
			loaded, err := store.LoadLatest(ctx, "r")
			if err != nil || loaded == nil || loaded.Step != 2 || !loaded.IsValid {
				t.Fatalf("load %d: %+v %v", read, loaded, err)
			}
			if got := fmt.Sprint(checkpointd.PassedOverSteps(loaded.PassedOver)); got != "[5 4 3]" {
				t.Fatalf("load %d passed over %s, want [5 4 3]", read, got)
			}
			if warnings := strings.Count(log.String(), "level=WARN"); warnings != read {
				t.Fatalf("after load %d, %d warnings:\n%s", read, warnings, log.String())
			}
		}
		if !strings.Contains(log.String(), "step(s) 5, 4, 3") || !strings.Contains(log.String(), "passed_over_steps=\"[5 4 3]\"") ||
			!strings.Contains(log.String(), "run_id=r") || !strings.Contains(log.String(), "served_step=2") {
			t.Fatalf("the warning does not name the run, the steps and what was served:\n%s", log.String())
		}
		// A new reader (another process) hears it too, and the corrupt step itself stays refused.
		var fresh logged
		other := NewCheckpointStore(p.backend(t), fresh.logger())
		if loaded, err := other.LoadLatest(ctx, "r"); err != nil || len(loaded.PassedOver) != 3 ||
			!strings.Contains(fresh.String(), "level=WARN") {
			t.Fatalf("a new reader: %+v %v\n%s", loaded, err, fresh.String())
		}
		if _, err := other.LoadAtStep(ctx, "r", 4); !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
			t.Fatalf("the corrupt step loaded by its number: %v, want CHECKPOINT_CORRUPT", err)
		}
		resumed, err := other.Resume(ctx, "r", true)
		if err != nil || resumed.RecoveredFromStep != 2 || fmt.Sprint(checkpointd.PassedOverSteps(resumed.PassedOver)) != "[5 4 3]" {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		if strings.Count(fresh.String(), "level=WARN") != 2 {
			t.Fatalf("the Resume did not warn:\n%s", fresh.String())
		}
		// A checkpoint saved above some of them leaves only the ones still newer than it.
		if _, err := other.Save(ctx, CheckpointInput{RunID: "r", Step: 3, Messages: append(resumed.Checkpoint.Messages,
			Message{Role: "assistant", Content: "again"})}); err != nil {
			t.Fatal(err)
		}
		loaded, err := other.LoadLatest(ctx, "r")
		if err != nil || loaded.Step != 3 || fmt.Sprint(checkpointd.PassedOverSteps(loaded.PassedOver)) != "[5 4]" {
			t.Fatalf("after a save at step 3: %+v %v", loaded, err)
		}
	})
}

func TestAQuietRunWarnsOfNothing(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		saveSteps(t, ctx, NewCheckpointStore(p.backend(t), nil), "r", 1, 2)
		var log logged
		store := NewCheckpointStore(p.backend(t), log.logger())
		loaded, err := store.LoadLatest(ctx, "r")
		if err != nil || loaded.Step != 2 || len(loaded.PassedOver) != 0 {
			t.Fatalf("load: %+v %v", loaded, err)
		}
		if resumed, err := store.Resume(ctx, "r", true); err != nil || len(resumed.PassedOver) != 0 {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		if strings.Contains(log.String(), "level=WARN") {
			t.Fatalf("a sound run warned:\n%s", log.String())
		}
	})
}

func TestTheRecoveryLoopReportsWhatItsResumePassedOver(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		saveSteps(t, ctx, NewCheckpointStore(p.backend(t), nil), "r", 1, 2, 3)
		p.corruptState(t, "r", 3)
		p.corruptState(t, "r", 2)
		var log logged
		agent, err := NewRecoverableAgent(func(ctx context.Context, step *StepContext) (*Done, error) {
			return &Done{Result: step.Step}, nil
		}, NewCheckpointStore(p.backend(t), log.logger()), WithCooldown(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		result, err := agent.Run(ctx, "r", nil)
		if err != nil || result.RecoveredFromStep != 1 || fmt.Sprint(checkpointd.PassedOverSteps(result.PassedOver)) != "[3 2]" {
			t.Fatalf("result %+v %v", result, err)
		}
		if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "step(s) 3, 2") {
			t.Fatalf("no warning naming the steps:\n%s", log.String())
		}
	})
}
