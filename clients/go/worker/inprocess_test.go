// The worker in this process: each save of a task's run is one checkpoint.save span, Run's
// report names each task's end, and invalid options are refused before anything is claimed.
package worker_test

import (
	"context"
	"flag"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
	"github.com/checkpointd/checkpointd/clients/go/worker"
)

// spanCounter is a TracerProvider (API only) that counts the spans started, by name.
type spanCounter struct {
	embedded.TracerProvider
	mu      sync.Mutex
	started map[string]int
}

func (c *spanCounter) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return countingTracer{counter: c}
}

func (c *spanCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started[name]
}

type countingTracer struct {
	embedded.Tracer
	counter *spanCounter
}

func (t countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.counter.mu.Lock()
	t.counter.started[name]++
	t.counter.mu.Unlock()
	return noop.NewTracerProvider().Tracer("").Start(ctx, name, opts...)
}

// sevenSteps finishes at step 7; every 3 steps it is saved at 3 and 6, and at 7 as finished.
func sevenSteps(_ context.Context, step *recovery.StepContext) (*recovery.Done, error) {
	step.AddMessage("assistant", "step")
	if step.Step == 7 {
		return &recovery.Done{Result: "done"}, nil
	}
	return nil, nil
}

func TestEachSaveOfAWorkersRunIsOneCheckpointSaveSpan(t *testing.T) {
	counter := &spanCounter{started: map[string]int{}}
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(counter)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			server := testserver.Start(t, testserver.Options{Backend: backend})
			f := newFixture(t, server, "spans")
			taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-spans"})
			before := counter.count("checkpoint.save")
			var events strings.Builder
			report, err := worker.Run(context.Background(), f.client, sevenSteps,
				worker.Options{ExitAfter: 1, PollInterval: 50 * time.Millisecond, Events: &events})
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "report", report.Ends, []worker.TaskEnd{{TaskID: taskID, RunID: "go-worker-spans", End: worker.Completed}})
			mustEqual(t, "checkpoints", f.checkpointSteps("go-worker-spans"), []int64{3, 6, 7})
			mustEqual(t, "checkpoint.save spans", counter.count("checkpoint.save")-before, 3)
			mustMatch(t, `event finished run=go-worker-spans task=`+taskID+` end=completed`, events.String())
		})
	}
}

func TestInvalidOptionsAreRefusedBeforeAnythingIsClaimed(t *testing.T) {
	client, err := checkpointd.Dial("127.0.0.1:1") // never called: the options fail first
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for name, options := range map[string]worker.Options{
		"concurrency": {Concurrency: -1},
		"lease":       {Lease: -time.Second},
		"exit after":  {ExitAfter: -1},
		"strategy":    {Recovery: []recovery.Option{recovery.WithCheckpointEveryN(0)}},
	} {
		if _, err := worker.Run(context.Background(), client, sevenSteps, options); err == nil {
			t.Errorf("%s: %+v was accepted", name, options)
		}
	}
}

func TestTheFlagsBecomeTheWorkersOptions(t *testing.T) {
	set := flag.NewFlagSet("worker", flag.ContinueOnError)
	flags := worker.BindFlags(set)
	if err := set.Parse([]string{"--concurrency", "2", "--lease", "3s", "--exit-after", "5", "--drain-deadline", "1s",
		"--strategy", "hybrid:2", "--fatal-pattern", "quota exceeded", "--worker-id", "w1"}); err != nil {
		t.Fatal(err)
	}
	options, err := flags.Options()
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "worker options", []any{options.WorkerID, options.Concurrency, options.Lease, options.ExitAfter, options.DrainDeadline},
		[]any{"w1", 2, 3 * time.Second, 5, time.Second})
	var policy recovery.Policy
	for _, option := range options.Recovery {
		option(&policy)
	}
	mustEqual(t, "strategy", policy.Strategy, recovery.Strategy{EveryN: 2, AfterTools: true})
	if !slices.Contains(policy.Classifier.FatalPatterns, "quota exceeded") ||
		!slices.Contains(policy.Classifier.FatalPatterns, recovery.DefaultFatalPatterns[0]) {
		t.Fatalf("fatal patterns %v: want the defaults and the flag's", policy.Classifier.FatalPatterns)
	}

	set = flag.NewFlagSet("worker", flag.ContinueOnError)
	flags = worker.BindFlags(set)
	if err := set.Parse([]string{"--strategy", "sometimes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := flags.Options(); err == nil {
		t.Fatal("an unknown strategy was accepted")
	}
}
