// The save loop against a real `checkpointd serve`: successive steps saved and verified through
// the client and through a bare stub, and a LoadLatest that returns a step the loop did not save
// refused, so a bench contender cannot time a load that returned the wrong checkpoint.

package saveloop_test

import (
	"context"
	"strings"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/saveloop"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

var state = []byte(`{"memory":"the agent's state","turn":1}`)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, server *testserver.Server) *checkpointd.Client {
	client, err := checkpointd.Dial(server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func TestEachSaveWritesTheNextStepAndItsLoadVerifies(t *testing.T) {
	ctx := testContext(t)
	server := testserver.Start(t, testserver.Options{})
	client := dial(t, server)
	bare, conn, err := saveloop.DialBare(server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	for name, checkpoints := range map[string]checkpointv1.CheckpointServiceClient{
		"client": client.Checkpoints, "bare": bare} {
		runID := "saveloop-" + name
		loop := saveloop.New(checkpoints, runID, state)
		for range 3 {
			if err := loop.Save(ctx); err != nil {
				t.Fatal(err)
			}
			if err := loop.LoadLatest(ctx); err != nil {
				t.Fatal(err)
			}
		}
		latest, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
		if err != nil {
			t.Fatal(err)
		}
		if got := latest.GetCheckpoint(); got.GetStep() != 3 || string(got.GetState()) != string(state) ||
			got.GetContentType() != saveloop.ContentType {
			t.Fatalf("%s: latest is step %d with %q (%s), want step 3 with the loop's state",
				name, got.GetStep(), got.GetState(), got.GetContentType())
		}
	}
}

func TestLoadLatestRefusesAStepTheLoopDidNotSave(t *testing.T) {
	ctx := testContext(t)
	server := testserver.Start(t, testserver.Options{})
	client := dial(t, server)
	loop := saveloop.New(client.Checkpoints, "saveloop-two-writers", state)
	if err := loop.Save(ctx); err != nil {
		t.Fatal(err)
	}
	// Another writer saves step 2 of the same run, with a valid checksum.
	sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: "saveloop-two-writers", Step: 2,
		ContentType: saveloop.ContentType, State: state}, checkpointd.MessageChain{}, checkpointd.ToolChain{})
	if _, err := client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: "saveloop-two-writers", Step: 2,
		ContentType: saveloop.ContentType, State: state, Checksum: &sum}); err != nil {
		t.Fatal(err)
	}
	err := loop.LoadLatest(ctx)
	if err == nil || !strings.Contains(err.Error(), "step 2, not the 1 just saved") {
		t.Fatalf("LoadLatest after another writer's step 2: %v, want a refusal naming both steps", err)
	}
}
