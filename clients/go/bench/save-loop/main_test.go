// The save-loop program as checkpointd-bench runs it, against a real `checkpointd serve`: one
// JSON line holding a timing per measured operation (warm-up left out but still saved), through
// the client and with --floor, and a refusal when a flag the bench passes is missing.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestPrintsOneTimingPerMeasuredOperationAndSavesTheWarmUpToo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	server := testserver.Start(t, testserver.Options{})
	stateFile := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(stateFile, []byte(`{"turn":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := checkpointd.Dial(server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, mode := range [][]string{nil, {"--floor"}} {
		runID := "save-loop" + strings.Join(mode, "")
		var stdout bytes.Buffer
		args := append([]string{"--target", "http://" + server.Addr(), "--run", runID,
			"--state-file", stateFile, "--iterations", "5", "--warmup", "2"}, mode...)
		if err := run(ctx, args, &stdout); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		var printed timings
		if err := json.Unmarshal(stdout.Bytes(), &printed); err != nil {
			t.Fatalf("%v printed %q, not one JSON line: %v", mode, stdout.String(), err)
		}
		if len(printed.SaveMicros) != 5 || len(printed.LoadMicros) != 5 {
			t.Fatalf("%v printed %d saves and %d loads, want 5 of each", mode, len(printed.SaveMicros), len(printed.LoadMicros))
		}
		for _, micros := range append(printed.SaveMicros, printed.LoadMicros...) {
			if micros <= 0 {
				t.Fatalf("%v printed a round trip of %d µs: %s", mode, micros, stdout.String())
			}
		}
		latest, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
		if err != nil {
			t.Fatal(err)
		}
		if step := latest.GetCheckpoint().GetStep(); step != 7 {
			t.Fatalf("%v: the run's latest step is %d, want 7 (2 warm-up + 5 measured)", mode, step)
		}
	}
}

func TestRefusesToRunWithoutTheIterations(t *testing.T) {
	err := run(context.Background(), []string{"--target", "http://127.0.0.1:1", "--run", "r",
		"--state-file", "state.json"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--iterations") {
		t.Fatalf("run without --iterations: %v, want a refusal naming the flags", err)
	}
}
