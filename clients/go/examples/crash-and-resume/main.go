// Command crash-and-resume is the reference example: an agent checkpointed every 3 steps
// crashes at step 5 and resumes from step 3. Its lookup tool is journalled, so the steps
// re-run after the crash (4 and 5) reuse their recorded results instead of calling it again.
// It mirrors clients/typescript/examples/crash-and-resume.mjs and prints the same lines.
//
//	go run ./examples/crash-and-resume --server 127.0.0.1:50051 [--run-id ID]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// fact is what the lookup tool returns.
type fact struct {
	Fact string `json:"fact"`
}

func main() {
	server := flag.String("server", "127.0.0.1:50051", "checkpointd's address (host:port or http(s)://host:port)")
	runID := flag.String("run-id", "go-quickstart-"+randomHex(4), "the run")
	flag.Parse()

	client, err := checkpointd.Dial(*server, checkpointd.WithToken(os.Getenv("CHECKPOINTD_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	store := recovery.NewCheckpointStore(client.Checkpoints, nil)

	lookupCalls := 0
	crashed := false
	// lookup stands in for a real tool (a search, an API call): counted to show it runs once.
	lookup := func(step int64) fact {
		lookupCalls++
		return fact{Fact: fmt.Sprintf("fact #%d", step)}
	}
	// agent is one step; step.Step starts at 1.
	agent := func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		found, err := recovery.CallTool(ctx, step, "lookup", func(context.Context) (fact, error) {
			return lookup(step.Step), nil
		})
		if err != nil {
			return nil, err
		}
		step.AddMessage("assistant", fmt.Sprintf("step %d: %s", step.Step, found.Fact))
		facts, _ := step.State()["facts"].(float64)
		step.State()["facts"] = facts + 1
		fmt.Printf("step %d done\n", step.Step)
		if step.Step == 5 && !crashed {
			crashed = true
			fmt.Println("step 5: simulated crash")
			return nil, errors.New("simulated crash at step 5 (connection reset)")
		}
		if step.Step == 8 {
			return &recovery.Done{Result: map[string]any{"facts": step.State()["facts"], "messages": len(step.Messages())}}, nil
		}
		return nil, nil
	}

	recoverable, err := recovery.NewRecoverableAgent(agent, store, recovery.WithCheckpointEveryN(3))
	if err != nil {
		log.Fatal(err)
	}
	outcome, err := recoverable.Run(context.Background(), *runID, map[string]string{"goal": "collect 8 facts"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("run %s: result %s\n", *runID, outcome.Result)
	fmt.Printf("recoveredFromStep=%d\n", outcome.RecoveredFromStep)
	fmt.Printf("lookup calls: %d for 8 steps (%d replayed from the journal)\n", lookupCalls, outcome.ToolsReplayed)
}

func randomHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}
