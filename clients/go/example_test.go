// The README's snippets as compiled examples (no Output: they need a running checkpointd).
// readme_test.go checks that every Go block of README.md is an excerpt of one of these files.

package checkpointd_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// Save a checkpoint with checksum v1, load the latest and verify it on the client.
func Example() {
	ctx := context.Background()
	client, err := checkpointd.Dial("127.0.0.1:50051", checkpointd.WithTenant("default"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	state := []byte(`{"n":1}`)
	messages := []*checkpointv1.Message{{Role: "user", Content: []byte(`{"content":"hi"}`)}}
	chain := checkpointd.MessagesOf(checkpointd.MessageChain{}, messages)
	sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: "run-1", Step: 1,
		ContentType: "application/json", State: state}, chain, checkpointd.ToolChain{})
	_, err = client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: "run-1", Step: 1,
		ContentType: "application/json", State: state, Messages: messages, Checksum: &sum})
	if err != nil {
		log.Fatal(err)
	}

	loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: "run-1"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := checkpointd.VerifyCheckpoint(loaded.Checkpoint, loaded.ToolResults,
		loaded.ToolIntents, checkpointd.MessageChain{}); err != nil {
		log.Fatal(err) // errors.Is(err, checkpointd.ErrCheckpointCorrupt): do not restore from it
	}
	fmt.Println("step", loaded.Checkpoint.Step)
}

// Branch on a refusal's reason (or, for an unknown one, its code), never on its message.
func ExampleError() {
	client, err := checkpointd.Dial("127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_, err = client.Checkpoints.GetRun(context.Background(), &checkpointv1.GetRunRequest{RunId: "run-1"})

	if errors.Is(err, checkpointd.ErrRunNotFound) { // one sentinel per reason
		fmt.Println("no such run")
	}
	var e *checkpointd.Error
	if errors.As(err, &e) && e.Code == codes.Unavailable { // an unknown reason: by its code
		fmt.Println("server unreachable:", e.Message)
	}
	if errors.Is(err, context.DeadlineExceeded) { // true for DEADLINE_EXCEEDED
		fmt.Println("too slow")
	}
	fmt.Println(status.Code(err)) // grpc's helpers still work
}
