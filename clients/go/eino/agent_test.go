// The agent process of the crash test: a real Eino graph on the checkpointd store, run by a
// child copy of the test binary (TestMain sends it here when agentEnv is set). It drafts a
// message, waits for approval before the node that sends it (an interrupt before "send"), and
// records every node run in a file, so the parent can count side effects across processes.

package eino_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cloudwego/eino/compose"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
)

// The child's settings, passed in its environment.
const (
	agentEnv           = "EINO_TEST_AGENT"   // set: this process is the agent
	agentServerEnv     = "EINO_TEST_SERVER"  // host:port of checkpointd
	agentEffectsEnv    = "EINO_TEST_EFFECTS" // file each node run appends a line to
	agentCheckpointEnv = "EINO_TEST_CHECKPOINT_ID"
	agentInputEnv      = "EINO_TEST_INPUT"
)

// What the agent prints for the parent to read.
const (
	awaitingApproval = "awaiting approval before send"
	outputPrefix     = "output: "
)

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) != "" {
		os.Exit(runAgent(context.Background()))
	}
	if os.Getenv(statefulEnv) != "" {
		os.Exit(runStatefulAgent(context.Background()))
	}
	os.Exit(m.Run())
}

// runAgent runs (or resumes) the graph under the checkpoint id. Interrupted, it says so and
// waits for the parent to SIGKILL it, as a process awaiting a person's approval would be lost;
// completed, it prints the output and exits 0.
func runAgent(ctx context.Context) int {
	client, err := checkpointd.Dial(os.Getenv(agentServerEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer client.Close()
	store := eino.New(client)
	graph, err := approvalGraph(ctx, store, os.Getenv(agentEffectsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	output, err := eino.InvokeThenDelete(ctx, store, graph, os.Getenv(agentCheckpointEnv), os.Getenv(agentInputEnv))
	if info, interrupted := compose.ExtractInterruptInfo(err); interrupted {
		fmt.Printf("%s %v\n", awaitingApproval, info.BeforeNodes)
		select {} // the parent kills this process here
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(outputPrefix + output)
	return 0
}

// approvalGraph is draft -> send, interrupting before send; each node appends its name and
// input to the effects file, the stand-in for a side effect that must not repeat.
func approvalGraph(ctx context.Context, store *eino.Store, effects string) (compose.Runnable[string, string], error) {
	graph := compose.NewGraph[string, string]()
	for name, suffix := range map[string]string{"draft": " drafted", "send": " sent"} {
		node := compose.InvokableLambda(func(_ context.Context, input string) (string, error) {
			if err := appendLine(effects, name+": "+input); err != nil {
				return "", err
			}
			return input + suffix, nil
		})
		if err := graph.AddLambdaNode(name, node); err != nil {
			return nil, err
		}
	}
	for _, edge := range [][2]string{{compose.START, "draft"}, {"draft", "send"}, {"send", compose.END}} {
		if err := graph.AddEdge(edge[0], edge[1]); err != nil {
			return nil, err
		}
	}
	return graph.Compile(ctx, compose.WithCheckPointStore(store), compose.WithInterruptBeforeNodes([]string{"send"}))
}

// appendLine appends one line and syncs it, so a SIGKILL right after cannot lose it.
func appendLine(path, line string) error {
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(file, line); err != nil {
		_ = file.Close()
		return err
	}
	if err := file.Sync(); err != nil {
		_ = file.Close()
		return err
	}
	return file.Close()
}
