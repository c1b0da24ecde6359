// ADK's own conformance suite for session services, against a real checkpointd on each backend.

package adk

import (
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestServicePassesADKSessionSuite(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		// The suite has no teardown and shares nothing between subtests but the service, so
		// each setup gets a tenant of its own (List counts every session it can see).
		sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
			func(t *testing.T) session.Service { return newService(t, server) })
	})
}
