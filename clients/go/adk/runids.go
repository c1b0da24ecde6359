// Run ids: where each ADK scope lives in checkpointd. A session, an app's shared state and a
// user's shared state are each one run, named so that ListRuns' prefix finds an app's or a
// user's sessions, whatever characters the names hold.

package adk

import (
	"fmt"
	"net/url"
	"strings"
)

const (
	// sessionRunPrefix opens a session's run: adk/s/<app>/<user>/<session>.
	sessionRunPrefix = "adk/s/"
	// appStateRunPrefix opens an app's state run: adk/a/<app>.
	appStateRunPrefix = "adk/a/"
	// userStateRunPrefix opens a user's state run: adk/u/<app>/<user>.
	userStateRunPrefix = "adk/u/"
	// maxRunIDBytes is the server's limit on a run id.
	maxRunIDBytes = 256
)

// escape makes a name one path segment of printable ASCII: '/' and '%' are percent-encoded,
// so a name can never split into two segments or collide with another name.
func escape(name string) string { return url.PathEscape(name) }

func sessionRunID(app, user, sessionID string) (string, error) {
	return checkedRunID(sessionRunPrefix + escape(app) + "/" + escape(user) + "/" + escape(sessionID))
}

func appStateRunID(app string) (string, error) {
	return checkedRunID(appStateRunPrefix + escape(app))
}

func userStateRunID(app, user string) (string, error) {
	return checkedRunID(userStateRunPrefix + escape(app) + "/" + escape(user))
}

// sessionListPrefix is the run id prefix of an app's sessions, or of one user's when user is
// not empty.
func sessionListPrefix(app, user string) string {
	if user == "" {
		return sessionRunPrefix + escape(app) + "/"
	}
	return sessionRunPrefix + escape(app) + "/" + escape(user) + "/"
}

// parseSessionRunID is the inverse of sessionRunID.
func parseSessionRunID(runID string) (app, user, sessionID string, err error) {
	parts := strings.Split(strings.TrimPrefix(runID, sessionRunPrefix), "/")
	if !strings.HasPrefix(runID, sessionRunPrefix) || len(parts) != 3 {
		return "", "", "", fmt.Errorf("adk: %q is not a session run id", runID)
	}
	names := make([]string, 3)
	for i, part := range parts {
		if names[i], err = url.PathUnescape(part); err != nil {
			return "", "", "", fmt.Errorf("adk: run id %q: %w", runID, err)
		}
	}
	return names[0], names[1], names[2], nil
}

func checkedRunID(runID string) (string, error) {
	if len(runID) > maxRunIDBytes {
		return "", fmt.Errorf("adk: the names make a run id of %d bytes, over checkpointd's %d: %q",
			len(runID), maxRunIDBytes, runID)
	}
	return runID, nil
}
