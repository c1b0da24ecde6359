// Test helpers: a real checkpointd per backend (internal/testserver) and a Service on a tenant
// of its own, so tests and the suite's subtests never see each other's sessions.

package adk

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(runCrashChild())
	}
	if os.Getenv(runtimeChildEnv) != "" {
		os.Exit(runRuntimeChildMain())
	}
	os.Exit(m.Run())
}

var tenants atomic.Int64

// freshTenant is a tenant no other test in any process uses.
func freshTenant() string {
	return fmt.Sprintf("adk-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), tenants.Add(1))
}

// dial is a client of server on tenant, closed when the test ends.
func dial(t testing.TB, server *testserver.Server, tenant string, opts ...checkpointd.Option) *checkpointd.Client {
	t.Helper()
	client, err := checkpointd.Dial(server.Addr(), append([]checkpointd.Option{checkpointd.WithTenant(tenant)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// newService is a Service on a fresh tenant of server.
func newService(t testing.TB, server *testserver.Server) *Service {
	t.Helper()
	return New(dial(t, server, freshTenant()))
}

// eachBackend runs test against a server on SQLite and one on Postgres.
func eachBackend(t *testing.T, test func(t *testing.T, server *testserver.Server)) {
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			test(t, testserver.Start(t, testserver.Options{Backend: backend}))
		})
	}
}
