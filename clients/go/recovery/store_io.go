// The store's writes and reads: Save (only new messages, the client's checksum, the epoch, an
// OpenTelemetry span), the loads (paged, verified on the client, corrupt checkpoints skipped
// loudly), Validate, and the tool journal (results and intents).
package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// TracerName is the OpenTelemetry tracer of the save spans; a no-op unless the application
// registered an SDK (the API only is a dependency).
const TracerName = "checkpointd"

// Save stores a checkpoint durably: the state, the messages past what the run's log holds
// (input.Messages is the whole history, append-only) and the metadata, with the client's
// checksum v1 and the run's epoch, inside a "checkpoint.save" client span.
func (s *CheckpointStore) Save(ctx context.Context, input CheckpointInput) (*AgentCheckpoint, error) {
	run, err := s.run(ctx, input.RunID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	base, epoch, tools, toolsKnown := run.messages, run.epoch, run.tools, run.toolsKnown
	s.mu.Unlock()
	if uint64(len(input.Messages)) < base.Len {
		return nil, fmt.Errorf("checkpointd: run %s holds %d messages and the checkpoint has %d: the message log is append-only",
			input.RunID, base.Len, len(input.Messages))
	}
	fresh := make([]*checkpointv1.Message, 0, uint64(len(input.Messages))-base.Len)
	for _, message := range input.Messages[base.Len:] {
		role, content, err := encodeMessage(message)
		if err != nil {
			return nil, err
		}
		fresh = append(fresh, &checkpointv1.Message{Role: role, Content: content})
	}
	chain := checkpointd.MessagesOf(base, fresh)
	state, err := encodeState(input.State)
	if err != nil {
		return nil, err
	}
	metadata := input.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	request := &checkpointv1.SaveRequest{RunId: input.RunID, Step: input.Step, ContentType: ContentType,
		State: state, Messages: fresh, MessageOffset: base.Len, Metadata: metadata, Epoch: &epoch}
	if toolsKnown {
		sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: input.RunID, Step: uint64(input.Step),
			ContentType: ContentType, State: state, Metadata: metadata}, chain, tools)
		request.Checksum = &sum
	}
	reply, err := s.saveTraced(ctx, request)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.stats.Saves++
	s.stats.Bytes += len(state)
	if request.Checksum != nil {
		s.stats.WithClientChecksum++
	}
	run.messages = chain
	results := make([]*checkpointv1.ToolResult, 0, len(run.journal))
	for _, result := range run.journal {
		results = append(results, result)
	}
	s.mu.Unlock()
	saved := &AgentCheckpoint{CheckpointID: reply.GetCheckpointId(), RunID: input.RunID, Step: input.Step,
		State: input.State, Messages: append([]Message(nil), input.Messages...), ToolResults: resultsOf(results),
		Checksum: reply.GetChecksum(), IsValid: true, Metadata: metadata, Epoch: epoch}
	if reply.GetCreatedAt() != nil {
		saved.Timestamp = reply.GetCreatedAt().AsTime()
	}
	return saved, nil
}

// saveTraced is one Save inside one client span.
func (s *CheckpointStore) saveTraced(ctx context.Context, request *checkpointv1.SaveRequest) (*checkpointv1.SaveResponse, error) {
	ctx, span := otel.Tracer(TracerName).Start(ctx, "checkpoint.save", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("checkpoint.run_id", request.GetRunId()),
			attribute.Int64("checkpoint.step", request.GetStep()),
			attribute.Int("checkpoint.bytes", len(request.GetState()))))
	defer span.End()
	started := time.Now()
	reply, err := s.backend.Save(ctx, request)
	span.SetAttributes(attribute.Float64("checkpoint.save.latency_ms", float64(time.Since(started).Microseconds())/1000))
	if err != nil {
		span.SetStatus(otelcodes.Error, err.Error())
		return nil, err
	}
	return reply, nil
}

// LoadLatest is the latest valid checkpoint, its whole history fetched page by page. Corrupt
// ones are quarantined by the server and skipped, loudly on every load that passes over them
// (AgentCheckpoint.PassedOver names them, and a warning is logged); nil when the run has none, or (said
// loudly) when every checkpoint is corrupt. One that fails the client's own checksum check is
// returned with IsValid false and logged as an error.
func (s *CheckpointStore) LoadLatest(ctx context.Context, runID string) (*AgentCheckpoint, error) {
	reply, err := loadLatestWhole(ctx, s.backend, runID)
	var typed *checkpointd.Error
	switch {
	case isNotFound(err):
		return nil, nil
	case errors.As(err, &typed) && typed.Code == codes.DataLoss:
		s.logger.Error(fmt.Sprintf("checkpointd: every checkpoint of run %s is corrupt (%s); restart at step 0",
			runID, typed.Message), "run_id", runID)
		return nil, nil
	case err != nil:
		return nil, err
	}
	passed := checkpointd.PassedOverOf(reply)
	if len(passed) > 0 {
		s.warnPassedOver(runID, reply.GetCheckpoint().GetStep(), passed)
	}
	if reply.GetCheckpoint() == nil {
		return nil, nil
	}
	checkpoint := toCheckpoint(reply.GetCheckpoint(), reply.GetToolResults(), reply.GetToolIntents())
	checkpoint.PassedOver = passed
	if !checkpoint.IsValid {
		s.logger.Error(fmt.Sprintf("checkpointd: the checkpoint of run %s at step %d fails the client's checksum check",
			runID, checkpoint.Step), "run_id", runID)
	}
	return checkpoint, nil
}

// LoadAtStep is the checkpoint at step; nil when there is none; DATA_LOSS (CHECKPOINT_CORRUPT)
// when it is corrupt, quarantined or not: a corrupt checkpoint asked for by its step is never
// answered with another one.
func (s *CheckpointStore) LoadAtStep(ctx context.Context, runID string, step int64) (*AgentCheckpoint, error) {
	reply, err := loadAtStepWhole(ctx, s.backend, runID, step)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return toCheckpoint(reply.GetCheckpoint(), reply.GetToolResults(), reply.GetToolIntents()), nil
}

// Validate says whether a loaded checkpoint is intact: its checksum verified here, the stored
// one verified by the server, and both equal.
func (s *CheckpointStore) Validate(ctx context.Context, checkpoint *AgentCheckpoint) (bool, error) {
	step := checkpoint.Step
	verdicts, err := s.verdicts(ctx, checkpoint.RunID, &step)
	if err != nil || len(verdicts) == 0 {
		return false, err
	}
	return checkpoint.IsValid && verdicts[0].GetValid() && verdicts[0].GetStoredChecksum() == checkpoint.Checksum, nil
}

// ValidateRun is the server's verdict on step, or on every checkpoint of the run when step is nil.
func (s *CheckpointStore) ValidateRun(ctx context.Context, runID string, step *int64) (bool, error) {
	verdicts, err := s.verdicts(ctx, runID, step)
	if err != nil || len(verdicts) == 0 {
		return false, err
	}
	for _, verdict := range verdicts {
		if !verdict.GetValid() {
			return false, nil
		}
	}
	return true, nil
}

func (s *CheckpointStore) verdicts(ctx context.Context, runID string, step *int64) ([]*checkpointv1.CheckpointVerdict, error) {
	reply, err := s.backend.Validate(ctx, &checkpointv1.ValidateRequest{RunId: runID, Step: step})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return reply.GetVerdicts(), nil
}

// RecordToolResult journals a tool's result under the run's epoch (the stored one when the
// call id was journalled already), settling the call if it was in doubt. argumentsDigest is the
// call's [checkpointd.ArgumentsDigest] ("" for none): a call id journalled with another one is
// refused with a [*checkpointd.ReplayMismatchError] and nothing changes.
func (s *CheckpointStore) RecordToolResult(ctx context.Context, runID, callID, toolName string, step int64,
	output []byte, isError bool, argumentsDigest string) (*checkpointv1.ToolResult, error) {
	run, epoch, err := s.writer(ctx, runID)
	if err != nil {
		return nil, err
	}
	reply, err := s.backend.RecordToolResult(ctx, &checkpointv1.RecordToolResultRequest{RunId: runID, CallId: callID,
		ToolName: toolName, Step: step, Output: output, IsError: isError, Epoch: &epoch, ArgumentsDigest: argumentsDigest})
	if err != nil {
		return nil, err
	}
	if reply.GetResult() == nil {
		return nil, fmt.Errorf("checkpointd: RecordToolResult for %s answered no result", callID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run.add(journalEntry{result: reply.GetResult()})
	delete(run.inDoubt, callID)
	return reply.GetResult(), nil
}

// RecordToolIntent journals that a side-effecting call is about to run; the reply has its
// idempotency key (or the result, when the call completed already). argumentsDigest is as on
// RecordToolResult.
func (s *CheckpointStore) RecordToolIntent(ctx context.Context, runID, callID, toolName string,
	step int64, argumentsDigest string) (*checkpointv1.RecordToolIntentResponse, error) {
	run, epoch, err := s.writer(ctx, runID)
	if err != nil {
		return nil, err
	}
	reply, err := s.backend.RecordToolIntent(ctx, &checkpointv1.RecordToolIntentRequest{RunId: runID,
		CallId: callID, ToolName: toolName, Step: step, Epoch: &epoch, ArgumentsDigest: argumentsDigest})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if reply.GetResult() != nil {
		run.add(journalEntry{result: reply.GetResult()})
	} else if !reply.GetAlreadyRecorded() && reply.GetIntent() != nil {
		run.add(journalEntry{intent: reply.GetIntent()})
	}
	return reply, nil
}

// writer is the run's view and the epoch to write it under, resuming it first if need be.
func (s *CheckpointStore) writer(ctx context.Context, runID string) (*runView, uint64, error) {
	run, err := s.run(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return run, run.epoch, nil
}

// add journals a new entry; the chain extends only when it is the next one (else it is unknown).
func (run *runView) add(entry journalEntry) {
	if entry.intent != nil {
		if _, known := run.intents[entry.intent.GetCallId()]; known {
			return
		}
		run.intents[entry.intent.GetCallId()] = entry.intent
	} else {
		if _, known := run.journal[entry.result.GetCallId()]; known {
			return
		}
		run.journal[entry.result.GetCallId()] = entry.result
	}
	if run.toolsKnown && entry.seq() == run.tools.Len+1 {
		run.tools = entry.pushOnto(run.tools)
	} else {
		run.toolsKnown = false
	}
}

// clientRefusal is a refusal found on this side, shaped as the server's (code, ErrorInfo reason).
func clientRefusal(code codes.Code, reason checkpointd.Reason, message string) error {
	st := status.New(code, message)
	if detailed, err := st.WithDetails(&errdetails.ErrorInfo{Reason: string(reason), Domain: checkpointd.ErrorDomain}); err == nil {
		st = detailed
	}
	return checkpointd.FromError(st.Err())
}
