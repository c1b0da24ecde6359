// Command crash-agent is the Go side-effect agent of the shared scenarios
// (tests/scenarios/README.md, "agent"): crash-agent TARGET RUN_ID DIR [--hang-after-email],
// TARGET host:port or http://host:port.
//
// Eight steps on the recovery loop, checkpoints every 3. Each step journals a lookup; step 5
// also sends an email through an intent and its idempotency key. Every real tool execution is
// appended to DIR/tools.log and every email actually sent (once per key) to DIR/effects.log,
// the files the Python and TypeScript agents of a run share. With --hang-after-email the
// process writes DIR/hanging once step 5's email went out, before its result is journalled, and
// hangs there until it is killed. On success it prints the result as one JSON line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/internal/agentfiles"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

func main() {
	if len(os.Args) < 4 || len(os.Args) > 5 || (len(os.Args) == 5 && os.Args[4] != "--hang-after-email") {
		fmt.Fprintln(os.Stderr, "usage: crash-agent TARGET RUN_ID DIR [--hang-after-email]")
		os.Exit(2)
	}
	target, runID, dir := os.Args[1], os.Args[2], os.Args[3]
	hang := len(os.Args) == 5
	client, err := checkpointd.Dial(target)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	store := recovery.NewCheckpointStore(client.Checkpoints, nil)
	agent, err := recovery.NewRecoverableAgent(sideEffectAgent(dir, hang), store, recovery.WithCheckpointEveryN(3))
	if err != nil {
		log.Fatal(err)
	}
	result, err := agent.Run(context.Background(), runID, map[string]string{"goal": "report"})
	if err != nil {
		log.Fatal(err)
	}
	line, _ := json.Marshal(map[string]any{"runId": result.RunID, "result": result.Result,
		"recoveredFromStep": result.RecoveredFromStep, "restartedFromScratch": result.RestartedFromScratch,
		"resurrections": result.Resurrections, "toolsExecuted": result.ToolsExecuted, "toolsReplayed": result.ToolsReplayed})
	fmt.Println(string(line))
}

type email struct {
	Key string `json:"key"`
	To  string `json:"to"`
}

func sideEffectAgent(dir string, hang bool) recovery.AgentFunc {
	return func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		fact, err := recovery.CallTool(ctx, step, "lookup", func(context.Context) (int64, error) {
			return step.Step * 10, agentfiles.AppendLine(filepath.Join(dir, "tools.log"), fmt.Sprintf("lookup@%d", step.Step))
		})
		if err != nil {
			return nil, err
		}
		total, _ := step.State()["total"].(float64)
		step.State()["total"] = total + float64(fact)
		step.AddMessage("assistant", fmt.Sprintf("step %d", step.Step))
		if step.Step == 5 {
			_, err := recovery.CallSideEffect(ctx, step, "send_email", func(_ context.Context, key string) (email, error) {
				if err := agentfiles.AppendLine(filepath.Join(dir, "tools.log"), "send_email@"+key); err != nil {
					return email{}, err
				}
				sent, err := sendEmail(dir, key, "ops@example.com")
				if err == nil && hang {
					if err := os.WriteFile(filepath.Join(dir, "hanging"), []byte("step 5 email sent, result not journalled\n"), 0o644); err != nil {
						return email{}, err
					}
					select {} // until SIGKILL
				}
				return sent, err
			}, recovery.RetryWithKey)
			if err != nil {
				return nil, err
			}
		}
		if step.Step == 8 {
			return &recovery.Done{Result: map[string]any{"total": step.State()["total"]}}, nil
		}
		return nil, nil
	}
}

// sendEmail sends at most one email per idempotency key, as a tool that honours the key does.
func sendEmail(dir, key, to string) (email, error) {
	path := filepath.Join(dir, "effects.log")
	if file, err := os.Open(path); err == nil {
		defer file.Close()
		lines := bufio.NewScanner(file)
		for lines.Scan() {
			var sent email
			if json.Unmarshal(lines.Bytes(), &sent) == nil && sent.Key == key {
				return email{Key: key, To: to}, nil
			}
		}
	}
	line, _ := json.Marshal(email{Key: key, To: to})
	return email{Key: key, To: to}, agentfiles.AppendLine(path, string(line))
}
