// Command saveload is the Go quickstart: it saves two checkpoints of a run with checksum v1,
// loads the latest back, verifies it on the client and prints what it restored. Run it against
// a server: go run ./examples/saveload --server 127.0.0.1:50051
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

func main() {
	server := flag.String("server", "127.0.0.1:50051", "checkpointd's address (host:port or https://host:port)")
	runID := flag.String("run", fmt.Sprintf("go-quickstart-%d", time.Now().Unix()), "the run to save")
	flag.Parse()

	client, err := checkpointd.Dial(*server, checkpointd.WithToken(os.Getenv("CHECKPOINTD_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var messageLog checkpointd.MessageChain
	for step := uint64(1); step <= 2; step++ {
		state := fmt.Appendf(nil, `{"counter":%d}`, step)
		messages := []*checkpointv1.Message{{Role: "user", Content: fmt.Appendf(nil, `{"content":"step %d"}`, step)}}
		offset := messageLog.Len
		messageLog = checkpointd.MessagesOf(messageLog, messages)
		sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: *runID, Step: step,
			ContentType: "application/json", State: state}, messageLog, checkpointd.ToolChain{})
		// Save sends only the messages added since the last save, and where they start.
		if _, err := client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: *runID, Step: int64(step),
			ContentType: "application/json", State: state, Messages: messages, MessageOffset: offset,
			Checksum: &sum}); err != nil {
			log.Fatalf("save step %d: %v", step, err)
		}
		fmt.Printf("saved %s step %d checksum %s\n", *runID, step, sum)
	}

	loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: *runID})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := checkpointd.VerifyCheckpoint(loaded.GetCheckpoint(), loaded.GetToolResults(),
		loaded.GetToolIntents(), checkpointd.MessageChain{}); err != nil {
		log.Fatalf("not restoring a corrupt checkpoint: %v", err)
	}
	checkpoint := loaded.GetCheckpoint()
	fmt.Printf("restored step %d: state %s, %d messages, checksum verified\n",
		checkpoint.GetStep(), checkpoint.GetState(), len(checkpoint.GetMessages()))
}
