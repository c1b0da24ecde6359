// Eino's stateful interrupts across processes: a compiled graph whose "approve" node stops with
// compose.StatefulInterrupt (its draft saved as the interrupt's state) is checkpointed through
// the store; the process is SIGKILLed while it waits, and a NEW process resumes it with the
// person's decision (compose.ResumeWithData on the interrupt's id). Each node's side effect is
// done once: draft before the kill, the decision and send after it.

package eino_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudwego/eino/compose"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// The stateful agent's settings, besides agentServerEnv, agentEffectsEnv, agentCheckpointEnv
// and agentInputEnv.
const (
	statefulEnv  = "EINO_TEST_STATEFUL_AGENT" // set: this process is the stateful agent
	resumeIDEnv  = "EINO_TEST_RESUME_ID"      // the interrupt to resume, with decisionEnv
	decisionEnv  = "EINO_TEST_DECISION"
	interruptTag = "interrupt "
)

func TestStatefulInterruptResumedWithDataByANewProcessAfterSIGKILL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, server *testserver.Server) {
		effects := t.TempDir() + "/effects"
		const id = "stateful-thread"

		asker := statefulCommand(testContext(t), server, effects, id, "hello", "", "")
		stdout, err := asker.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := asker.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		interruptID, found := strings.CutPrefix(strings.TrimSpace(line), interruptTag)
		if !found || interruptID == "" {
			_ = asker.Process.Kill()
			_ = asker.Wait()
			t.Fatalf("the agent did not interrupt: %q", line)
		}
		if err := asker.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var exit *exec.ExitError
		if err := asker.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the agent was not killed by SIGKILL: %v", err)
		}
		expectEffects(t, effects, "draft: hello", "approve: asked about hello drafted")

		out, err := statefulCommand(testContext(t), server, effects, id, "", interruptID, "approved by Ada").Output()
		if err != nil {
			t.Fatalf("the resuming process failed: %v (stdout %q)", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != outputPrefix+"hello drafted (approved by Ada) sent" {
			t.Fatalf("the resumed graph returned %q", got)
		}
		expectEffects(t, effects, "draft: hello", "approve: asked about hello drafted",
			"approve: approved by Ada", "send: hello drafted (approved by Ada)")
	})
}

// statefulCommand is the test binary as the stateful agent, killed if ctx ends first.
func statefulCommand(ctx context.Context, server *testserver.Server, effects, id, input, resumeID, decision string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), statefulEnv+"=1", agentServerEnv+"="+server.Addr(), agentEffectsEnv+"="+effects,
		agentCheckpointEnv+"="+id, agentInputEnv+"="+input, resumeIDEnv+"="+resumeID, decisionEnv+"="+decision)
	cmd.Stderr = os.Stderr
	return cmd
}

// runStatefulAgent invokes the graph, or resumes the interrupt resumeIDEnv names with
// decisionEnv. Interrupted, it prints "interrupt <id>" and waits to be killed; completed, it
// prints the output.
func runStatefulAgent(ctx context.Context) int {
	client, err := checkpointd.Dial(os.Getenv(agentServerEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer client.Close()
	store := eino.New(client)
	graph, err := statefulGraph(ctx, store, os.Getenv(agentEffectsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if resumeID := os.Getenv(resumeIDEnv); resumeID != "" {
		ctx = compose.ResumeWithData(ctx, resumeID, os.Getenv(decisionEnv))
	}
	output, err := eino.InvokeThenDelete(ctx, store, graph, os.Getenv(agentCheckpointEnv), os.Getenv(agentInputEnv))
	if info, interrupted := compose.ExtractInterruptInfo(err); interrupted && len(info.InterruptContexts) > 0 {
		fmt.Println(interruptTag + info.InterruptContexts[0].ID)
		select {} // the parent kills this process here
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(outputPrefix + output)
	return 0
}

// statefulGraph is draft -> approve -> send. approve interrupts with the draft as its state
// and, resumed with a decision, appends it to the draft it saved; each node appends what it
// did to the effects file.
func statefulGraph(ctx context.Context, store *eino.Store, effects string) (compose.Runnable[string, string], error) {
	graph := compose.NewGraph[string, string]()
	draft := compose.InvokableLambda(func(_ context.Context, input string) (string, error) {
		return input + " drafted", appendLine(effects, "draft: "+input)
	})
	approve := compose.InvokableLambda(func(ctx context.Context, draft string) (string, error) {
		interrupted, _, saved := compose.GetInterruptState[string](ctx)
		if resumed, has, decision := compose.GetResumeContext[string](ctx); interrupted && resumed && has {
			return saved + " (" + decision + ")", appendLine(effects, "approve: "+decision)
		}
		if interrupted {
			draft = saved
		}
		if err := appendLine(effects, "approve: asked about "+draft); err != nil {
			return "", err
		}
		return "", compose.StatefulInterrupt(ctx, "approve "+draft+"?", draft)
	})
	send := compose.InvokableLambda(func(_ context.Context, input string) (string, error) {
		return input + " sent", appendLine(effects, "send: "+input)
	})
	for name, node := range map[string]*compose.Lambda{"draft": draft, "approve": approve, "send": send} {
		if err := graph.AddLambdaNode(name, node); err != nil {
			return nil, err
		}
	}
	for _, edge := range [][2]string{{compose.START, "draft"}, {"draft", "approve"}, {"approve", "send"}, {"send", compose.END}} {
		if err := graph.AddEdge(edge[0], edge[1]); err != nil {
			return nil, err
		}
	}
	return graph.Compile(ctx, compose.WithCheckPointStore(store))
}
