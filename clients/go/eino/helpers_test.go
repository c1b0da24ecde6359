// Test helpers: a real checkpointd per backend, stores on it, damage to its stored data as a bad
// disk would do it, and a logger whose lines a test can read.

package eino_test

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// forEachBackend runs body against a fresh server on SQLite and on Postgres.
func forEachBackend(t *testing.T, body func(t *testing.T, server *testserver.Server)) {
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			body(t, testserver.Start(t, testserver.Options{Backend: backend}))
		})
	}
}

// dial is a client of the server, closed when the test ends.
func dial(t *testing.T, server *testserver.Server, opts ...checkpointd.Option) *checkpointd.Client {
	t.Helper()
	client, err := checkpointd.Dial(server.Addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// testContext ends with the test or after a minute, whichever is first.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// corruptState flips the first byte of the stored state of a run's checkpoint at step, in the
// server's database, so only the server's checksum verification on read can notice.
func corruptState(t *testing.T, server *testserver.Server, runID string, step int64) {
	t.Helper()
	var cmd *exec.Cmd
	quotedRun := strings.ReplaceAll(runID, "'", "''")
	if server.Backend == testserver.SQLite {
		sql := fmt.Sprintf("UPDATE checkpoints SET state = CAST((CASE WHEN substr(state, 1, 1) = X'00' "+
			"THEN X'01' ELSE X'00' END) || substr(state, 2) AS BLOB) WHERE run_id = '%s' AND step = %d", quotedRun, step)
		cmd = exec.Command("sqlite3", strings.TrimPrefix(server.Database, "sqlite://"), sql)
	} else {
		sql := fmt.Sprintf("UPDATE checkpoints SET state = set_byte(state, 0, (get_byte(state, 0) + 1) %% 256) "+
			"WHERE run_id = '%s' AND step = %d", quotedRun, step)
		cmd = exec.Command("psql", server.Database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("corrupt %s step %d: %v: %s", runID, step, err, out)
	}
}

// recordedLog is a slog.Handler that keeps every record, so a test can check what was said
// loudly, at which level and with which fields.
type recordedLog struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recordedLog) Enabled(context.Context, slog.Level) bool { return true }

func (r *recordedLog) Handle(_ context.Context, record slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, record.Clone())
	return nil
}

func (r *recordedLog) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordedLog) WithGroup(string) slog.Handler      { return r }

// find is the first record at level whose message contains text, and its attributes as text.
func (r *recordedLog) find(level slog.Level, text string) (map[string]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, record := range r.records {
		if record.Level != level || !strings.Contains(record.Message, text) {
			continue
		}
		attrs := map[string]string{}
		record.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = fmt.Sprint(a.Value.Any())
			return true
		})
		return attrs, true
	}
	return nil, false
}

// count is how many records at level contain text.
func (r *recordedLog) count(level slog.Level, text string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, record := range r.records {
		if record.Level == level && strings.Contains(record.Message, text) {
			n++
		}
	}
	return n
}

// newStore is a store on client logging into log.
func newStore(client *checkpointd.Client, log *recordedLog, opts ...eino.Option) *eino.Store {
	return eino.New(client, append([]eino.Option{eino.WithLogger(slog.New(log))}, opts...)...)
}
