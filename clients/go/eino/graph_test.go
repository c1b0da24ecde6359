// The crash test: a real Eino graph interrupts for approval, its process is SIGKILLed while it
// waits, and a new process resumes from the same checkpoint id to completion, with each node's
// side effect done exactly once; then the finished id starts over. On SQLite and Postgres.

package eino_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestGraphKilledWhileAwaitingApprovalIsResumedByANewProcessWithEachSideEffectOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, server *testserver.Server) {
		effects := t.TempDir() + "/effects"
		const id = "approval-thread"

		killAfterInterrupt(t, server, effects, id, "hello")
		expectEffects(t, effects, "draft: hello")
		if _, found, err := newStore(dial(t, server), &recordedLog{}).Get(testContext(t), id); err != nil || !found {
			t.Fatalf("no checkpoint survived the kill: found %v, %v", found, err)
		}

		// A new process approves by resuming; its own input is ignored, the checkpoint's used.
		output := runToCompletion(t, server, effects, id, "ignored")
		if output != "hello drafted sent" {
			t.Fatalf("the resumed graph returned %q", output)
		}
		expectEffects(t, effects, "draft: hello", "send: hello drafted")
		if _, found, err := newStore(dial(t, server), &recordedLog{}).Get(testContext(t), id); err != nil || found {
			t.Fatalf("the finished run's checkpoint remains: found %v, %v", found, err)
		}

		// The id is free again: a new input starts a new run instead of the old interrupt.
		killAfterInterrupt(t, server, effects, id, "again")
		expectEffects(t, effects, "draft: hello", "send: hello drafted", "draft: again")
	})
}

// agentCommand is the test binary as the agent process, killed if ctx ends first.
func agentCommand(ctx context.Context, server *testserver.Server, effects, id, input string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), agentEnv+"=1", agentServerEnv+"="+server.Addr(),
		agentEffectsEnv+"="+effects, agentCheckpointEnv+"="+id, agentInputEnv+"="+input)
	cmd.Stderr = os.Stderr
	return cmd
}

// killAfterInterrupt starts an agent, waits until it reports the interrupt (its checkpoint is
// saved by then), and SIGKILLs it.
func killAfterInterrupt(t *testing.T, server *testserver.Server, effects, id, input string) {
	t.Helper()
	cmd := agentCommand(testContext(t), server, effects, id, input)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, awaitingApproval) || !strings.Contains(line, "send") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the agent did not interrupt before send: %q (%v)", line, ok)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the agent did not interrupt within a minute")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the agent was not killed by SIGKILL: %v", err)
	}
}

// runToCompletion runs an agent that must finish, and returns its output.
func runToCompletion(t *testing.T, server *testserver.Server, effects, id, input string) string {
	t.Helper()
	out, err := agentCommand(testContext(t), server, effects, id, input).Output()
	if err != nil {
		t.Fatalf("the resuming agent failed: %v (stdout %q)", err, out)
	}
	output, found := strings.CutPrefix(strings.TrimSpace(string(out)), outputPrefix)
	if !found {
		t.Fatalf("the resuming agent did not complete: %q", out)
	}
	return output
}

// expectEffects fails unless the effects file holds exactly these lines, in order.
func expectEffects(t *testing.T, effects string, want ...string) {
	t.Helper()
	data, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("side effects %q, want %q", got, want)
	}
}
