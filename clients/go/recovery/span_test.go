package recovery

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

// recordedSpan is what a span started with: its name, kind and attributes, and its status.
type recordedSpan struct {
	name       string
	kind       trace.SpanKind
	attributes map[attribute.Key]attribute.Value
	status     otelcodes.Code
	ended      bool
}

// recorder is a TracerProvider (API only: no SDK in the module) that records the spans started.
type recorder struct {
	embedded.TracerProvider
	tracer recordingTracer
	mu     sync.Mutex
	spans  []*recordedSpan
}

func (r *recorder) Tracer(string, ...trace.TracerOption) trace.Tracer {
	r.tracer.recorder = r
	return &r.tracer
}

type recordingTracer struct {
	embedded.Tracer
	recorder *recorder
}

func (t *recordingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.recorder.start(ctx, name, opts...)
}

func (r *recorder) start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	config := trace.NewSpanStartConfig(opts...)
	span := &recordedSpan{name: name, kind: config.SpanKind(), attributes: map[attribute.Key]attribute.Value{}}
	for _, kv := range config.Attributes() {
		span.attributes[kv.Key] = kv.Value
	}
	r.mu.Lock()
	r.spans = append(r.spans, span)
	r.mu.Unlock()
	_, inner := noop.NewTracerProvider().Tracer("").Start(ctx, name)
	return ctx, &spanRecorder{Span: inner, record: span}
}

type spanRecorder struct {
	trace.Span
	record *recordedSpan
}

func (s *spanRecorder) SetStatus(code otelcodes.Code, _ string) { s.record.status = code }
func (s *spanRecorder) End(...trace.SpanEndOption)              { s.record.ended = true }

func TestEverySaveIsOneClientSpanAndAFailedSaveMarksItsSpan(t *testing.T) {
	spans := &recorder{}
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(spans)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	ctx := context.Background()
	memory := NewMemoryBackend("default")
	store := NewCheckpointStore(memory, nil)
	saveSteps(t, ctx, store, "traced", 1, 2)
	// Another writer takes the run over: the next save is refused, and its span says so.
	if _, err := NewCheckpointStore(memory, nil).Resume(ctx, "traced", true); err != nil {
		t.Fatal(err)
	}
	_, err := store.Save(ctx, CheckpointInput{RunID: "traced", Step: 3, State: State{"big": "xyz"},
		Messages: []Message{{Role: "assistant", Content: "step 1"}, {Role: "assistant", Content: "step 2"}}})
	if !errors.Is(err, checkpointd.ErrStaleEpoch) {
		t.Fatalf("save: %v", err)
	}
	if len(spans.spans) != 3 {
		t.Fatalf("%d spans for 3 saves", len(spans.spans))
	}
	for i, span := range spans.spans {
		if span.name != "checkpoint.save" || span.kind != trace.SpanKindClient || !span.ended ||
			span.attributes["checkpoint.run_id"].AsString() != "traced" || span.attributes["checkpoint.step"].AsInt64() != int64(i+1) {
			t.Errorf("span %d: %+v", i, span)
		}
	}
	if spans.spans[0].status != otelcodes.Unset || spans.spans[2].status != otelcodes.Error {
		t.Errorf("statuses %v and %v, want unset and error", spans.spans[0].status, spans.spans[2].status)
	}
	if got := spans.spans[2].attributes["checkpoint.bytes"].AsInt64(); got != int64(len(`{"big":"xyz"}`)) {
		t.Errorf("checkpoint.bytes %d", got)
	}
}
