// Corruption is reported to every reader until it is repaired (DESIGN.md, contract 13): a
// session whose newest checkpoints are corrupt in the database is read from the newest one that
// verifies, and every Get and List says so (a warning, Session.PassedOver, the temp state key);
// under Refuse every such read fails with CHECKPOINT_CORRUPT.

package adk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// warnings counts the warning records whose message contains a text.
type warnings struct {
	mu       sync.Mutex
	messages []string
}

func (w *warnings) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, record slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	text := record.Message
	record.Attrs(func(a slog.Attr) bool {
		text += fmt.Sprintf(" %s=%v", a.Key, a.Value.Any())
		return true
	})
	w.messages = append(w.messages, text)
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) count(text string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, message := range w.messages {
		if strings.Contains(message, text) {
			n++
		}
	}
	return n
}

// sessionWithCorruptEvents is session s1 with events e1..e3 (steps 1..3) whose steps 3 and 2
// are corrupt in the database: reads fall back to step 1.
func sessionWithCorruptEvents(t *testing.T, server *testserver.Server, tenant string) {
	t.Helper()
	writer := New(dial(t, server, tenant))
	created := mustCreate(t, writer, "app", "u", "s1")
	for i := 1; i <= 3; i++ {
		if err := writer.AppendEvent(t.Context(), created, textEvent(fmt.Sprintf("e%d", i), "hi", time.Now(),
			map[string]any{"n": i})); err != nil {
			t.Fatal(err)
		}
	}
	runID, _ := sessionRunID("app", "u", "s1")
	server.CorruptState(t, runID, 3)
	server.CorruptState(t, runID, 2)
}

func TestEveryReadOfASessionSaysWhichCorruptCheckpointsItFellBackPast(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		tenant := freshTenant()
		sessionWithCorruptEvents(t, server, tenant)
		log := &warnings{}
		s := New(dial(t, server, tenant), WithLogger(slog.New(log)))
		// The first Get quarantines steps 3 and 2; every later read, and List, still says so.
		for read := 1; read <= 3; read++ {
			got := mustGet(t, s, "app", "u", "s1")
			if got.Events().Len() != 1 || got.Events().At(0).ID != "e1" {
				t.Fatalf("read %d: events %v, want [e1]", read, eventIDs(got))
			}
			passed := got.(*Session).PassedOver()
			if steps := checkpointd.PassedOverSteps(passed); fmt.Sprint(steps) != "[3 2]" || passed[0].Label != "event:e3" {
				t.Fatalf("read %d passed over %+v, want steps [3 2], the first labelled event:e3", read, passed)
			}
			if value, err := got.State().Get(StatePassedOverKey); err != nil || fmt.Sprint(value) != "[3 2]" {
				t.Fatalf("read %d: state %s = %v, %v", read, StatePassedOverKey, value, err)
			}
			if n := log.count("fell back past quarantined corrupt checkpoints"); n != read {
				t.Fatalf("after read %d, %d warnings: %v", read, n, log.messages)
			}
		}
		if log.count("passed_over_steps=[3 2]") == 0 || log.count("passed_over=3 (event:e3), 2 (event:e2)") == 0 ||
			log.count("run_id=") == 0 {
			t.Fatalf("the warning does not name the run and the steps: %v", log.messages)
		}
		listed, err := s.List(t.Context(), &session.ListRequest{AppName: "app", UserID: "u"})
		if err != nil || len(listed.Sessions) != 1 || len(listed.Sessions[0].(*Session).PassedOver()) != 2 {
			t.Fatalf("List: %v %v", listed, err)
		}
		if log.count("fell back past quarantined corrupt checkpoints") != 4 {
			t.Fatalf("List did not warn: %v", log.messages)
		}
	})
}

func TestUnderRefuseEveryReadPastCorruptCheckpointsFails(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		tenant := freshTenant()
		sessionWithCorruptEvents(t, server, tenant)
		s := New(dial(t, server, tenant), WithCorruptPolicy(Refuse), WithLogger(slog.New(&warnings{})))
		for read := 1; read <= 2; read++ {
			_, err := s.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
			if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) || !strings.Contains(err.Error(), "steps 3 (event:e3), 2 (event:e2)") {
				t.Fatalf("Get %d: %v, want CHECKPOINT_CORRUPT naming steps 3 and 2 and their events", read, err)
			}
		}
		if _, err := s.List(t.Context(), &session.ListRequest{AppName: "app", UserID: "u"}); !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
			t.Fatalf("List: %v, want CHECKPOINT_CORRUPT", err)
		}
	})
}

func TestASoundSessionSaysNothingPassedOver(t *testing.T) {
	server := testserver.Start(t, testserver.Options{})
	log := &warnings{}
	s := New(dial(t, server, freshTenant()), WithLogger(slog.New(log)), WithCorruptPolicy(Refuse))
	created := mustCreate(t, s, "app", "u", "s1")
	if err := s.AppendEvent(t.Context(), created, textEvent("e1", "hi", time.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "app", "u", "s1")
	if len(got.(*Session).PassedOver()) != 0 || len(log.messages) != 0 {
		t.Fatalf("passed over %v, warnings %v", got.(*Session).PassedOver(), log.messages)
	}
	if _, err := got.State().Get(StatePassedOverKey); !errors.Is(err, session.ErrStateKeyNotExist) {
		t.Fatalf("%s is set on a sound session: %v", StatePassedOverKey, err)
	}
}
