// The places the store and recovery tests run on (the in-memory backend, a real server on
// SQLite and on Postgres), damage to their stored data as a bad disk would do it, and a logger
// and a counting backend the tests read.
package recovery

import (
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// place is where a test's runs live.
type place struct {
	name string
	// backend is a fresh connection (a new writer) to the place.
	backend func(t *testing.T) Backend
	// corruptState flips the first byte of a checkpoint's stored state.
	corruptState func(t *testing.T, runID string, step int64)
}

var placeNames = []string{"memory", string(testserver.SQLite), string(testserver.Postgres)}

// forEachPlace runs test on every place, each with its own server.
func forEachPlace(t *testing.T, test func(t *testing.T, p place), serverArgs ...string) {
	for _, name := range placeNames {
		t.Run(name, func(t *testing.T) {
			test(t, openPlace(t, name, serverArgs...))
		})
	}
}

func openPlace(t *testing.T, name string, serverArgs ...string) place {
	t.Helper()
	if name == "memory" {
		memory := NewMemoryBackend("default")
		return place{name: name,
			backend: func(*testing.T) Backend { return memory },
			corruptState: func(t *testing.T, runID string, step int64) {
				if err := memory.CorruptState(runID, step); err != nil {
					t.Fatal(err)
				}
			}}
	}
	server := testserver.Start(t, testserver.Options{Backend: testserver.Backend(name), Args: serverArgs})
	return place{name: name,
		backend: func(t *testing.T) Backend {
			client, err := checkpointd.Dial(server.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = client.Close() })
			return client.Checkpoints
		},
		corruptState: func(t *testing.T, runID string, step int64) { corruptStored(t, server, runID, step) }}
}

// corruptStored flips the first byte of the stored state straight in the server's database,
// so the server's verification on read is what finds it.
func corruptStored(t *testing.T, server *testserver.Server, runID string, step int64) {
	t.Helper()
	var cmd *exec.Cmd
	if server.Backend == testserver.SQLite {
		sql := "UPDATE checkpoints SET state = CAST(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END " +
			"|| substr(state, 2) AS BLOB) WHERE run_id = '" + runID + "' AND step = " + itoa(step)
		cmd = exec.Command("sqlite3", strings.TrimPrefix(server.Database, "sqlite://"), sql)
	} else {
		sql := "UPDATE checkpoints SET state = set_byte(state, 0, (get_byte(state, 0) + 1) % 256) " +
			"WHERE run_id = '" + runID + "' AND step = " + itoa(step)
		cmd = exec.Command("psql", server.Database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("corrupt %s step %d: %v: %s", runID, step, err, out)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// logged is a logger whose lines the test reads.
type logged struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logged) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logged) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// counting is a backend that keeps the Save requests and counts the continuation pages.
type counting struct {
	Backend
	mu    sync.Mutex
	saves []*checkpointv1.SaveRequest
	pages atomic.Int64
}

func (c *counting) Save(ctx context.Context, in *checkpointv1.SaveRequest, opts ...grpc.CallOption) (*checkpointv1.SaveResponse, error) {
	c.mu.Lock()
	c.saves = append(c.saves, in)
	c.mu.Unlock()
	return c.Backend.Save(ctx, in, opts...)
}

func (c *counting) LoadAtStep(ctx context.Context, in *checkpointv1.LoadAtStepRequest, opts ...grpc.CallOption) (*checkpointv1.LoadAtStepResponse, error) {
	if len(in.GetContinuation()) > 0 {
		c.pages.Add(1)
	}
	return c.Backend.LoadAtStep(ctx, in, opts...)
}
