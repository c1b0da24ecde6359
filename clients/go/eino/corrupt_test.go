// What Get does with corrupt checkpoints, against a real checkpointd on SQLite and Postgres:
// state damaged in the database (the server's verification finds it) and state damaged on the
// way (only the client's verification can), under each CorruptPolicy.

package eino_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"google.golang.org/grpc"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// setAll saves each of data under id, in order (steps 1, 2, ...).
func setAll(t *testing.T, store *eino.Store, id string, data ...string) {
	t.Helper()
	for _, d := range data {
		if err := store.Set(testContext(t), id, []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCorruptCheckpointsInTheDatabase(t *testing.T) {
	forEachBackend(t, func(t *testing.T, server *testserver.Server) {
		ctx := testContext(t)
		client := dial(t, server)

		t.Run("fall back: the previous checkpoint is returned and the skip logged on every get", func(t *testing.T) {
			log := &recordedLog{}
			store := newStore(client, log)
			setAll(t, store, "fallback", "v1", "v2", "v3")
			corruptState(t, server, eino.RunID("fallback"), 3)
			corruptState(t, server, eino.RunID("fallback"), 2)
			// The first Get quarantines steps 3 and 2; the second, and a new store's, still say so.
			for read, reader := range []*eino.Store{store, store, newStore(client, log)} {
				data, found, err := reader.Get(ctx, "fallback")
				if err != nil || !found || string(data) != "v1" {
					t.Fatalf("Get %d = %q, %v, %v; want v1", read, data, found, err)
				}
				if got := checkpointd.PassedOverSteps(reader.PassedOver("fallback")); fmt.Sprint(got) != "[3 2]" {
					t.Fatalf("Get %d passed over %v, want [3 2]", read, got)
				}
				if warnings := log.count(slog.LevelWarn, "skipped corrupt checkpoints"); warnings != read+1 {
					t.Fatalf("after Get %d, %d warnings", read, warnings)
				}
			}
			attrs, _ := log.find(slog.LevelWarn, "skipped corrupt checkpoints")
			if attrs["skipped_steps"] != "[3 2]" || attrs["checkpoint_id"] != "fallback" || attrs["restored_step"] != "1" {
				t.Fatalf("the fallback was not logged loudly: %v", attrs)
			}
			setAll(t, store, "fallback", "v4") // above the quarantined steps
			quiet := newStore(client, log)
			if data, _, err := quiet.Get(ctx, "fallback"); err != nil || string(data) != "v4" || len(quiet.PassedOver("fallback")) != 0 {
				t.Fatalf("Get after a new Set = %q, %v, passed over %v", data, err, quiet.PassedOver("fallback"))
			}
		})

		t.Run("refuse: an error, and again on the next get, until a new set or delete", func(t *testing.T) {
			store := newStore(client, &recordedLog{}, eino.WithCorruptPolicy(eino.Refuse))
			setAll(t, store, "refused", "v1", "v2")
			corruptState(t, server, eino.RunID("refused"), 2)
			for attempt := range 2 { // the first load quarantines step 2; the second must still refuse
				_, found, err := store.Get(ctx, "refused")
				if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) || found {
					t.Fatalf("Get %d = found %v, %v; want CHECKPOINT_CORRUPT", attempt, found, err)
				}
				if got := checkpointd.PassedOverSteps(store.PassedOver("refused")); fmt.Sprint(got) != "[2]" {
					t.Fatalf("Get %d refused for %v, want [2]", attempt, got)
				}
			}
			setAll(t, store, "refused", "v3") // a new newest checkpoint, valid: nothing to refuse
			if data, _, err := store.Get(ctx, "refused"); err != nil || string(data) != "v3" {
				t.Fatalf("Get after a new Set = %q, %v", data, err)
			}
			corruptState(t, server, eino.RunID("refused"), 3)
			if _, _, err := store.Get(ctx, "refused"); !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
				t.Fatalf("Get with step 3 corrupt = %v; want CHECKPOINT_CORRUPT", err)
			}
			if err := store.Delete(ctx, "refused"); err != nil {
				t.Fatal(err)
			}
			if _, found, err := store.Get(ctx, "refused"); err != nil || found {
				t.Fatalf("Get after Delete = found %v, %v", found, err)
			}
		})

		t.Run("all corrupt: fall back starts over loudly, refuse says so", func(t *testing.T) {
			log := &recordedLog{}
			setAll(t, newStore(client, log), "all-corrupt", "v1")
			corruptState(t, server, eino.RunID("all-corrupt"), 1)
			_, _, err := newStore(client, log, eino.WithCorruptPolicy(eino.Refuse)).Get(ctx, "all-corrupt")
			if !errors.Is(err, checkpointd.ErrAllCheckpointsCorrupt) {
				t.Fatalf("Refuse: Get = %v; want ALL_CHECKPOINTS_CORRUPT", err)
			}
			data, found, err := newStore(client, log).Get(ctx, "all-corrupt")
			if err != nil || found || data != nil {
				t.Fatalf("FallBack: Get = %q, %v, %v; want not found", data, found, err)
			}
			if attrs, logged := log.find(slog.LevelError, "starts over"); !logged || attrs["checkpoint_id"] != "all-corrupt" {
				t.Fatalf("starting over was not logged as an error: %v %v", logged, attrs)
			}
		})
	})
}

// damageLoadLatest flips the first state byte of every LoadLatest answer on its way to the
// store: what a faulty proxy or server would hand over, after the server's own verification.
func damageLoadLatest(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	if answer, ok := reply.(*checkpointv1.LoadLatestResponse); ok && len(answer.GetCheckpoint().GetState()) > 0 {
		answer.Checkpoint.State[0] ^= 0xff
	}
	return nil
}

func TestCheckpointDamagedOnTheWayFailsClientVerification(t *testing.T) {
	forEachBackend(t, func(t *testing.T, server *testserver.Server) {
		ctx := testContext(t)
		damaging := dial(t, server, checkpointd.WithInterceptors(
			[]grpc.UnaryClientInterceptor{damageLoadLatest}, nil))
		log := &recordedLog{}
		setAll(t, newStore(damaging, log), "on-the-way", "v1", "v2")

		data, found, err := newStore(damaging, log).Get(ctx, "on-the-way")
		if err != nil || !found || string(data) != "v1" {
			t.Fatalf("FallBack: Get = %q, %v, %v; want v1 (loaded by step, undamaged)", data, found, err)
		}
		if attrs, logged := log.find(slog.LevelWarn, "skipped corrupt checkpoints"); !logged || attrs["skipped_steps"] != "[2]" {
			t.Fatalf("the client-side skip was not logged: %v %v", logged, attrs)
		}
		_, _, err = newStore(damaging, log, eino.WithCorruptPolicy(eino.Refuse)).Get(ctx, "on-the-way")
		if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
			t.Fatalf("Refuse: Get = %v; want CHECKPOINT_CORRUPT", err)
		}
	})
}
