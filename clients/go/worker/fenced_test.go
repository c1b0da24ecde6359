// The lease guard on its own: a lost lease stops writes in the store, whatever the step does.
package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// A step that ignores its cancelled context still cannot write once the lease is lost: the
// store under the run refuses the save before it reaches the backend.
func TestOnceTheLeaseIsLostTheStoreRefusesEveryWrite(t *testing.T) {
	memory := recovery.NewMemoryBackend("t")
	lease, lose := context.WithCancelCause(context.Background())
	store := recovery.NewCheckpointStore(fencedBackend{Backend: memory, lease: lease}, nil)
	ctx := context.Background() // the step's own context, never cancelled
	save := func(step int64) error {
		_, err := store.Save(ctx, recovery.CheckpointInput{RunID: "r", Step: step, State: recovery.State{"step": step}})
		return err
	}
	if err := save(1); err != nil {
		t.Fatalf("a save under a live lease: %v", err)
	}
	lose(errLeaseLost)
	if err := save(2); !errors.Is(err, errLeaseLost) {
		t.Fatalf("a save after the lease was lost: want errLeaseLost, got %v", err)
	}
	if _, err := store.RecordToolResult(ctx, "r", "step-2/lookup/0", "lookup", 2, []byte(`1`), false, ""); !errors.Is(err, errLeaseLost) {
		t.Fatalf("a journal write after the lease was lost: want errLeaseLost, got %v", err)
	}
	latest, err := recovery.NewInMemoryStore(memory, nil).LoadLatest(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Step != 1 {
		t.Fatalf("the latest checkpoint is step %d: a write got through after the lease was lost", latest.Step)
	}
}
