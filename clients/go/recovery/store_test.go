package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func saveSteps(t *testing.T, ctx context.Context, store *CheckpointStore, runID string, steps ...int64) []Message {
	t.Helper()
	var messages []Message
	for _, step := range steps {
		messages = append(messages, Message{Role: "assistant", Content: fmt.Sprintf("step %d", step)})
		if _, err := store.Save(ctx, CheckpointInput{RunID: runID, Step: step, State: State{"n": float64(step)},
			Messages: messages, Metadata: map[string]string{"k": "v"}}); err != nil {
			t.Fatalf("save step %d: %v", step, err)
		}
	}
	return messages
}

func TestSaveSendsOnlyNewMessagesWithTheClientChecksumAndLoadsVerified(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		backend := &counting{Backend: p.backend(t)}
		store := NewCheckpointStore(backend, nil)
		saveSteps(t, ctx, store, "r", 1, 2, 3)
		if len(backend.saves) != 3 {
			t.Fatalf("%d saves sent", len(backend.saves))
		}
		for i, request := range backend.saves {
			if request.GetMessageOffset() != uint64(i) || len(request.GetMessages()) != 1 {
				t.Errorf("save %d sent offset %d and %d messages, want %d and 1", i, request.GetMessageOffset(), len(request.GetMessages()), i)
			}
			if request.Checksum == nil || request.Epoch == nil {
				t.Errorf("save %d carries no client checksum or epoch", i)
			}
		}
		if stats := store.Stats(); stats.Saves != 3 || stats.WithClientChecksum != 3 {
			t.Errorf("stats %+v", stats)
		}
		loaded, err := NewCheckpointStore(p.backend(t), nil).LoadLatest(ctx, "r")
		if err != nil || loaded == nil {
			t.Fatalf("load: %v %v", loaded, err)
		}
		if loaded.Step != 3 || !loaded.IsValid || len(loaded.Messages) != 3 || loaded.Messages[2].Content != "step 3" ||
			loaded.State["n"] != float64(3) || loaded.Metadata["k"] != "v" {
			t.Fatalf("loaded %+v", loaded)
		}
		if ok, err := store.Validate(ctx, loaded); err != nil || !ok {
			t.Fatalf("validate: %v %v", ok, err)
		}
	})
}

func TestAResumedRunFencesTheOlderWriter(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		older := NewCheckpointStore(p.backend(t), nil)
		saveSteps(t, ctx, older, "r", 1)
		newer := NewCheckpointStore(p.backend(t), nil)
		resumed, err := newer.Resume(ctx, "r", true)
		if err != nil || resumed.RecoveredFromStep != 1 {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		_, err = older.Save(ctx, CheckpointInput{RunID: "r", Step: 2, Messages: []Message{{Role: "user", Content: "x"}, {Role: "user", Content: "y"}}})
		if !errors.Is(err, checkpointd.ErrStaleEpoch) || !IsFenced(err) {
			t.Fatalf("the older writer's save: %v, want STALE_EPOCH", err)
		}
		if _, err := older.RecordToolResult(ctx, "r", "c", "t", 2, []byte("1"), false, ""); !errors.Is(err, checkpointd.ErrStaleEpoch) {
			t.Fatalf("the older writer's tool result: %v, want STALE_EPOCH", err)
		}
	})
}

func TestACorruptLatestCheckpointIsSkippedLoudly(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		saveSteps(t, ctx, NewCheckpointStore(p.backend(t), nil), "r", 3, 6)
		p.corruptState(t, "r", 6)
		var log logged
		store := NewCheckpointStore(p.backend(t), log.logger())
		loaded, err := store.LoadLatest(ctx, "r")
		if err != nil || loaded == nil || loaded.Step != 3 || !loaded.IsValid {
			t.Fatalf("load: %+v %v", loaded, err)
		}
		resumed, err := store.Resume(ctx, "r", false)
		if err != nil || resumed.RecoveredFromStep != 3 || fmt.Sprint(checkpointd.PassedOverSteps(resumed.PassedOver)) != "[6]" {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "falling back to step 3") {
			t.Fatalf("no warning logged:\n%s", log.String())
		}
		// The run continues past the corrupt step.
		if _, err := store.Save(ctx, CheckpointInput{RunID: "r", Step: 7, Messages: resumed.Checkpoint.Messages}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestEveryCheckpointCorruptRestartsAtStepZeroLoudly(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		saveSteps(t, ctx, NewCheckpointStore(p.backend(t), nil), "r", 1, 2)
		p.corruptState(t, "r", 1)
		p.corruptState(t, "r", 2)
		var log logged
		store := NewCheckpointStore(p.backend(t), log.logger())
		loaded, err := store.LoadLatest(ctx, "r")
		if err != nil || loaded != nil {
			t.Fatalf("load: %+v %v, want none", loaded, err)
		}
		resumed, err := store.Resume(ctx, "r", false)
		if err != nil || !resumed.RestartedFromScratch || resumed.Checkpoint != nil || resumed.RecoveredFromStep != 0 {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "RESTARTS FROM STEP 0") {
			t.Fatalf("the restart was not logged as an error:\n%s", log.String())
		}
		if _, err := store.Save(ctx, CheckpointInput{RunID: "r", Step: 1, Messages: []Message{{Role: "user", Content: "again"}}}); err != nil {
			t.Fatalf("the run does not start again: %v", err)
		}
	})
}

func TestALongHistoryIsLoadedPageByPage(t *testing.T) {
	for _, name := range placeNames[1:] {
		t.Run(name, func(t *testing.T) {
			p := openPlace(t, name, "--max-answer-message-bytes", "300", "--max-unpaged-answer-bytes", "300")
			ctx := context.Background()
			var messages []Message
			for i := range 40 {
				messages = append(messages, Message{Role: "user", Content: strings.Repeat("m", 40) + fmt.Sprint(i)})
			}
			writer := NewCheckpointStore(p.backend(t), nil)
			if _, err := writer.Save(ctx, CheckpointInput{RunID: "long", Step: 1, Messages: messages}); err != nil {
				t.Fatal(err)
			}
			backend := &counting{Backend: p.backend(t)}
			store := NewCheckpointStore(backend, nil)
			loaded, err := store.LoadLatest(ctx, "long")
			if err != nil || loaded == nil || len(loaded.Messages) != 40 || !loaded.IsValid {
				t.Fatalf("load: %v %v", loaded, err)
			}
			resumed, err := store.Resume(ctx, "long", true)
			if err != nil || len(resumed.Checkpoint.Messages) != 40 {
				t.Fatalf("resume: %v", err)
			}
			if backend.pages.Load() < 2 {
				t.Fatalf("%d continuation pages fetched; the history was not paged", backend.pages.Load())
			}
			messages = append(messages, Message{Role: "assistant", Content: "next"})
			if _, err := store.Save(ctx, CheckpointInput{RunID: "long", Step: 2, Messages: messages}); err != nil {
				t.Fatalf("a save after a paged Resume: %v", err)
			}
		})
	}
}

func TestToolJournalIntentsAndCallsInDoubt(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		crashed := NewCheckpointStore(p.backend(t), nil)
		intent, err := crashed.RecordToolIntent(ctx, "r", "step-1/email/0", "email", 1, "")
		if err != nil || intent.GetIntent().GetIdempotencyKey() == "" {
			t.Fatalf("intent: %v %v", intent, err)
		}
		store := NewCheckpointStore(p.backend(t), nil)
		resumed, err := store.Resume(ctx, "r", true)
		if err != nil || len(resumed.InDoubt) != 1 || resumed.InDoubt[0].IdempotencyKey != intent.GetIntent().GetIdempotencyKey() {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		if _, err := store.RecordToolResult(ctx, "r", "step-1/email/0", "email", 1, []byte(`{"sent":true}`), false, ""); err != nil {
			t.Fatal(err)
		}
		if _, doubt := store.InDoubtCall("r", "step-1/email/0"); doubt {
			t.Fatal("a journalled result leaves its call in doubt")
		}
		// The checksum of the next save covers the intent and the result.
		if _, err := store.Save(ctx, CheckpointInput{RunID: "r", Step: 1}); err != nil {
			t.Fatal(err)
		}
		if store.Stats().WithClientChecksum != 1 {
			t.Fatal("the save carried no client checksum")
		}
	})
}
