// The client against a real `checkpointd serve` on SQLite and on Postgres: save and load round
// trips verified by checksum, a large state, a wrong checksum refused with its reason, deadlines,
// and the WatchTasks stream.

package checkpointd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// patience bounds waits that only a failure reaches.
const patience = 10 * time.Second

func dial(t *testing.T, address string, opts ...checkpointd.Option) *checkpointd.Client {
	t.Helper()
	client, err := checkpointd.Dial(address, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// saveRequest is a Save of step with its new messages, checksummed over the log so far.
func saveRequest(runID string, step uint64, state []byte, log checkpointd.MessageChain,
	messages []*checkpointv1.Message) (*checkpointv1.SaveRequest, checkpointd.MessageChain) {
	after := checkpointd.MessagesOf(log, messages)
	metadata := map[string]string{"agent": "go-test", "été": "utf8"}
	checksum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: step,
		ContentType: "application/json", State: state, Metadata: metadata}, after, checkpointd.ToolChain{})
	return &checkpointv1.SaveRequest{RunId: runID, Step: int64(step), ContentType: "application/json",
		State: state, Messages: messages, MessageOffset: log.Len, Metadata: metadata, Checksum: &checksum}, after
}

func TestClientOnEachBackend(t *testing.T) {
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			server := testserver.Start(t, testserver.Options{Backend: backend})
			client := dial(t, server.Addr())
			t.Run("SavedCheckpointsLoadLatestAndAtStepWithTheirChecksumVerified", func(t *testing.T) {
				savedThenLoadedVerified(t, client)
			})
			t.Run("AStateOfSixMebibytesSavesAndLoads", func(t *testing.T) {
				largeStateRoundTrip(t, client)
			})
			t.Run("AWrongChecksumIsRefusedWithReasonChecksumMismatch", func(t *testing.T) {
				wrongChecksumRefused(t, client)
			})
			t.Run("AnUnknownRunIsRefusedWithReasonRunNotFoundOrCheckpointNotFound", func(t *testing.T) {
				_, err := client.Checkpoints.LoadLatest(testContext(t), &checkpointv1.LoadLatestRequest{RunId: "never-saved"})
				if status := codeOf(t, err); status != codes.NotFound ||
					!(errors.Is(err, checkpointd.ErrRunNotFound) || errors.Is(err, checkpointd.ErrCheckpointNotFound)) {
					t.Fatalf("want NOT_FOUND with a not-found reason, got %v", err)
				}
			})
			t.Run("AStreamPastItsDeadlineEndsWithDeadlineExceeded", func(t *testing.T) {
				streamDeadlineExceeded(t, client)
			})
			t.Run("TheDefaultTimeoutBoundsAUnaryCallWithoutADeadline", func(t *testing.T) {
				impatient := dial(t, server.Addr(), checkpointd.WithDefaultTimeout(time.Nanosecond))
				_, err := impatient.Checkpoints.GetRun(context.Background(), &checkpointv1.GetRunRequest{RunId: "x"})
				if codeOf(t, err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("want DEADLINE_EXCEEDED, got %v", err)
				}
			})
			t.Run("WatchTasksSeesAnApprovalRequestAsItHappens", func(t *testing.T) {
				watchSeesApprovalRequest(t, client)
			})
			t.Run("ValidateTenantStreamsAVerdictPerCheckpointOfTheHeadersTenantOnly", func(t *testing.T) {
				validateTenantStreamsVerdicts(t, server)
			})
		})
	}
}

func codeOf(t *testing.T, err error) codes.Code {
	t.Helper()
	var typed *checkpointd.Error
	if !errors.As(err, &typed) {
		t.Fatalf("want an *checkpointd.Error, got %T: %v", err, err)
	}
	return typed.Code
}

func savedThenLoadedVerified(t *testing.T, client *checkpointd.Client) {
	ctx := testContext(t)
	runID := fmt.Sprintf("go-roundtrip-%d", time.Now().UnixNano())
	first, log := saveRequest(runID, 1, []byte(`{"n":1}`), checkpointd.MessageChain{},
		[]*checkpointv1.Message{{Role: "user", Content: []byte(`{"content":"hi"}`)}})
	if _, err := client.Checkpoints.Save(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, _ := saveRequest(runID, 2, []byte(`{"n":2}`), log,
		[]*checkpointv1.Message{{Role: "assistant", Content: []byte(`{"content":"hello"}`)}})
	if _, err := client.Checkpoints.Save(ctx, second); err != nil {
		t.Fatal(err)
	}
	latest, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
	if err != nil {
		t.Fatal(err)
	}
	checksum, err := checkpointd.VerifyCheckpoint(latest.GetCheckpoint(), latest.GetToolResults(),
		latest.GetToolIntents(), checkpointd.MessageChain{})
	if err != nil || checksum != second.GetChecksum() {
		t.Fatalf("latest: %v (checksum %s, saved %s)", err, checksum, second.GetChecksum())
	}
	if latest.GetCheckpoint().GetStep() != 2 || len(latest.GetCheckpoint().GetMessages()) != 2 {
		t.Fatalf("latest is step %d with %d messages", latest.GetCheckpoint().GetStep(), len(latest.GetCheckpoint().GetMessages()))
	}
	atStep, err := client.Checkpoints.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{RunId: runID, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	checksum, err = checkpointd.VerifyCheckpoint(atStep.GetCheckpoint(), atStep.GetToolResults(),
		atStep.GetToolIntents(), checkpointd.MessageChain{})
	if err != nil || checksum != first.GetChecksum() || string(atStep.GetCheckpoint().GetState()) != `{"n":1}` {
		t.Fatalf("step 1: %v (checksum %s, saved %s)", err, checksum, first.GetChecksum())
	}
	// A tampered answer fails verification on the client, with the corruption reason.
	atStep.GetCheckpoint().State = []byte(`{"n":9}`)
	_, err = checkpointd.VerifyCheckpoint(atStep.GetCheckpoint(), nil, nil, checkpointd.MessageChain{})
	if !errors.Is(err, checkpointd.ErrCheckpointCorrupt) || codeOf(t, err) != codes.DataLoss {
		t.Fatalf("a changed state verified: %v", err)
	}
}

func largeStateRoundTrip(t *testing.T, client *checkpointd.Client) {
	ctx := testContext(t)
	runID := fmt.Sprintf("go-large-%d", time.Now().UnixNano())
	state := bytes.Repeat([]byte("0123456789abcdef"), 6<<20/16) // 6 MiB, above gRPC's 4 MiB default
	request, _ := saveRequest(runID, 1, state, checkpointd.MessageChain{}, nil)
	request.ContentType = "application/octet-stream"
	checksum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: 1,
		ContentType: request.ContentType, State: state, Metadata: request.Metadata},
		checkpointd.MessageChain{}, checkpointd.ToolChain{})
	request.Checksum = &checksum
	if _, err := client.Checkpoints.Save(ctx, request); err != nil {
		t.Fatal(err)
	}
	loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpointd.VerifyCheckpoint(loaded.GetCheckpoint(), nil, nil, checkpointd.MessageChain{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(loaded.GetCheckpoint().GetState(), state) {
		t.Fatalf("loaded %d bytes, saved %d", len(loaded.GetCheckpoint().GetState()), len(state))
	}
}

func wrongChecksumRefused(t *testing.T, client *checkpointd.Client) {
	runID := fmt.Sprintf("go-badsum-%d", time.Now().UnixNano())
	request, _ := saveRequest(runID, 1, []byte(`{}`), checkpointd.MessageChain{}, nil)
	wrong := checkpointd.IdempotencyKey("any", "64 hex digits", "but not the checksum")
	request.Checksum = &wrong
	_, err := client.Checkpoints.Save(testContext(t), request)
	if !errors.Is(err, checkpointd.ErrChecksumMismatch) {
		t.Fatalf("want reason CHECKSUM_MISMATCH, got %v", err)
	}
	var typed *checkpointd.Error
	if !errors.As(err, &typed) || typed.Code != codes.InvalidArgument || typed.Domain != checkpointd.ErrorDomain {
		t.Fatalf("want INVALID_ARGUMENT in domain checkpointd, got %+v", typed)
	}
}

func streamDeadlineExceeded(t *testing.T, client *checkpointd.Client) {
	runID := fmt.Sprintf("go-quiet-%d", time.Now().UnixNano())
	request, _ := saveRequest(runID, 1, []byte(`{}`), checkpointd.MessageChain{}, nil)
	if _, err := client.Checkpoints.Save(testContext(t), request); err != nil {
		t.Fatal(err)
	}
	// Nothing past step 1 is ever saved: the stream waits until its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	stream, err := client.Notifications.WatchRun(ctx, &checkpointv1.WatchRunRequest{RunId: runID, AfterStep: 1})
	if err == nil {
		_, err = stream.Recv()
	}
	if codeOf(t, err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DEADLINE_EXCEEDED, got %v", err)
	}
}

func watchSeesApprovalRequest(t *testing.T, client *checkpointd.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := client.Notifications.WatchTasks(ctx, &checkpointv1.WatchTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	runID := fmt.Sprintf("go-watched-%d", time.Now().UnixNano())
	enqueued, err := client.Tasks.Enqueue(ctx, &checkpointv1.EnqueueRequest{RunId: runID, Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := client.Tasks.Claim(ctx, &checkpointv1.ClaimRequest{WorkerId: "go-test",
		LeaseDuration: durationpb.New(30 * time.Second), BatchSize: 1})
	if err != nil || len(claimed.GetTasks()) != 1 || claimed.GetTasks()[0].GetTaskId() != enqueued.GetTask().GetTaskId() {
		t.Fatalf("claim: %v, %v", err, claimed)
	}
	task := claimed.GetTasks()[0]
	if _, err := client.Tasks.RequestApproval(ctx, &checkpointv1.RequestApprovalRequest{TaskId: task.GetTaskId(),
		Attempt: task.GetAttempt(), Action: "send_email"}); err != nil {
		t.Fatal(err)
	}
	for {
		event, err := stream.Recv()
		if err != nil {
			t.Fatalf("the stream ended before the event: %v", err)
		}
		if event.GetTaskId() == task.GetTaskId() {
			if event.GetEventType() != "task.input_required" || event.GetRunId() != runID || event.GetSequence() == 0 {
				t.Fatalf("unexpected event %v", event)
			}
			return
		}
	}
}

func validateTenantStreamsVerdicts(t *testing.T, server *testserver.Server) {
	ctx := testContext(t)
	tenant := fmt.Sprintf("go-scrub-%d", time.Now().UnixNano())
	scoped := dial(t, server.Addr(), checkpointd.WithTenant(tenant))
	runID := "scrubbed"
	first, log := saveRequest(runID, 1, []byte(`{"n":1}`), checkpointd.MessageChain{}, nil)
	second, _ := saveRequest(runID, 2, []byte(`{"n":2}`), log, nil)
	for _, request := range []*checkpointv1.SaveRequest{first, second} {
		if _, err := scoped.Checkpoints.Save(ctx, request); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := scoped.Checkpoints.ValidateTenant(ctx, &checkpointv1.ValidateTenantRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for {
		verdict, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if verdict.GetRunId() != runID || !verdict.GetVerdict().GetValid() {
			t.Fatalf("unexpected verdict %v", verdict)
		}
		steps = append(steps, verdict.GetVerdict().GetStep())
	}
	if len(steps) != 2 {
		t.Fatalf("want a verdict for steps 1 and 2 of the tenant's one run, got %v", steps)
	}
}
