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

	"google.golang.org/adk/v2/session"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
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

// loadShared is a shared scope's state, empty when nothing was ever saved to it.
func loadShared(ctx context.Context, client *checkpointd.Client, runID string) (map[string]any, error) {
	loaded, err := loadScope(ctx, client, runID, false)
	if errors.Is(err, errScopeNotFound) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	return loaded.state, nil
}

// updateShared merges delta over a shared scope's latest state and saves it as the next step,
// reloading and merging again when a concurrent writer took the step. It returns the state
// as saved. An empty delta reads the state and saves nothing.
func updateShared(ctx context.Context, client *checkpointd.Client, runID string, delta map[string]any) (map[string]any, error) {
	if len(delta) == 0 {
		return loadShared(ctx, client, runID)
	}
	for range maxSharedStateAttempts {
		latest, err := loadScope(ctx, client, runID, false)
		if errors.Is(err, errScopeNotFound) {
			latest, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		state := map[string]any{}
		if latest != nil {
			state = maps.Clone(latest.state)
		}
		maps.Copy(state, delta)
		_, err = saveNext(ctx, client, runID, latest, nextStep{state: state})
		if err == nil {
			return state, nil
		}
		if !isStepTaken(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("adk: %s: %d writers in a row changed it first; try again", runID, maxSharedStateAttempts)
}
