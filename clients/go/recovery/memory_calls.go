// The calls MemoryBackend answers, with the server's rules: Resume, Save, LoadLatest,
// LoadAtStep, Validate, GetRun, RecordToolResult and RecordToolIntent.
package recovery

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

var _ Backend = (*MemoryBackend)(nil)

func (m *MemoryBackend) checkpoint(runID string, step int64, run *memoryRun, offset uint64) *checkpointv1.Checkpoint {
	row := run.checkpoints[step]
	skip := min(int(offset), row.messageCount)
	messages := make([]*checkpointv1.Message, 0, row.messageCount-skip)
	for _, message := range run.messages[skip:row.messageCount] {
		messages = append(messages, proto.Clone(message).(*checkpointv1.Message))
	}
	return &checkpointv1.Checkpoint{CheckpointId: row.id, RunId: runID, Step: step, ContentType: row.contentType,
		State: slices.Clone(row.state), Messages: messages, Metadata: maps.Clone(row.metadata), Epoch: row.epoch,
		Checksum: row.checksum, CreatedAt: stamp(row.createdAt), MessageCount: uint64(row.messageCount),
		ToolCount: uint64(row.toolCount), MessagesOffset: uint64(skip)}
}

func (m *MemoryBackend) result(entry *storedEntry) *checkpointv1.ToolResult {
	return &checkpointv1.ToolResult{CallId: entry.callID, ToolName: entry.toolName, Step: entry.step,
		Output: slices.Clone(entry.output), IsError: entry.isError, Seq: entry.seq, RecordedAt: stamp(entry.recordedAt),
		ArgumentsDigest: entry.argumentsDigest}
}

func (m *MemoryBackend) intent(runID string, entry *storedEntry) *checkpointv1.ToolIntent {
	return &checkpointv1.ToolIntent{CallId: entry.callID, ToolName: entry.toolName, Step: entry.step,
		IdempotencyKey: checkpointd.IdempotencyKey(m.tenant, runID, entry.callID), Seq: entry.seq,
		RecordedAt: stamp(entry.recordedAt), ArgumentsDigest: entry.argumentsDigest}
}

func (m *MemoryBackend) journal(runID string, entries []*storedEntry) ([]*checkpointv1.ToolResult, []*checkpointv1.ToolIntent) {
	var results []*checkpointv1.ToolResult
	var intents []*checkpointv1.ToolIntent
	for _, entry := range entries {
		if entry.intent {
			intents = append(intents, m.intent(runID, entry))
		} else {
			results = append(results, m.result(entry))
		}
	}
	return results, intents
}

// Resume fences older writers (the epoch goes up first), restores the newest valid checkpoint
// and reports the calls in doubt.
func (m *MemoryBackend) Resume(_ context.Context, request *checkpointv1.ResumeRequest, _ ...grpc.CallOption) (*checkpointv1.ResumeResponse, error) {
	runID := request.GetRunId()
	return locked(m, func() (*checkpointv1.ResumeResponse, error) {
		if _, known := m.runs[runID]; request.GetRequireExisting() && !known {
			return nil, refuse(codes.NotFound, checkpointd.ReasonRunNotFound,
				"run %s not found; Resume with require_existing starts no new run", runID)
		}
		run := m.runOf(runID)
		m.runs[runID] = run
		run.epoch++
		run.updatedAt = timeNow()
		corrupt := corruptEntries(run.journal)
		inDoubtDeclared := slices.Contains(request.GetCapabilities(), checkpointv1.ClientCapability_CLIENT_CAPABILITY_IN_DOUBT_CALLS)
		if !inDoubtDeclared && len(corrupt) > 0 {
			return nil, refuse(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt, "the tool journal of run %s has corrupt entries", runID)
		}
		step, found, _, _ := latestValid(runID, run, true)
		count := 0
		if found {
			count = run.checkpoints[step].messageCount
		}
		run.messages = run.messages[:count]
		var sound []*storedEntry
		completed, corruptCalls := map[string]bool{}, map[string]bool{}
		var corruptIDs []string
		for _, entry := range run.journal {
			if corrupt[entry] {
				if !corruptCalls[entry.callID] {
					corruptIDs = append(corruptIDs, entry.callID)
				}
				corruptCalls[entry.callID] = true
				continue
			}
			sound = append(sound, entry)
			if !entry.intent {
				completed[entry.callID] = true
			}
		}
		var inDoubt []*checkpointv1.InDoubtCall
		seen := map[string]bool{}
		for _, entry := range run.journal {
			damaged := corruptCalls[entry.callID]
			if (entry.intent || damaged) && !completed[entry.callID] && !seen[entry.callID] {
				seen[entry.callID] = true
				inDoubt = append(inDoubt, &checkpointv1.InDoubtCall{CallId: entry.callID, ToolName: entry.toolName,
					Step: entry.step, IdempotencyKey: checkpointd.IdempotencyKey(m.tenant, runID, entry.callID), Corrupt: damaged})
			}
		}
		if !inDoubtDeclared && len(inDoubt) > 0 {
			return nil, refuse(codes.FailedPrecondition, checkpointd.ReasonCapabilityRequired,
				"run %s has %d call(s) in doubt; resume with capability CLIENT_CAPABILITY_IN_DOUBT_CALLS", runID, len(inDoubt))
		}
		results, intents := m.journal(runID, sound)
		// Resume's skipped_steps are every quarantined step above the restored one, as the
		// server answers (LoadLatest's are only those it found).
		reply := &checkpointv1.ResumeResponse{RecoveredFromStep: step, SkippedSteps: quarantinedAbove(run, step, found),
			PassedOver: passedOver(run, step, found),
			Epoch:      run.epoch, RestartedFromScratch: !found, InDoubt: inDoubt, CorruptCallIds: corruptIDs,
			ToolResults: results, ToolIntents: intents}
		if found {
			reply.Checkpoint = m.checkpoint(runID, step, run, request.GetMessageOffset())
		}
		return reply, nil
	}, checkID("run_id", runID))
}

// Save stores a checkpoint: fencing, the message offset, checksum v1 (the client's must
// match), idempotent retries and step order.
func (m *MemoryBackend) Save(_ context.Context, request *checkpointv1.SaveRequest, _ ...grpc.CallOption) (*checkpointv1.SaveResponse, error) {
	runID, step := request.GetRunId(), request.GetStep()
	return locked(m, func() (*checkpointv1.SaveResponse, error) {
		run := m.runOf(runID)
		if err := checkEpoch(request.Epoch, run.epoch); err != nil {
			return nil, err
		}
		offset := int(request.GetMessageOffset())
		if offset > len(run.messages) {
			return nil, refuse(codes.FailedPrecondition, checkpointd.ReasonMessageLogBehind,
				"message_offset %d is past the stored message log, which holds %d messages; "+
					"Resume the run and continue from what it restores", offset, len(run.messages))
		}
		log := slices.Clone(run.messages[:offset])
		for _, message := range request.GetMessages() {
			log = append(log, proto.Clone(message).(*checkpointv1.Message))
		}
		metadata := maps.Clone(request.GetMetadata())
		if metadata == nil {
			metadata = map[string]string{}
		}
		checksum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: uint64(step),
			ContentType: request.GetContentType(), State: request.GetState(), Metadata: metadata},
			checkpointd.MessagesOf(checkpointd.MessageChain{}, log), journalChainOf(run.journal))
		if request.Checksum != nil && request.GetChecksum() != checksum {
			return nil, refuse(codes.InvalidArgument, checkpointd.ReasonChecksumMismatch,
				"checksum mismatch: the request carries %s, the content hashes to %s", request.GetChecksum(), checksum)
		}
		replace := false
		if existing := run.checkpoints[step]; existing != nil {
			switch {
			case existing.quarantine != "":
				replace = true
			case existing.checksum == checksum:
				return &checkpointv1.SaveResponse{CheckpointId: existing.id, Checksum: checksum,
					CreatedAt: stamp(existing.createdAt), AlreadyExisted: true}, nil
			case request.GetEpoch() > existing.epoch:
				replace = true
			default:
				return nil, refuse(codes.AlreadyExists, checkpointd.ReasonStepConflict,
					"step %d of run %s already holds a different checkpoint", step, runID)
			}
		}
		if !replace {
			for latest, row := range run.checkpoints {
				if row.quarantine == "" && latest >= step {
					return nil, refuse(codes.FailedPrecondition, checkpointd.ReasonStepBehindLatest,
						"step %d is not after the run's latest checkpoint at step %d", step, latest)
				}
			}
		}
		if offset != len(run.messages) {
			return nil, invalid("message_offset %d does not match the message log's length %d", offset, len(run.messages))
		}
		m.runs[runID] = run
		run.messages = log
		m.ids++
		row := &storedCheckpoint{id: fmt.Sprintf("mem-%d", m.ids), epoch: request.GetEpoch(),
			contentType: request.GetContentType(), state: slices.Clone(request.GetState()), metadata: metadata,
			messageCount: len(log), toolCount: len(run.journal), checksum: checksum, createdAt: timeNow()}
		run.updatedAt = row.createdAt
		run.checkpoints[step] = row
		return &checkpointv1.SaveResponse{CheckpointId: row.id, Checksum: checksum, CreatedAt: stamp(row.createdAt)}, nil
	}, checkID("run_id", runID), checkStep(step))
}

// LoadLatest is the newest valid checkpoint with the whole journal.
func (m *MemoryBackend) LoadLatest(_ context.Context, request *checkpointv1.LoadLatestRequest, _ ...grpc.CallOption) (*checkpointv1.LoadLatestResponse, error) {
	runID := request.GetRunId()
	return locked(m, func() (*checkpointv1.LoadLatestResponse, error) {
		run, known := m.runs[runID]
		if !known {
			return nil, refuse(codes.NotFound, checkpointd.ReasonCheckpointNotFound, "run %s has no checkpoints", runID)
		}
		step, found, skipped, err := latestValid(runID, run, false)
		if err != nil {
			return nil, err
		}
		if !found {
			if len(skipped) == 0 {
				skipped = quarantinedAbove(run, 0, false)
			}
			if len(skipped) == 0 {
				return nil, refuse(codes.NotFound, checkpointd.ReasonCheckpointNotFound, "run %s has no checkpoints", runID)
			}
			return nil, refuse(codes.DataLoss, checkpointd.ReasonAllCheckpointsCorrupt,
				"every checkpoint of run %s is corrupt (%d quarantined)", runID, len(skipped))
		}
		results, intents := m.journal(runID, run.journal)
		return &checkpointv1.LoadLatestResponse{Checkpoint: m.checkpoint(runID, step, run, request.GetMessageOffset()),
			SkippedSteps: skipped, PassedOver: passedOver(run, step, true), ToolResults: results, ToolIntents: intents}, nil
	}, checkID("run_id", runID))
}

// LoadAtStep is the checkpoint at a step, DATA_LOSS when it is corrupt.
func (m *MemoryBackend) LoadAtStep(_ context.Context, request *checkpointv1.LoadAtStepRequest, _ ...grpc.CallOption) (*checkpointv1.LoadAtStepResponse, error) {
	runID, step := request.GetRunId(), request.GetStep()
	return locked(m, func() (*checkpointv1.LoadAtStepResponse, error) {
		run, known := m.runs[runID]
		if !known || run.checkpoints[step] == nil {
			return nil, refuse(codes.NotFound, checkpointd.ReasonCheckpointNotFound, "run %s has no checkpoint at step %d", runID, step)
		}
		row := run.checkpoints[step]
		if row.quarantine != "" {
			return nil, refuse(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt,
				"checkpoint at step %d is quarantined: %s", step, row.quarantine)
		}
		if len(corruptEntries(run.journal)) > 0 {
			return nil, refuse(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt, "tool journal is corrupt")
		}
		if reason := verify(runID, run, step); reason != "" {
			row.quarantineFor(reason)
			return nil, refuse(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt, "checkpoint at step %d is corrupt: %s", step, reason)
		}
		results, intents := m.journal(runID, run.journal)
		return &checkpointv1.LoadAtStepResponse{Checkpoint: m.checkpoint(runID, step, run, request.GetMessageOffset()),
			ToolResults: results, ToolIntents: intents}, nil
	}, checkID("run_id", runID), checkStep(step))
}

// Validate verifies one step, or every checkpoint of the run, quarantining what fails.
func (m *MemoryBackend) Validate(_ context.Context, request *checkpointv1.ValidateRequest, _ ...grpc.CallOption) (*checkpointv1.ValidateResponse, error) {
	runID := request.GetRunId()
	return locked(m, func() (*checkpointv1.ValidateResponse, error) {
		run, known := m.runs[runID]
		if !known || len(run.checkpoints) == 0 {
			return nil, refuse(codes.NotFound, checkpointd.ReasonCheckpointNotFound, "run %s has no checkpoints", runID)
		}
		steps := stepsNewestFirst(run)
		slices.Reverse(steps)
		if request.Step != nil {
			steps = []int64{request.GetStep()}
		}
		reply := &checkpointv1.ValidateResponse{}
		for _, step := range steps {
			row := run.checkpoints[step]
			if row == nil {
				return nil, refuse(codes.NotFound, checkpointd.ReasonCheckpointNotFound, "run %s has no checkpoint at step %d", runID, step)
			}
			earlier := row.quarantine
			fresh := verify(runID, run, step)
			if fresh != "" && earlier == "" {
				row.quarantineFor(fresh)
			}
			reason := fresh
			if reason == "" && earlier != "" {
				reason = "quarantined earlier: " + earlier
			}
			reply.Verdicts = append(reply.Verdicts, &checkpointv1.CheckpointVerdict{Step: step, Valid: fresh == "",
				Reason: reason, StoredChecksum: row.checksum, Quarantined: fresh != "" || earlier != ""})
		}
		return reply, nil
	}, checkID("run_id", runID))
}

// GetRun is the run's head.
func (m *MemoryBackend) GetRun(_ context.Context, request *checkpointv1.GetRunRequest, _ ...grpc.CallOption) (*checkpointv1.GetRunResponse, error) {
	runID := request.GetRunId()
	return locked(m, func() (*checkpointv1.GetRunResponse, error) {
		run, known := m.runs[runID]
		if !known {
			return nil, refuse(codes.NotFound, checkpointd.ReasonRunNotFound, "run %s not found", runID)
		}
		head := &checkpointv1.RunHead{RunId: runID, Epoch: run.epoch, MessageCount: uint64(len(run.messages)),
			ToolCount: uint64(len(run.journal)), CheckpointCount: uint64(len(run.checkpoints)), UpdatedAt: stamp(run.updatedAt)}
		for _, step := range stepsNewestFirst(run) {
			if head.LatestStep == nil {
				head.LatestStep = proto.Int64(step)
			}
			if head.LatestValidStep == nil && run.checkpoints[step].quarantine == "" {
				head.LatestValidStep = proto.Int64(step)
			}
		}
		return &checkpointv1.GetRunResponse{Run: head}, nil
	}, checkID("run_id", runID))
}

// RecordToolResult journals a result once per call id (a retry gets the stored one).
func (m *MemoryBackend) RecordToolResult(_ context.Context, request *checkpointv1.RecordToolResultRequest, _ ...grpc.CallOption) (*checkpointv1.RecordToolResultResponse, error) {
	runID, callID := request.GetRunId(), request.GetCallId()
	return locked(m, func() (*checkpointv1.RecordToolResultResponse, error) {
		run := m.runOf(runID)
		if err := checkEpoch(request.Epoch, run.epoch); err != nil {
			return nil, err
		}
		if err := digestConflict(run, callID, request.GetArgumentsDigest()); err != nil {
			return nil, err
		}
		digest := request.GetArgumentsDigest()
		for _, entry := range run.journal {
			if entry.callID == callID && !entry.intent {
				return &checkpointv1.RecordToolResultResponse{Result: m.result(entry), AlreadyRecorded: true}, nil
			}
			if entry.callID == callID && digest == "" {
				digest = entry.argumentsDigest // the result completes the intent's call
			}
		}
		entry := m.append(runID, run, &storedEntry{callID: callID, toolName: request.GetToolName(), step: request.GetStep(),
			output: slices.Clone(request.GetOutput()), isError: request.GetIsError(), argumentsDigest: digest})
		return &checkpointv1.RecordToolResultResponse{Result: m.result(entry)}, nil
	}, checkID("run_id", runID), checkID("call_id", callID), checkStep(request.GetStep()),
		checkDigest(request.GetArgumentsDigest()))
}

// RecordToolIntent journals an intent; a call known already (intent, result or both) gets none.
func (m *MemoryBackend) RecordToolIntent(_ context.Context, request *checkpointv1.RecordToolIntentRequest, _ ...grpc.CallOption) (*checkpointv1.RecordToolIntentResponse, error) {
	runID, callID := request.GetRunId(), request.GetCallId()
	return locked(m, func() (*checkpointv1.RecordToolIntentResponse, error) {
		run := m.runOf(runID)
		if err := checkEpoch(request.Epoch, run.epoch); err != nil {
			return nil, err
		}
		if err := digestConflict(run, callID, request.GetArgumentsDigest()); err != nil {
			return nil, err
		}
		reply := &checkpointv1.RecordToolIntentResponse{}
		for _, entry := range run.journal {
			if entry.callID != callID {
				continue
			}
			reply.AlreadyRecorded = true
			if entry.intent {
				reply.Intent = m.intent(runID, entry)
			} else {
				reply.Result = m.result(entry)
			}
		}
		if reply.AlreadyRecorded {
			return reply, nil
		}
		entry := m.append(runID, run, &storedEntry{intent: true, callID: callID, toolName: request.GetToolName(),
			step: request.GetStep(), argumentsDigest: request.GetArgumentsDigest()})
		reply.Intent = m.intent(runID, entry)
		return reply, nil
	}, checkID("run_id", runID), checkID("call_id", callID), checkStep(request.GetStep()),
		checkDigest(request.GetArgumentsDigest()))
}

// append journals a new entry: its seq and chain value are the run's next.
func (m *MemoryBackend) append(runID string, run *memoryRun, entry *storedEntry) *storedEntry {
	m.runs[runID] = run
	entry.recordedAt = timeNow()
	chain := entry.pushOnto(journalChainOf(run.journal))
	entry.seq, entry.chain = chain.Len, chain.Hex()
	run.journal = append(run.journal, entry)
	run.updatedAt = entry.recordedAt
	return entry
}

// locked refuses the first bad input, or answers with body under the lock.
func locked[Reply any](m *MemoryBackend, body func() (Reply, error), checks ...error) (Reply, error) {
	for _, err := range checks {
		if err != nil {
			var none Reply
			return none, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return body()
}
