// A session outlives the process writing it: a child process appends events as fast as it
// can and reports each acknowledged one; it is SIGKILLed mid-stream, and a new client finds
// every acknowledged event intact and in order, the state matching the last stored event,
// and the session still appendable.

package adk

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
	"time"

	"google.golang.org/adk/v2/session"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

const (
	// crashChildEnv makes the test binary the appending child: "addr tenant".
	crashChildEnv = "ADK_CRASH_CHILD"
	// ackedBeforeKill is how many acknowledged events the parent waits for before SIGKILL.
	ackedBeforeKill = 25
)

func crashEventText(i int) string { return fmt.Sprintf("payload %d: %s", i, strings.Repeat("x", i)) }

// runCrashChild appends events e0, e1, ... to session crash/u/s until it is killed, printing
// "acked eN" after each AppendEvent returns.
func runCrashChild() int {
	var addr, tenant string
	if _, err := fmt.Sscan(os.Getenv(crashChildEnv), &addr, &tenant); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	client, err := checkpointd.Dial(addr, checkpointd.WithTenant(tenant))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	ctx := context.Background()
	s := New(client)
	got, err := s.Get(ctx, &session.GetRequest{AppName: "crash", UserID: "u", SessionID: "s"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	for i := 0; ; i++ {
		event := textEvent(fmt.Sprintf("e%d", i), crashEventText(i), time.Now(),
			map[string]any{"count": float64(i + 1), "user:last": fmt.Sprintf("e%d", i)})
		if err := s.AppendEvent(ctx, got.Session, event); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 1
		}
		fmt.Fprintf(os.Stdout, "acked e%d\n", i)
	}
}

func TestASessionKeepsEveryAcknowledgedEventAfterItsWriterIsKilled(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		tenant := freshTenant()
		mustCreate(t, New(dial(t, server, tenant)), "crash", "u", "s")

		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), crashChildEnv+"="+server.Addr()+" "+tenant)
		stdout, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		child.Stderr = &stderr
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		var acked []string
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			acked = append(acked, strings.TrimPrefix(lines.Text(), "acked "))
			if len(acked) == ackedBeforeKill {
				if err := child.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		err = child.Wait()
		if status, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || status.Signal() != syscall.SIGKILL {
			t.Fatalf("the child was not killed by SIGKILL (%v): %s", err, stderr.String())
		}

		// A new process: a new connection, a new service.
		s := New(dial(t, server, tenant))
		got := mustGet(t, s, "crash", "u", "s")
		stored := eventIDs(got)
		t.Logf("%d events acknowledged before the kill landed, %d stored", len(acked), len(stored))
		// Every acknowledged event is there, in order; at most the one in flight is there too.
		if len(stored) < len(acked) || len(stored) > len(acked)+1 {
			t.Fatalf("%d events stored, %d acknowledged: %v", len(stored), len(acked), stored)
		}
		for i := range got.Events().Len() {
			event := got.Events().At(i)
			if event.ID != fmt.Sprintf("e%d", i) || event.Content.Parts[0].Text != crashEventText(i) {
				t.Fatalf("event %d is %s %q", i, event.ID, event.Content.Parts[0].Text)
			}
		}
		last := fmt.Sprintf("e%d", len(stored)-1)
		if count, _ := got.State().Get("count"); count != float64(len(stored)) {
			t.Errorf("state count = %v, want %d", count, len(stored))
		}
		if user, _ := got.State().Get("user:last"); user != last && user != fmt.Sprintf("e%d", len(stored)-2) {
			t.Errorf("user:last = %v, want %s (or the one before, if the kill came between the two writes)", user, last)
		}
		// The server agrees every checkpoint verifies, and the session goes on.
		runID, _ := sessionRunID("crash", "u", "s")
		verdicts, err := s.client.Checkpoints.Validate(t.Context(), &checkpointv1.ValidateRequest{RunId: runID})
		if err != nil {
			t.Fatal(err)
		}
		for _, verdict := range verdicts.GetVerdicts() {
			if !verdict.GetValid() {
				t.Errorf("step %d does not verify: %s", verdict.GetStep(), verdict.GetReason())
			}
		}
		err = s.AppendEvent(t.Context(), got, textEvent("after-crash", "on", time.Now(), nil))
		if errors.Is(err, checkpointd.ErrStepConflict) && len(stored) == len(acked) {
			// The killed writer's in-flight save reached the server after this Get: the copy
			// is stale and fenced, as any stale copy is. Read again: it must be that event.
			got = mustGet(t, s, "crash", "u", "s")
			if again := eventIDs(got); len(again) != len(acked)+1 || again[len(again)-1] != fmt.Sprintf("e%d", len(acked)) {
				t.Fatalf("after a refused append, the session holds %v; only the in-flight e%d may have landed", again, len(acked))
			}
			err = s.AppendEvent(t.Context(), got, textEvent("after-crash", "on", time.Now(), nil))
		}
		if err != nil {
			t.Fatal(err)
		}
		if after := eventIDs(mustGet(t, s, "crash", "u", "s")); after[len(after)-1] != "after-crash" {
			t.Fatalf("events after the recovery append: %v", after)
		}
	})
}
