// Package worker is a queue worker with the bundled runner's semantics (crates/runner,
// docs/workers.md): it claims tasks from checkpointd's queue, keeps each lease alive with
// heartbeats every third of it (a fenced heartbeat means the task is someone else's: the step's
// context is cancelled and nothing more is written), drives each run through the recovery loop
// of package recovery (Resume, strategy, resurrection with budget and cooldown, fatal versus
// transient, tool calls journalled, side effects under intents with in-doubt policies), parks a
// task in input_required when a step asks for approval, and on shutdown stops claiming, lets
// running steps finish within the drain deadline, checkpoints and releases their tasks with no
// attempt charged. Go cannot load an agent at run time, so the worker is a library: a program
// calls Run with its agent (see examples/worker).
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// Defaults, as the Rust, Python and TypeScript workers have them.
const (
	DefaultConcurrency   = 4
	DefaultLease         = 30 * time.Second
	DefaultPollInterval  = 500 * time.Millisecond
	DefaultDrainDeadline = 10 * time.Second
)

// Options shape a worker; the zero value is the defaults.
type Options struct {
	// WorkerID names this worker in the queue; "host-pid" when empty.
	WorkerID string
	// Concurrency is how many tasks run at once (DefaultConcurrency when 0).
	Concurrency int
	// Lease is asked for on each claim; heartbeats renew it every third of it.
	Lease time.Duration
	// PollInterval is the pause between claims while the queue is empty.
	PollInterval time.Duration
	// ExitAfter stops the worker once this many tasks ended in it (0: until ctx ends). A task
	// parked for approval has not ended.
	ExitAfter int
	// DrainDeadline is how long a running step may still run once shutdown begins.
	DrainDeadline time.Duration
	// Recovery is the recovery loop's policy: strategy, resurrections, cooldown, classifier.
	// The classifier also decides whether a failed task is reported fatal or transient.
	Recovery []recovery.Option
	// Logger gets warnings (a lost lease, a failed heartbeat) and the store's news; stderr at
	// warning level when nil.
	Logger *slog.Logger
	// Events gets one "event KIND key=value ..." line per claim, resume and end, as the other
	// workers print them (os.Stdout when nil; io.Discard to silence).
	Events io.Writer
}

// End is how a task ended in this worker, as the "event finished ... end=" line names it:
// one of the constants, or an operator's move (the refusal's reason in lower case, e.g.
// "task_state").
type End string

const (
	Completed        End = "completed"
	AwaitingApproval End = "awaiting_approval"
	Released         End = "released"
	FailedFatal      End = "failed_fatal"
	FailedTransient  End = "failed_transient"
	LeaseLost        End = "lease_lost"
	ReportFailed     End = "report_failed"
)

// TaskEnd is one task's end.
type TaskEnd struct {
	TaskID string
	RunID  string
	End    End
}

// Report is what a worker did.
type Report struct {
	Ends []TaskEnd
}

// Run claims and drives tasks until ctx ends (shutdown: the drain) or ExitAfter tasks ended,
// then waits for the running ones and returns what happened. Cancelling ctx is the graceful
// shutdown: no more claims, running steps finish (or are abandoned at the drain deadline), runs
// are checkpointed and their tasks released. An error is returned only for invalid options.
func Run(ctx context.Context, client *checkpointd.Client, agent recovery.AgentFunc, options Options) (*Report, error) {
	w, err := newWorker(client, agent, options)
	if err != nil {
		return nil, err
	}
	return w.run(ctx), nil
}

type worker struct {
	tasks       checkpointv1.TaskServiceClient
	checkpoints recovery.Backend
	agent       recovery.AgentFunc
	options     Options
	classifier  recovery.Classifier
	logger      *slog.Logger
	events      *eventWriter

	mu     sync.Mutex
	report Report
}

func newWorker(client *checkpointd.Client, agent recovery.AgentFunc, options Options) (*worker, error) {
	if options.WorkerID == "" {
		host, _ := os.Hostname()
		options.WorkerID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if options.Concurrency == 0 {
		options.Concurrency = DefaultConcurrency
	}
	if options.Lease == 0 {
		options.Lease = DefaultLease
	}
	if options.PollInterval == 0 {
		options.PollInterval = DefaultPollInterval
	}
	if options.DrainDeadline == 0 {
		options.DrainDeadline = DefaultDrainDeadline
	}
	switch {
	case options.Concurrency < 1:
		return nil, fmt.Errorf("worker: concurrency must be at least 1, not %d", options.Concurrency)
	case options.Lease < 0 || options.PollInterval < 0 || options.DrainDeadline < 0:
		return nil, errors.New("worker: the lease, poll interval and drain deadline must be positive")
	case options.ExitAfter < 0:
		return nil, fmt.Errorf("worker: ExitAfter must not be negative, not %d", options.ExitAfter)
	}
	// The options are checked once here (an invalid strategy fails now, not per task).
	if _, err := recovery.NewRecoverableAgent(agent, recovery.NewInMemoryStore(nil, nil), options.Recovery...); err != nil {
		return nil, err
	}
	var policy recovery.Policy
	for _, option := range options.Recovery {
		option(&policy)
	}
	logger := options.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	events := options.Events
	if events == nil {
		events = os.Stdout
	}
	return &worker{tasks: client.Tasks, checkpoints: client.Checkpoints, agent: agent, options: options,
		classifier: policy.Classifier, logger: logger, events: &eventWriter{out: events}}, nil
}

// run is the claim loop: claim up to the free slots, start each task, pause while idle.
func (w *worker) run(ctx context.Context) *Report {
	slots := make(chan struct{}, w.options.Concurrency)
	ended := make(chan struct{}, w.options.Concurrency)
	var running sync.WaitGroup
	for ctx.Err() == nil && !w.done() {
		free := cap(slots) - len(slots)
		var claimed []*checkpointv1.Task
		if free > 0 {
			claimed = w.claim(ctx, free)
		}
		for _, task := range claimed {
			slots <- struct{}{}
			running.Go(func() {
				defer func() {
					<-slots
					select {
					case ended <- struct{}{}:
					default:
					}
				}()
				w.runTask(ctx, task)
			})
		}
		if len(claimed) == 0 {
			w.pause(ctx, ended)
		}
	}
	running.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return &Report{Ends: append([]TaskEnd(nil), w.report.Ends...)}
}

// pause waits a poll interval, or less when shutdown begins or a running task ends.
func (w *worker) pause(ctx context.Context, ended <-chan struct{}) {
	timer := time.NewTimer(w.options.PollInterval)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-ended:
	}
}

// claim asks for up to free tasks. The call itself outlives a shutdown that begins meanwhile,
// so no task is claimed and then dropped: a task claimed that late starts, sees the drain and
// is released at once.
func (w *worker) claim(ctx context.Context, free int) []*checkpointv1.Task {
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.options.Lease)
	defer cancel()
	reply, err := w.tasks.Claim(callCtx, &checkpointv1.ClaimRequest{WorkerId: w.options.WorkerID,
		LeaseDuration: durationpb.New(w.options.Lease), BatchSize: uint32(min(free, 100))})
	if err != nil {
		w.logger.Warn("checkpointd-worker: claim failed; retrying", "error", err.Error())
		return nil
	}
	return reply.GetTasks()
}

// done says whether ExitAfter tasks ended here.
func (w *worker) done() bool {
	if w.options.ExitAfter == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	count := 0
	for _, end := range w.report.Ends {
		if end.End != AwaitingApproval {
			count++
		}
	}
	return count >= w.options.ExitAfter
}

func (w *worker) record(end TaskEnd) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.report.Ends = append(w.report.Ends, end)
}
