// Command workerfixture is the worker process the worker tests run (built by them with go
// build): the worker's flags (package worker) around the agent the TypeScript worker tests run
// (clients/typescript/test/fixtures/worker-agent.mjs), through worker.Main: it exits on SIGTERM
// after the drain.
//
// Six steps, each journalling a lookup appended to $AGENT_DIR/tools.log. Fault injection from the
// environment: AGENT_HANG_AT=K writes $AGENT_DIR/hanging at step K and waits for its context
// (a lost lease or the drain deadline); AGENT_APPROVAL_AT=K asks a human at step K;
// AGENT_FATAL_AT=K fails fatally; AGENT_TRANSIENT_AT=K fails transiently at step K, every time,
// noting each try in $AGENT_DIR/attempts.log; AGENT_EMAIL_AT=K sends an email at step K through
// an intent (policy AGENT_EMAIL_POLICY, default retry_with_key) into $AGENT_DIR/effects.log,
// honouring its key, and with AGENT_HANG_AFTER_EMAIL=1 hangs right after it, before its result
// is journalled, until killed; AGENT_BARRIER=N makes step 2 of every run wait (on its context)
// until N runs reached it, which only tasks in flight at once can do.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/checkpointd/checkpointd/clients/go/internal/agentfiles"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
	"github.com/checkpointd/checkpointd/clients/go/worker"
)

const steps = 6

func main() { worker.Main(agent(os.Getenv("AGENT_DIR"))) }

func at(name string) int64 {
	value, err := strconv.ParseInt(os.Getenv(name), 10, 64)
	if err != nil {
		return -1
	}
	return value
}

func agent(dir string) recovery.AgentFunc {
	return func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		found, err := recovery.CallTool(ctx, step, "lookup", func(context.Context) (int64, error) {
			return step.Step, agentfiles.AppendLine(filepath.Join(dir, "tools.log"), fmt.Sprintf("lookup@%d", step.Step))
		})
		if err != nil {
			return nil, err
		}
		state := step.State()
		sum, _ := state["sum"].(float64)
		state["sum"] = sum + float64(found)
		task, _ := json.Marshal(step.Task())
		step.AddMessage("assistant", fmt.Sprintf("step %d for %s", step.Step, task))
		if step.Step == 2 && at("AGENT_BARRIER") > 0 {
			if err := barrier(ctx, dir, step.RunID(), int(at("AGENT_BARRIER"))); err != nil {
				return nil, err
			}
		}
		switch step.Step {
		case at("AGENT_HANG_AT"):
			if err := hang(dir); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		case at("AGENT_FATAL_AT"):
			return nil, recovery.Fatal(errors.New("the agent's configuration is wrong"))
		case at("AGENT_EMAIL_AT"):
			policy := recovery.InDoubtPolicy(os.Getenv("AGENT_EMAIL_POLICY"))
			if _, err := step.CallSideEffect(ctx, "send_email", func(_ context.Context, key string) (any, error) {
				sent, err := sendEmail(filepath.Join(dir, "effects.log"), key, "ops@example.com")
				if err == nil && os.Getenv("AGENT_HANG_AFTER_EMAIL") != "" {
					if err := hang(dir); err != nil {
						return nil, err
					}
					select {} // until SIGKILL
				}
				return sent, err
			}, policy); err != nil {
				return nil, err
			}
		case at("AGENT_TRANSIENT_AT"):
			if err := agentfiles.AppendLine(filepath.Join(dir, "attempts.log"), fmt.Sprintf("step %d", step.Step)); err != nil {
				return nil, err
			}
			return nil, errors.New("connection reset by peer")
		case at("AGENT_APPROVAL_AT"):
			decision, err := step.RequestApproval("deploy", map[string]string{"target": "prod"})
			if err != nil {
				return nil, err
			}
			state["approvedBy"] = nil
			if decision.Approved {
				state["approvedBy"] = decision.DecidedBy
			}
		}
		if step.Step == steps {
			return &recovery.Done{Result: map[string]any{"sum": state["sum"], "approvedBy": state["approvedBy"]}}, nil
		}
		return nil, nil
	}
}

// barrier marks that runID reached it and waits until n runs did.
func barrier(ctx context.Context, dir, runID string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, "barrier-"+runID), nil, 0o644); err != nil {
		return err
	}
	for {
		reached, err := filepath.Glob(filepath.Join(dir, "barrier-*"))
		if err != nil || len(reached) >= n {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hang marks that the agent is stuck in a step, for the test watching it.
func hang(dir string) error {
	return os.WriteFile(filepath.Join(dir, "hanging"), fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
}

// sendEmail sends at most one email per idempotency key: a key already in the file sends nothing.
func sendEmail(path, key, to string) (map[string]string, error) {
	if file, err := os.Open(path); err == nil {
		defer file.Close()
		lines := bufio.NewScanner(file)
		for lines.Scan() {
			var sent map[string]string
			if json.Unmarshal(lines.Bytes(), &sent) == nil && sent["key"] == key {
				return map[string]string{"sentTo": to}, nil
			}
		}
	}
	line, _ := json.Marshal(map[string]string{"key": key, "to": to})
	return map[string]string{"sentTo": to}, agentfiles.AppendLine(path, string(line))
}
