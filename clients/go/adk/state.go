// ADK's three state scopes: keys prefixed "app:" are shared by every session of the app, "user:"
// by every session of one user of the app, the rest belong to one session, and "temp:" keys
// live only in the process. The shared scopes are runs of their own (see runids.go); a change
// to one is a new checkpoint merged over the latest, retried when another writer got there
// first, so two sessions that change different keys at once both keep their change.

package adk

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"google.golang.org/adk/v2/session"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// maxSharedStateAttempts bounds the retries of a shared state change that keeps losing its
// step to other writers.
const maxSharedStateAttempts = 32

// deltas is one state change split by scope; keys lose their scope prefix.
type deltas struct {
	app, user, session map[string]any
}

// splitDelta splits a state change by scope and drops the "temp:" keys.
func splitDelta(delta map[string]any) deltas {
	split := deltas{app: map[string]any{}, user: map[string]any{}, session: map[string]any{}}
	for key, value := range delta {
		if rest, ok := strings.CutPrefix(key, session.KeyPrefixApp); ok {
			split.app[rest] = value
		} else if rest, ok := strings.CutPrefix(key, session.KeyPrefixUser); ok {
			split.user[rest] = value
		} else if !strings.HasPrefix(key, session.KeyPrefixTemp) {
			split.session[key] = value
		}
	}
	return split
}

// mergeScopes is the state a session shows: its own keys, then the shared ones prefixed.
func mergeScopes(app, user, own map[string]any) map[string]any {
	merged := maps.Clone(own)
	if merged == nil {
		merged = map[string]any{}
	}
	for key, value := range app {
		merged[session.KeyPrefixApp+key] = value
	}
	for key, value := range user {
		merged[session.KeyPrefixUser+key] = value
	}
	return merged
}

// withoutTemp is a copy of delta without its "temp:" keys (nil stays nil, empty stays empty,
// as ADK's event JSON tells them apart).
func withoutTemp(delta map[string]any) map[string]any {
	if delta == nil {
		return nil
	}
	kept := make(map[string]any, len(delta))
	for key, value := range delta {
		if !strings.HasPrefix(key, session.KeyPrefixTemp) {
			kept[key] = value
		}
	}
	return kept
}

// sharedScopes holds the latest app and user state scopes this service saw. An entry is only
// ever a hint: a read checks it against the run's head (a cheaper call than a load) and a write
// saves at its step+1, which the server refuses when another writer moved the run on, so a
// stale entry costs a reload, never a lost change.
type sharedScopes struct {
	mu     sync.Mutex
	scopes map[string]*scope
	// report says what a load fell back past (the service's warning, or Refuse's error).
	report func(ctx context.Context, runID string, passed []checkpointd.PassedOver) error
}

// maxCachedScopes bounds the hints; past it the cache starts again.
const maxCachedScopes = 10000

// absent marks a shared scope nothing was saved to yet.
const absent = -1

func (c *sharedScopes) get(runID string) *scope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scopes[runID]
}

func (c *sharedScopes) put(runID string, latest *scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scopes == nil || len(c.scopes) >= maxCachedScopes {
		c.scopes = map[string]*scope{}
	}
	c.scopes[runID] = latest
}

// load reads a shared scope's latest checkpoint, verified; absent when there is none.
func (c *sharedScopes) load(ctx context.Context, client *checkpointd.Client, runID string) (*scope, error) {
	latest, err := loadScope(ctx, client, runID)
	if errors.Is(err, errScopeNotFound) {
		latest, err = &scope{runID: runID, step: absent, state: map[string]any{}}, nil
	}
	if err != nil {
		return nil, err
	}
	if c.report != nil {
		// A quarantined step above the valid one keeps the head changed, so every read of
		// the scope loads it again and says so.
		if err := c.report(ctx, runID, latest.passedOver); err != nil {
			return nil, err
		}
	}
	c.put(runID, latest)
	return latest, nil
}

// read is a shared scope's state: the cached one when the run's head shows no newer step.
func (c *sharedScopes) read(ctx context.Context, client *checkpointd.Client, runID string) (map[string]any, error) {
	cached := c.get(runID)
	if cached == nil {
		latest, err := c.load(ctx, client, runID)
		if err != nil {
			return nil, err
		}
		return latest.state, nil
	}
	head, err := client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
	if err != nil && !isNotFound(err) {
		return nil, fmt.Errorf("adk: read %s: %w", runID, err)
	}
	run := head.GetRun()
	var unchanged bool
	if err != nil || run.LatestStep == nil {
		unchanged = cached.step == absent
	} else {
		unchanged = run.GetLatestStep() == cached.step && run.LatestValidStep != nil &&
			run.GetLatestValidStep() == cached.step
	}
	if unchanged {
		return cached.state, nil
	}
	latest, err := c.load(ctx, client, runID)
	if err != nil {
		return nil, err
	}
	return latest.state, nil
}

// update merges delta over a shared scope's latest state and saves it as the next step; when
// a concurrent writer took that step it reloads and merges again. It returns the state as
// saved. An empty delta only reads.
func (c *sharedScopes) update(ctx context.Context, client *checkpointd.Client, runID string, delta map[string]any) (map[string]any, error) {
	if len(delta) == 0 {
		return c.read(ctx, client, runID)
	}
	for range maxSharedStateAttempts {
		latest := c.get(runID)
		if latest == nil {
			var err error
			if latest, err = c.load(ctx, client, runID); err != nil {
				return nil, err
			}
		}
		state := maps.Clone(latest.state)
		maps.Copy(state, delta)
		from := latest
		if latest.step == absent {
			from = nil
		}
		saved, err := saveNext(ctx, client, runID, from, nextStep{state: state})
		if err == nil {
			c.put(runID, saved)
			return state, nil
		}
		if !isStepTaken(err) {
			return nil, err
		}
		c.put(runID, nil) // another writer moved on: reload
	}
	return nil, fmt.Errorf("adk: %s: %d writers in a row changed it first; try again", runID, maxSharedStateAttempts)
}
