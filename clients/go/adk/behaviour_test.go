// What the adapter promises beyond ADK's suite: events verified on read, stale copies fenced,
// concurrent shared-state changes all kept, no append into a deleted session, no duplicate
// event id, and names with any characters.

package adk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
	"google.golang.org/grpc"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func textEvent(id, text string, at time.Time, delta map[string]any) *session.Event {
	return &session.Event{ID: id, Author: "agent", InvocationID: "inv", Timestamp: at,
		LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(text, "model")},
		Actions:     session.EventActions{StateDelta: delta}}
}

func mustCreate(t *testing.T, s *Service, app, user, id string) session.Session {
	t.Helper()
	created, err := s.Create(t.Context(), &session.CreateRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return created.Session
}

func mustGet(t *testing.T, s *Service, app, user, id string) session.Session {
	t.Helper()
	got, err := s.Get(t.Context(), &session.GetRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return got.Session
}

// tamper flips the last byte of every message and state in LoadLatest answers while on is set:
// what a corrupting proxy, disk or bug between the server's check and the client would do.
type tamper struct{ on sync.Map }

func (tp *tamper) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	answer, ok := reply.(*checkpointv1.LoadLatestResponse)
	if _, enabled := tp.on.Load("on"); err != nil || !ok || !enabled {
		return err
	}
	checkpoint := answer.GetCheckpoint()
	for _, message := range checkpoint.GetMessages() {
		message.Content[len(message.Content)-1] ^= 1
	}
	if len(checkpoint.State) > 0 {
		checkpoint.State[len(checkpoint.State)-1] ^= 1
	}
	return nil
}

func TestGetAndListRefuseAnAnswerThatFailsItsChecksum(t *testing.T) {
	server := testserver.Start(t, testserver.Options{})
	tp := &tamper{}
	s := New(dial(t, server, freshTenant(), checkpointd.WithInterceptors(
		[]grpc.UnaryClientInterceptor{tp.interceptor}, nil)))
	created := mustCreate(t, s, "app", "u", "s1")
	if err := s.AppendEvent(t.Context(), created, textEvent("e1", "hello", time.Now(), map[string]any{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "app", "u", "s1"); got.Events().Len() != 1 {
		t.Fatalf("untampered Get: %d events, want 1", got.Events().Len())
	}

	tp.on.Store("on", true)
	_, err := s.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
		t.Fatalf("Get of a tampered answer: %v, want CHECKPOINT_CORRUPT", err)
	}
	_, err = s.List(t.Context(), &session.ListRequest{AppName: "app"})
	if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
		t.Fatalf("List of a tampered answer: %v, want CHECKPOINT_CORRUPT", err)
	}
}

func TestAStaleCopyOfASessionCannotAppend(t *testing.T) {
	s := newService(t, testserver.Start(t, testserver.Options{}))
	mustCreate(t, s, "app", "u", "s1")
	first, second := mustGet(t, s, "app", "u", "s1"), mustGet(t, s, "app", "u", "s1")
	if err := s.AppendEvent(t.Context(), first, textEvent("from-first", "a", time.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	err := s.AppendEvent(t.Context(), second, textEvent("from-second", "b", time.Now(), nil))
	if !errors.Is(err, checkpointd.ErrStepConflict) {
		t.Fatalf("append from the stale copy: %v, want STEP_CONFLICT", err)
	}
	got := mustGet(t, s, "app", "u", "s1")
	if got.Events().Len() != 1 || got.Events().At(0).ID != "from-first" {
		t.Fatalf("stored events after the refused append: %v", eventIDs(got))
	}
	// A fresh copy continues.
	if err := s.AppendEvent(t.Context(), got, textEvent("after-reread", "c", time.Now(), nil)); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentSharedStateChangesAreAllKept(t *testing.T) {
	s := newService(t, testserver.Start(t, testserver.Options{}))
	const writers, rounds = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		sess := mustCreate(t, s, "app", "u", fmt.Sprintf("s%d", w))
		wg.Go(func() {
			for r := range rounds {
				key := fmt.Sprintf("user:w%d", w)
				appKey := fmt.Sprintf("app:w%d", w)
				event := textEvent(fmt.Sprintf("w%d-r%d", w, r), "x", time.Now(),
					map[string]any{key: float64(r), appKey: float64(r)})
				errs <- s.AppendEvent(t.Context(), sess, event)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	state := mustGet(t, s, "app", "u", "s0").State()
	for w := range writers {
		for _, key := range []string{fmt.Sprintf("user:w%d", w), fmt.Sprintf("app:w%d", w)} {
			if value, err := state.Get(key); err != nil || value != float64(rounds-1) {
				t.Errorf("%s = %v (%v), want %d", key, value, err, rounds-1)
			}
		}
	}
}

func TestAppendingToADeletedSessionFails(t *testing.T) {
	s := newService(t, testserver.Start(t, testserver.Options{}))
	sess := mustCreate(t, s, "app", "u", "s1")
	if err := s.Delete(t.Context(), &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	err := s.AppendEvent(t.Context(), sess, textEvent("e1", "x", time.Now(), nil))
	if !errors.Is(err, checkpointd.ErrEpochNotIssued) {
		t.Fatalf("append to a deleted session: %v, want EPOCH_NOT_ISSUED", err)
	}
	if _, err := s.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"}); err == nil {
		t.Fatal("the refused append brought the deleted session back")
	}
}

func TestASecondEventWithTheSameIDIsRefused(t *testing.T) {
	s := newService(t, testserver.Start(t, testserver.Options{}))
	sess := mustCreate(t, s, "app", "u", "s1")
	if err := s.AppendEvent(t.Context(), sess, textEvent("same", "a", time.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	err := s.AppendEvent(t.Context(), sess, textEvent("same", "b", time.Now(), nil))
	if !errors.Is(err, checkpointd.ErrLabelTaken) {
		t.Fatalf("second event with id \"same\": %v, want LABEL_TAKEN", err)
	}
}

func TestNamesWithSlashesAndSpacesStayApart(t *testing.T) {
	s := newService(t, testserver.Start(t, testserver.Options{}))
	mustCreate(t, s, "my app", "a/b", "c")
	mustCreate(t, s, "my app", "a", "b/c")
	mustCreate(t, s, "my app", "a%2Fb", "c")
	for user, want := range map[string]int{"a/b": 1, "a": 1, "a%2Fb": 1, "": 3} {
		listed, err := s.List(t.Context(), &session.ListRequest{AppName: "my app", UserID: user})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed.Sessions) != want {
			t.Errorf("List user %q: %d sessions, want %d", user, len(listed.Sessions), want)
		}
		for _, sess := range listed.Sessions {
			if user != "" && sess.UserID() != user {
				t.Errorf("List user %q returned user %q's session", user, sess.UserID())
			}
		}
	}
	if got := mustGet(t, s, "my app", "a", "b/c"); got.UserID() != "a" || got.ID() != "b/c" {
		t.Fatalf("Get: user %q session %q", got.UserID(), got.ID())
	}
}

func eventIDs(s session.Session) []string {
	var ids []string
	for event := range s.Events().All() {
		ids = append(ids, event.ID)
	}
	return ids
}

func TestSharedStateChangedByAnotherServiceIsSeenAndKept(t *testing.T) {
	server := testserver.Start(t, testserver.Options{})
	tenant := freshTenant()
	// Two services as two processes would have them: each caches what it saw last.
	first, second := New(dial(t, server, tenant)), New(dial(t, server, tenant))
	a, b := mustCreate(t, first, "app", "u", "a"), mustCreate(t, second, "app", "u", "b")
	for round := range 3 {
		for _, writer := range []struct {
			s    *Service
			sess session.Session
			key  string
		}{{first, a, "user:first"}, {second, b, "user:second"}} {
			event := textEvent(fmt.Sprintf("%s-%d", writer.key[5:], round), "x", time.Now(),
				map[string]any{writer.key: float64(round), "app:last": writer.key})
			if err := writer.s.AppendEvent(t.Context(), writer.sess, event); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, reader := range []*Service{first, second} {
		state := mustGet(t, reader, "app", "u", "a").State()
		for key, want := range map[string]any{"user:first": float64(2), "user:second": float64(2), "app:last": "user:second"} {
			if got, err := state.Get(key); err != nil || got != want {
				t.Errorf("%s = %v (%v), want %v", key, got, err, want)
			}
		}
	}
}
