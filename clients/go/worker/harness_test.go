// Worker processes for the worker tests: the fixture worker (internal/workerfixture, built
// once by TestMain) against a real test server, each test with its own tenant (so no test's
// task reaches another's worker) and its own folder for the agent's tool and side-effect logs;
// the operator CLI (`checkpointd tasks ...`); and polling until a condition holds.
package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// fixtureBinary is the fixture worker TestMain built.
var fixtureBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "checkpointd-go-worker-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureBinary = filepath.Join(dir, "workerfixture")
	build := exec.Command("go", "build", "-o", fixtureBinary, "../internal/workerfixture")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build the fixture worker: %v: %s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is one test's tenant on a shared server, with a client of that tenant.
type fixture struct {
	t       *testing.T
	server  *testserver.Server
	tenant  string
	dir     string
	client  *checkpointd.Client
	workers []string // extra flags every worker of this fixture gets (TLS)
}

func newFixture(t *testing.T, server *testserver.Server, name string, dialOptions ...checkpointd.Option) *fixture {
	t.Helper()
	tenant := fmt.Sprintf("go-worker-%s-%d", name, time.Now().UnixNano())
	client, err := checkpointd.Dial(server.Addr(), append(dialOptions, checkpointd.WithTenant(tenant))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return &fixture{t: t, server: server, tenant: tenant, dir: t.TempDir(), client: client}
}

// enqueue puts a task for runID with input {} and returns its id.
func (f *fixture) enqueue(request *checkpointv1.EnqueueRequest) string {
	f.t.Helper()
	if request.Input == nil {
		request.Input = []byte(`{}`)
	}
	reply, err := f.client.Tasks.Enqueue(context.Background(), request)
	if err != nil {
		f.t.Fatal(err)
	}
	return reply.GetTask().GetTaskId()
}

func (f *fixture) task(taskID string) *checkpointv1.Task {
	f.t.Helper()
	reply, err := f.client.Tasks.Get(context.Background(), &checkpointv1.GetRequest{TaskId: taskID})
	if err != nil {
		f.t.Fatal(err)
	}
	return reply.GetTask()
}

// checkpointSteps lists the run's checkpoints' steps, oldest first.
func (f *fixture) checkpointSteps(runID string) []int64 {
	f.t.Helper()
	reply, err := f.client.Checkpoints.ListCheckpoints(context.Background(), &checkpointv1.ListCheckpointsRequest{RunId: runID})
	if err != nil {
		f.t.Fatal(err)
	}
	var steps []int64
	for _, summary := range reply.GetCheckpoints() {
		steps = append(steps, summary.GetStep())
	}
	return steps
}

// cli runs the operator CLI against this fixture's tenant and returns its output.
func (f *fixture) cli(args ...string) string {
	f.t.Helper()
	cmd := exec.Command(testserver.Binary(f.t), append(args, "--server", "http://"+f.server.Addr(), "--tenant", f.tenant)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("checkpointd %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// workerProcess is a running fixture worker; its stdout and stderr go to one file.
type workerProcess struct {
	t       *testing.T
	cmd     *exec.Cmd
	outPath string
	exited  chan struct{}
}

// output is what the worker printed so far.
func (w *workerProcess) output() string {
	out, err := os.ReadFile(w.outPath)
	if err != nil {
		return fmt.Sprintf("(no output: %v)", err)
	}
	return string(out)
}

// startWorker runs a worker of the fixture's tenant with --concurrency 1 --poll-interval 100ms
// and args (a later flag wins); env adds fault injection. It is SIGKILLed when the test ends.
func (f *fixture) startWorker(args []string, env ...string) *workerProcess {
	f.t.Helper()
	argv := append([]string{"--server", f.server.Addr(), "--tenant", f.tenant, "--concurrency", "1",
		"--poll-interval", "100ms"}, f.workers...)
	cmd := exec.Command(fixtureBinary, append(argv, args...)...)
	cmd.Env = append(append(os.Environ(), "AGENT_DIR="+f.dir), env...)
	out, err := os.CreateTemp(f.t.TempDir(), "worker-*.log")
	if err != nil {
		f.t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	w := &workerProcess{t: f.t, cmd: cmd, outPath: out.Name(), exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.exited) }()
	f.t.Cleanup(w.kill)
	return w
}

// finish waits for the worker to exit 0 and returns its output; it fails the test otherwise.
func (w *workerProcess) finish(timeout time.Duration) string {
	w.t.Helper()
	select {
	case <-w.exited:
	case <-time.After(timeout):
		w.kill()
		w.t.Fatalf("the worker did not exit within %s:\n%s", timeout, w.output())
	}
	if code := w.cmd.ProcessState.ExitCode(); code != 0 {
		w.t.Fatalf("the worker exited %d:\n%s", code, w.output())
	}
	return w.output()
}

// kill SIGKILLs the worker (when still running) and waits for it to go.
func (w *workerProcess) kill() {
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Kill()
	<-w.exited
}

func (w *workerProcess) signal(sig syscall.Signal) {
	w.t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatal(err)
	}
}

// waitHanging waits until the agent wrote its "hanging" file (it is stuck in a step).
func (f *fixture) waitHanging(w *workerProcess, what string) {
	f.t.Helper()
	path := filepath.Join(f.dir, "hanging")
	waitUntil(f.t, what, func() bool {
		select {
		case <-w.exited:
			f.t.Fatalf("the worker exited before %s:\n%s", what, w.output())
		default:
		}
		_, err := os.Stat(path)
		return err == nil
	})
	_ = os.Remove(path)
}

// waitState waits until the task is in state.
func (f *fixture) waitState(taskID string, state checkpointv1.TaskState) *checkpointv1.Task {
	f.t.Helper()
	var task *checkpointv1.Task
	waitUntil(f.t, fmt.Sprintf("task %s in %s", taskID, state), func() bool {
		task = f.task(taskID)
		return task.GetState() == state
	})
	return task
}

// waitUntil polls every 50 ms for 30 s.
func waitUntil(t *testing.T, what string, probe func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !probe() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countLines counts each line of a file the agent wrote; empty when it never wrote it.
func (f *fixture) countLines(name string) map[string]int {
	counts := map[string]int{}
	file, err := os.Open(filepath.Join(f.dir, name))
	if err != nil {
		return counts
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		counts[lines.Text()]++
	}
	return counts
}

// lookupsOnce is tools.log when each of the six steps ran its lookup exactly once.
var lookupsOnce = map[string]int{"lookup@1": 1, "lookup@2": 1, "lookup@3": 1, "lookup@4": 1, "lookup@5": 1, "lookup@6": 1}
