// Service: ADK's session.Service over checkpointd. Create, Get, List and Delete live here,
// AppendEvent in append.go; docs/adk-mapping.md says where every part of a session is stored.

package adk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// Service is a session.Service whose sessions live in checkpointd, in the tenant of the client
// it was made with. Safe for concurrent use; any number of processes may share one server.
type Service struct {
	client *checkpointd.Client
	shared sharedScopes
	logger *slog.Logger
	policy CorruptPolicy
}

var _ session.Service = (*Service)(nil)

// New is a Service over client (see checkpointd.Dial; its tenant scopes every session).
func New(client *checkpointd.Client, opts ...Option) *Service {
	s := &Service{client: client, logger: slog.Default(), policy: FallBack}
	for _, opt := range opts {
		opt(s)
	}
	s.shared.report = s.passedOver
	return s
}

// Create makes a session: step 0 of a new run holds its own state; "app:" and "user:" keys of
// req.State go to the shared scopes, "temp:" keys nowhere. An id that exists is refused.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("adk: app_name and user_id are required, got %q and %q", req.AppName, req.UserID)
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	runID, err := sessionRunID(req.AppName, req.UserID, id)
	if err != nil {
		return nil, err
	}
	split := splitDelta(req.State)
	now := platform.Now(ctx)
	created, err := saveNext(ctx, s.client, runID, nil, nextStep{state: split.session,
		metadata: map[string]string{metaUpdatedAt: formatTime(now), metaCreateNonce: nonce()}})
	if err != nil {
		if isStepTaken(err) || errors.Is(err, checkpointd.ErrStaleEpoch) {
			return nil, fmt.Errorf("adk: session %s of user %s already exists: %w", id, req.UserID, err)
		}
		return nil, err
	}
	// Resume hands the run epoch 1, which every append carries: an append to this session
	// after a Delete (when a Save would otherwise start a new run) is refused as an epoch
	// the new run never issued.
	resumed, err := s.client.Checkpoints.Resume(ctx, &checkpointv1.ResumeRequest{RunId: runID,
		MessageOffset: 0, RequireExisting: true})
	if err != nil {
		return nil, fmt.Errorf("adk: fence the new session %s: %w", id, err)
	}
	created.epoch = resumed.GetEpoch()
	var app, user map[string]any
	err = parallel(
		func() (err error) { app, err = s.updateApp(ctx, req.AppName, split.app); return },
		func() (err error) { user, err = s.updateUser(ctx, req.AppName, req.UserID, split.user); return },
	)
	if err != nil {
		return nil, err
	}
	return &session.CreateResponse{Session: &Session{app: req.AppName, user: req.UserID, id: id,
		state: mergeScopes(app, user, split.session), updatedAt: now, run: created}}, nil
}

// Get reads a session with its events, verified against checksum v1 here. After keeps events
// whose timestamp is at or after it; NumRecentEvents then keeps the newest that many. Only
// those events are read from the server, page by page when they are many.
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return nil, fmt.Errorf("adk: app_name, user_id and session_id are required, got %q, %q and %q",
			req.AppName, req.UserID, req.SessionID)
	}
	runID, err := sessionRunID(req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	var own *scope
	var app, user map[string]any
	err = parallel(
		func() (err error) { own, err = loadSession(ctx, s.client, runID); return },
		func() (err error) { app, err = s.loadApp(ctx, req.AppName); return },
		func() (err error) { user, err = s.loadUser(ctx, req.AppName, req.UserID); return },
	)
	if errors.Is(err, errScopeNotFound) {
		return nil, fmt.Errorf("adk: session %s of user %s in app %s not found: %w",
			req.SessionID, req.UserID, req.AppName, err)
	}
	if err != nil {
		return nil, err
	}
	if err := s.passedOver(ctx, runID, own.passedOver); err != nil {
		return nil, err
	}
	// Only the window asked for is read (window.go): a session of any size opens.
	start, err := windowStart(ctx, s.client, own, req.NumRecentEvents, req.After)
	if err != nil {
		return nil, err
	}
	if own.messages, err = loadEvents(ctx, s.client, own, start); err != nil {
		return nil, err
	}
	events, err := decodeEvents(own, start)
	if err != nil {
		return nil, err
	}
	if !req.After.IsZero() {
		kept := events[:0]
		for _, event := range events {
			if !event.Timestamp.Before(req.After) {
				kept = append(kept, event)
			}
		}
		events = kept
	}
	if n := req.NumRecentEvents; n > 0 && len(events) > n {
		events = events[len(events)-n:]
	}
	own.messages = nil // decoded; the session keeps only its position
	return &session.GetResponse{Session: &Session{app: req.AppName, user: req.UserID, id: req.SessionID,
		state: withPassedOver(mergeScopes(app, user, own.state), own), events: events,
		updatedAt: parseTime(own.metadata[metaUpdatedAt]), run: own}}, nil
}

// Delete removes a session's run. A session that is not there (or is another user's) is no
// error, as with ADK's own services.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("adk: app_name, user_id and session_id are required, got %q, %q and %q",
			req.AppName, req.UserID, req.SessionID)
	}
	runID, err := sessionRunID(req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return err
	}
	_, err = s.client.Checkpoints.DeleteRun(ctx, &checkpointv1.DeleteRunRequest{RunId: runID})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("adk: delete session %s: %w", req.SessionID, err)
	}
	return nil
}

// decodeEvents turns a session run's messages back into events (ADK's own JSON, which keeps
// every field, nanosecond timestamps and nil versus empty maps).
// The messages start at log offset start.
func decodeEvents(own *scope, start uint64) ([]*session.Event, error) {
	events := make([]*session.Event, 0, len(own.messages))
	for i, message := range own.messages {
		if message.GetRole() != eventRole {
			return nil, fmt.Errorf("adk: %s message %d has role %q, not an ADK event", own.runID, start+uint64(i), message.GetRole())
		}
		event := &session.Event{}
		if err := json.Unmarshal(message.GetContent(), event); err != nil {
			return nil, fmt.Errorf("adk: %s message %d is not an ADK event: %w", own.runID, start+uint64(i), err)
		}
		events = append(events, event)
	}
	return events, nil
}

func (s *Service) loadApp(ctx context.Context, app string) (map[string]any, error) {
	return s.updateApp(ctx, app, nil)
}

func (s *Service) loadUser(ctx context.Context, app, user string) (map[string]any, error) {
	return s.updateUser(ctx, app, user, nil)
}

func (s *Service) updateApp(ctx context.Context, app string, delta map[string]any) (map[string]any, error) {
	runID, err := appStateRunID(app)
	if err != nil {
		return nil, err
	}
	return s.shared.update(ctx, s.client, runID, delta)
}

func (s *Service) updateUser(ctx context.Context, app, user string, delta map[string]any) (map[string]any, error) {
	runID, err := userStateRunID(app, user)
	if err != nil {
		return nil, err
	}
	return s.shared.update(ctx, s.client, runID, delta)
}

// parallel runs the calls at once and joins their errors.
func parallel(calls ...func() error) error {
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nonce is 16 random bytes in hex.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
