// A conversation that outlives its process: a child runs ADK's runner over this service for
// a few turns until the agent asks the user to confirm an email, and is SIGKILLed while it
// waits. A new process opens the session, answers the confirmation, and the email goes out
// once; a third process finds nothing pending and sends nothing.

package adk

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// runtimeChildEnv makes the test binary a runtime child: "phase addr tenant session".
const runtimeChildEnv = "ADK_RUNTIME_CHILD"

func TestRunnerConfirmationAnsweredByANewProcessAfterSIGKILLSendsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		tenant, sessionID := freshTenant(), "conversation"
		effects := filepath.Join(t.TempDir(), "effects.txt")
		spec := fmt.Sprintf("%s %s %s", server.Addr(), tenant, sessionID)

		asker := runtimeChild(t, "ask "+spec, effects)
		stdout, err := asker.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := asker.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if !strings.HasPrefix(line, "pending ") {
			_ = asker.Process.Kill()
			_ = asker.Wait()
			t.Fatalf("the first process did not reach the confirmation: %q %v\n%s", line, err, asker.Stderr)
		}
		if err := asker.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = asker.Wait()

		if out := runRuntimeChild(t, "confirm "+spec, effects); out != "sent: mail to ada | echo: thanks" {
			t.Fatalf("the new process answered %q", out)
		}
		if out := runRuntimeChild(t, "confirm "+spec, effects); out != "nothing pending" {
			t.Fatalf("a third process found %q", out)
		}
		if got, _ := os.ReadFile(effects); string(got) != "email to ada\n" {
			t.Fatalf("side effects: %q, want one email", got)
		}
		// The whole conversation, every turn of both processes, in order.
		got, err := New(dial(t, server, tenant)).Get(context.Background(),
			&session.GetRequest{AppName: runtimeApp, UserID: runtimeUser, SessionID: sessionID})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for event := range got.Session.Events().All() {
			if text := lastText([]*session.Event{event}); text != "" {
				texts = append(texts, event.Author+": "+text)
			}
		}
		want := "user: hello|mailer: echo: hello|user: how are you|mailer: echo: how are you|user: send ada|" +
			"mailer: sent: mail to ada|user: thanks|mailer: echo: thanks"
		if strings.Join(texts, "|") != want {
			t.Fatalf("conversation:\n%s\nwant\n%s", strings.Join(texts, "|"), want)
		}
	})
}

// runtimeChild is this test binary as a runtime child in phase spec.
func runtimeChild(t *testing.T, spec, effects string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runtimeChildEnv+"="+spec, sideEffectFileEnv+"="+effects)
	cmd.Stderr = &strings.Builder{}
	return cmd
}

// runRuntimeChild runs a child to its end and returns its last line.
func runRuntimeChild(t *testing.T, spec, effects string) string {
	t.Helper()
	cmd := runtimeChild(t, spec, effects)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); _ = cmd.Process.Kill() }()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %q: %v\n%s", spec, err, cmd.Stderr)
	}
	return strings.TrimSpace(string(out))
}

// runRuntimeChild is the child's side: "ask" creates the session, talks for two turns, asks
// for an email, prints "pending <id>" and waits to be killed; "confirm" opens the session,
// confirms what is pending and talks one more turn, printing the agent's two answers.
func runRuntimeChildMain() int {
	var phase, addr, tenant, sessionID string
	if _, err := fmt.Sscan(os.Getenv(runtimeChildEnv), &phase, &addr, &tenant, &sessionID); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	if err := runtimePhase(phase, addr, tenant, sessionID); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func runtimePhase(phase, addr, tenant, sessionID string) error {
	ctx := context.Background()
	client, err := checkpointd.Dial(addr, checkpointd.WithTenant(tenant))
	if err != nil {
		return err
	}
	sessions := New(client)
	r, err := newRuntime(sessions)
	if err != nil {
		return err
	}
	user := func(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleUser) }
	switch phase {
	case "ask":
		if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: runtimeApp, UserID: runtimeUser,
			SessionID: sessionID}); err != nil {
			return err
		}
		for _, text := range []string{"hello", "how are you"} {
			events, err := runTurn(ctx, r, sessionID, user(text))
			if err != nil {
				return err
			}
			if got := lastText(events); got != "echo: "+text {
				return fmt.Errorf("turn %q answered %q", text, got)
			}
		}
		events, err := runTurn(ctx, r, sessionID, user("send ada"))
		if err != nil {
			return err
		}
		id := pendingConfirmation(events)
		if id == "" {
			return fmt.Errorf("no confirmation asked for in %d events", len(events))
		}
		fmt.Println("pending", id)
		select {} // waits for SIGKILL
	case "confirm":
		got, err := sessions.Get(ctx, &session.GetRequest{AppName: runtimeApp, UserID: runtimeUser, SessionID: sessionID})
		if err != nil {
			return err
		}
		var history []*session.Event
		for event := range got.Session.Events().All() {
			history = append(history, event)
		}
		id := pendingConfirmation(history)
		if id == "" {
			fmt.Println("nothing pending")
			return nil
		}
		confirmed, err := runTurn(ctx, r, sessionID, confirmation(id, true))
		if err != nil {
			return err
		}
		thanks, err := runTurn(ctx, r, sessionID, user("thanks"))
		if err != nil {
			return err
		}
		fmt.Printf("%s | %s\n", lastText(confirmed), lastText(thanks))
		return nil
	}
	return fmt.Errorf("unknown phase %q", phase)
}
