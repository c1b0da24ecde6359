// List: an app's sessions (or one user's) are the runs under their run id prefix. Each comes
// back with its merged state and without events, as with ADK's own services; its state is
// verified with checksum v1 from the message chain head its checkpoint records, so List reads
// no event.

package adk

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/adk/v2/session"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// listConcurrency bounds the loads one List has in flight.
const listConcurrency = 8

// List returns the sessions of req.AppName, of every user when req.UserID is empty.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req.AppName == "" {
		return nil, fmt.Errorf("adk: app_name is required")
	}
	runIDs, err := s.sessionRuns(ctx, sessionListPrefix(req.AppName, req.UserID))
	if err != nil {
		return nil, err
	}
	sessions := make([]*Session, len(runIDs))
	users := map[string]map[string]any{}
	var app map[string]any
	var mu sync.Mutex
	calls := []func() error{func() (err error) { app, err = s.loadApp(ctx, req.AppName); return }}
	for i, runID := range runIDs {
		appName, user, id, err := parseSessionRunID(runID)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		if _, seen := users[user]; !seen {
			users[user] = nil
			calls = append(calls, func() error {
				state, err := s.loadUser(ctx, appName, user)
				mu.Lock()
				users[user] = state
				mu.Unlock()
				return err
			})
		}
		mu.Unlock()
		calls = append(calls, func() error {
			own, err := loadSession(ctx, s.client, runID)
			if errors.Is(err, errScopeNotFound) {
				return nil // deleted since the listing
			}
			if err != nil {
				return err
			}
			if err := s.passedOver(ctx, runID, own.passedOver); err != nil {
				return err
			}
			sessions[i] = &Session{app: appName, user: user, id: id, run: own,
				updatedAt: parseTime(own.metadata[metaUpdatedAt])}
			return nil
		})
	}
	if err := bounded(listConcurrency, calls); err != nil {
		return nil, err
	}
	found := make([]session.Session, 0, len(sessions))
	for _, sess := range sessions {
		if sess != nil {
			sess.state = withPassedOver(mergeScopes(app, users[sess.user], sess.run.state), sess.run)
			found = append(found, sess)
		}
	}
	return &session.ListResponse{Sessions: found}, nil
}

// sessionRuns pages through the run ids under prefix.
func (s *Service) sessionRuns(ctx context.Context, prefix string) ([]string, error) {
	var runIDs []string
	token := ""
	for {
		page, err := s.client.Checkpoints.ListRuns(ctx, &checkpointv1.ListRunsRequest{
			PageSize: 1000, PageToken: token, RunIdPrefix: prefix})
		if err != nil {
			return nil, fmt.Errorf("adk: list runs under %s: %w", prefix, err)
		}
		for _, run := range page.GetRuns() {
			runIDs = append(runIDs, run.GetRunId())
		}
		if token = page.GetNextPageToken(); token == "" {
			return runIDs, nil
		}
	}
}

// bounded runs the calls, at most limit at once, and joins their errors.
func bounded(limit int, calls []func() error) error {
	slots := make(chan struct{}, limit)
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = call()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
