// Package testserver starts a real `checkpointd serve` for the Go client's tests: the binary at
// $CHECKPOINTD_BIN on free loopback ports, on a fresh SQLite file or a fresh schema of the
// Postgres at $TEST_DATABASE_URL, optionally behind TLS; ready when it answers a gRPC call,
// stopped with SIGTERM (then SIGKILL) when the test ends, its file or schema removed. Nothing
// here skips: a missing binary, psql or Postgres fails the test and says what to do.
package testserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// Backend is the store a server runs on.
type Backend string

const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends is every store the integration tests run on.
var Backends = []Backend{SQLite, Postgres}

// defaultDatabaseURL is the Postgres the tests use when TEST_DATABASE_URL is unset.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test"

// Options shape a server.
type Options struct {
	// Backend is the store (SQLite when empty).
	Backend Backend
	// Args are more `serve` flags, e.g. --tls-cert.
	Args []string
	// ProbeOptions dial the readiness probe, e.g. checkpointd.WithTLS for a TLS port.
	ProbeOptions []checkpointd.Option
	// Port is the gRPC port to listen on (a free one when zero), e.g. one a client was
	// pointed at before the server started.
	Port int
}

// Server is a running `checkpointd serve`.
type Server struct {
	// Port is the gRPC port on 127.0.0.1.
	Port int
	// Database is the --database URL, for `keys create` and tests that touch stored data.
	Database string
	Backend  Backend

	binary string
	output *lockedBuffer
}

// Addr is host:port on 127.0.0.1.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

// Output is what the server wrote so far, for a failing test's message.
func (s *Server) Output() string { return s.output.String() }

// Binary is the checkpointd binary the tests run: $CHECKPOINTD_BIN, or the workspace's
// target/release/checkpointd (the workspace is the nearest folder above the test's package
// with a Cargo.lock, so every package finds it, not only the module's root).
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("CHECKPOINTD_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "target", "release", "checkpointd")
		if dir, err := os.Getwd(); err == nil {
			for ; filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
				if _, err := os.Stat(filepath.Join(dir, "Cargo.lock")); err == nil {
					bin = filepath.Join(dir, "target", "release", "checkpointd")
					break
				}
			}
		}
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("no checkpointd binary at %s: build it (cargo build --release -p checkpointd-cli) or set CHECKPOINTD_BIN", abs)
	}
	return abs
}

// Start runs a server for the test and stops it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	backend := opts.Backend
	if backend == "" {
		backend = SQLite
	}
	server := &Server{Backend: backend, binary: Binary(t), output: &lockedBuffer{}}
	switch backend {
	case SQLite:
		server.Database = "sqlite://" + filepath.Join(t.TempDir(), "checkpointd.db")
	case Postgres:
		server.Database = freshSchema(t)
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	server.Port = opts.Port
	if server.Port == 0 {
		server.Port = FreePort(t)
	}
	args := append([]string{"serve",
		"--listen", server.Addr(),
		"--admin-listen", fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
		"--database", server.Database,
	}, opts.Args...)
	cmd := exec.Command(server.binary, args...)
	cmd.Stdout, cmd.Stderr = server.output, server.output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", server.binary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stop(cmd, exited) })
	waitReady(t, server, exited, opts.ProbeOptions)
	return server
}

// stop sends SIGTERM and, after 10 s, SIGKILL.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// waitReady polls until a call reaches the service: an unknown run answers NOT_FOUND
// (UNAUTHENTICATED with --auth on), not UNAVAILABLE.
func waitReady(t testing.TB, server *Server, exited <-chan struct{}, probeOptions []checkpointd.Option) {
	t.Helper()
	probe, err := checkpointd.Dial(server.Addr(), probeOptions...)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("checkpointd exited before answering:\n%s", server.Output())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := probe.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: "readiness-probe"})
		cancel()
		var typed *checkpointd.Error
		if errors.As(err, &typed) && (typed.Code == codes.NotFound || typed.Code == codes.Unauthenticated) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpointd did not answer within 30 s (%v):\n%s", err, server.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CreateKey makes an API key with `checkpointd keys create` on the server's database.
func (s *Server) CreateKey(t testing.TB, tenant, role string) string {
	t.Helper()
	out, err := exec.Command(s.binary, "keys", "create", "--tenant", tenant, "--role", role,
		"--name", "go-client-test", "--database", s.Database).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("keys create: %v: %s", err, exit.Stderr)
		}
		t.Fatalf("keys create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// FreePort is a loopback port free a moment ago (bound to port 0, then closed).
func FreePort(t testing.TB) int {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}

var schemas atomic.Int64

// freshSchema makes a schema in $TEST_DATABASE_URL, dropped when the test ends, and returns the
// URL whose search_path is it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = defaultDatabaseURL
	}
	name := fmt.Sprintf("cpd_go_%d_%d_%d", os.Getpid(), schemas.Add(1), time.Now().UnixNano())
	psql(t, base, "CREATE SCHEMA "+name)
	t.Cleanup(func() { psql(t, base, "DROP SCHEMA IF EXISTS "+name+" CASCADE") })
	separator := "?"
	if strings.Contains(base, "?") {
		separator = "&"
	}
	return base + separator + "options=-csearch_path%3D" + name
}

// Psql runs SQL on a Postgres URL with psql.
func psql(t testing.TB, url, sql string) {
	t.Helper()
	out, err := exec.Command("psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("the Postgres tests need psql and the Postgres at %s (set TEST_DATABASE_URL): %v: %s"+
			" Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
			url, err, out)
	}
}

// lockedBuffer collects the server's output from two pipes at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
