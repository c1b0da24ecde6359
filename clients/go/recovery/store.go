// CheckpointStore: the checkpoint interface agent authors know, over gRPC (or over the
// in-memory backend), as the TypeScript client's store.ts and the Python client's store.
//
// The store keeps, per run it writes, what a correct writer must carry: the fencing epoch from
// the last Resume, the message log's length (so a save sends only new messages), the checksum
// v1 chains (so every save carries the client's checksum for the server to verify) and the tool
// journal. Loads verify the checksum on the client too and say so in AgentCheckpoint.IsValid;
// corrupt checkpoints skipped, or a restart from scratch, are logged loudly.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// Backend is the calls a store makes: checkpointv1.CheckpointServiceClient (a
// checkpointd.Client's Checkpoints) satisfies it, and so does [MemoryBackend].
type Backend interface {
	Resume(ctx context.Context, in *checkpointv1.ResumeRequest, opts ...grpc.CallOption) (*checkpointv1.ResumeResponse, error)
	Save(ctx context.Context, in *checkpointv1.SaveRequest, opts ...grpc.CallOption) (*checkpointv1.SaveResponse, error)
	LoadLatest(ctx context.Context, in *checkpointv1.LoadLatestRequest, opts ...grpc.CallOption) (*checkpointv1.LoadLatestResponse, error)
	LoadAtStep(ctx context.Context, in *checkpointv1.LoadAtStepRequest, opts ...grpc.CallOption) (*checkpointv1.LoadAtStepResponse, error)
	Validate(ctx context.Context, in *checkpointv1.ValidateRequest, opts ...grpc.CallOption) (*checkpointv1.ValidateResponse, error)
	GetRun(ctx context.Context, in *checkpointv1.GetRunRequest, opts ...grpc.CallOption) (*checkpointv1.GetRunResponse, error)
	RecordToolResult(ctx context.Context, in *checkpointv1.RecordToolResultRequest, opts ...grpc.CallOption) (*checkpointv1.RecordToolResultResponse, error)
	RecordToolIntent(ctx context.Context, in *checkpointv1.RecordToolIntentRequest, opts ...grpc.CallOption) (*checkpointv1.RecordToolIntentResponse, error)
}

// CheckpointInput is what a save takes: the run, the step, and the whole (append-only) history.
type CheckpointInput struct {
	RunID    string
	Step     int64
	State    State
	Messages []Message
	Metadata map[string]string
}

// InDoubt is a side-effecting call whose outcome is unknown after a crash: its intent was
// journalled and no result.
type InDoubt struct {
	CallID         string
	ToolName       string
	Step           int64
	IdempotencyKey string
	// Corrupt: its journal entry is damaged; only an operator's repair settles it.
	Corrupt bool
}

// Resumed is what Resume restored: where the run continues, under which epoch.
type Resumed struct {
	RunID string
	Epoch uint64
	// Checkpoint is nil when the run starts from scratch.
	Checkpoint           *AgentCheckpoint
	RecoveredFromStep    int64
	RestartedFromScratch bool
	// SkippedSteps are the quarantined checkpoints above the restored one, newest first.
	SkippedSteps []int64
	// PassedOver is every quarantined checkpoint newer than the restored one (every one when
	// restarting from scratch), newest first, on every Resume until an operator drops them or a
	// newer checkpoint is saved: each Resume that has some logs a warning naming them.
	PassedOver     []checkpointd.PassedOver
	InDoubt        []InDoubt
	CorruptCallIDs []string
}

// SaveStats counts the saves a store made.
type SaveStats struct {
	Saves int
	Bytes int
	// WithClientChecksum: saves that carried the client's checksum (all but those after a gap
	// in the journal).
	WithClientChecksum int
}

// runView is what the store carries for a run it writes.
type runView struct {
	epoch    uint64
	messages checkpointd.MessageChain
	// tools is meaningless when toolsKnown is false: the journal seen has a gap (a corrupt
	// entry), and saves then carry no client checksum.
	tools      checkpointd.ToolChain
	toolsKnown bool
	journal    map[string]*checkpointv1.ToolResult
	intents    map[string]*checkpointv1.ToolIntent
	inDoubt    map[string]InDoubt
}

// CheckpointStore holds checkpoints of agent runs in checkpointd. A store is the writer of the
// runs it saves: the first save of a run it has not resumed resumes it, which takes the run
// over (a new fencing epoch; writers holding an older one are refused). Safe for concurrent use
// on different runs.
type CheckpointStore struct {
	backend Backend
	logger  *slog.Logger

	mu    sync.Mutex
	runs  map[string]*runView
	stats SaveStats
}

// NewCheckpointStore is a store over backend: a checkpointd.Client's Checkpoints, or a
// [MemoryBackend]. A nil logger writes warnings and errors to stderr and drops routine news,
// as the other clients do by default.
func NewCheckpointStore(backend Backend, logger *slog.Logger) *CheckpointStore {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return &CheckpointStore{backend: backend, logger: logger, runs: map[string]*runView{}}
}

// NewInMemoryStore is a store whose runs live in memory (a new MemoryBackend unless one is
// given to share): for tests and throwaway runs; nothing survives the process.
func NewInMemoryStore(memory *MemoryBackend, logger *slog.Logger) *CheckpointStore {
	if memory == nil {
		memory = NewMemoryBackend("default")
	}
	return NewCheckpointStore(memory, logger)
}

// Logger is where the store and the recovery loop say what they did.
func (s *CheckpointStore) Logger() *slog.Logger { return s.logger }

// Stats are the counts of the saves made so far.
func (s *CheckpointStore) Stats() SaveStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Resume takes the run over: a new epoch, the latest valid checkpoint (corrupt ones skipped,
// loudly), the message log truncated to it, and the whole tool journal to replay from. With
// requireExisting, a run never seen is NOT_FOUND (RUN_NOT_FOUND) instead of a new run.
func (s *CheckpointStore) Resume(ctx context.Context, runID string, requireExisting bool) (*Resumed, error) {
	reply, err := resumeWhole(ctx, s.backend, runID, requireExisting)
	if err != nil {
		return nil, err
	}
	run := &runView{epoch: reply.GetEpoch(), journal: map[string]*checkpointv1.ToolResult{},
		intents: map[string]*checkpointv1.ToolIntent{}, inDoubt: map[string]InDoubt{}}
	run.tools, run.toolsKnown = JournalChain(reply.GetToolResults(), reply.GetToolIntents(), nil)
	for _, result := range reply.GetToolResults() {
		run.journal[result.GetCallId()] = result
	}
	for _, intent := range reply.GetToolIntents() {
		run.intents[intent.GetCallId()] = intent
	}
	resumed := &Resumed{RunID: runID, Epoch: reply.GetEpoch(), RecoveredFromStep: reply.GetRecoveredFromStep(),
		RestartedFromScratch: reply.GetRestartedFromScratch(), SkippedSteps: reply.GetSkippedSteps(),
		PassedOver: checkpointd.PassedOverOf(reply), CorruptCallIDs: reply.GetCorruptCallIds()}
	for _, call := range reply.GetInDoubt() {
		doubt := InDoubt{CallID: call.GetCallId(), ToolName: call.GetToolName(), Step: call.GetStep(),
			IdempotencyKey: call.GetIdempotencyKey(), Corrupt: call.GetCorrupt()}
		run.inDoubt[doubt.CallID] = doubt
		resumed.InDoubt = append(resumed.InDoubt, doubt)
	}
	if reply.GetCheckpoint() != nil && !reply.GetRestartedFromScratch() {
		checkpoint := toCheckpoint(reply.GetCheckpoint(), reply.GetToolResults(), reply.GetToolIntents())
		if !checkpoint.IsValid {
			return nil, clientRefusal(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt, fmt.Sprintf(
				"run %s: the checkpoint at step %d that Resume restored fails the client's checksum check",
				runID, checkpoint.Step))
		}
		run.messages = checkpointd.MessagesOf(checkpointd.MessageChain{}, reply.GetCheckpoint().GetMessages())
		resumed.Checkpoint = checkpoint
	}
	s.mu.Lock()
	s.runs[runID] = run
	s.mu.Unlock()
	switch {
	case resumed.RestartedFromScratch && len(resumed.PassedOver) > 0:
		s.logger.Error(fmt.Sprintf("checkpointd: every checkpoint of run %s is corrupt (steps %s quarantined); "+
			"the run RESTARTS FROM STEP 0", runID, checkpointd.DescribePassedOver(resumed.PassedOver)),
			passedOverAttrs(runID, resumed.PassedOver)...)
	case len(resumed.PassedOver) > 0:
		s.warnPassedOver(runID, resumed.RecoveredFromStep, resumed.PassedOver)
	}
	if !run.toolsKnown || len(resumed.CorruptCallIDs) > 0 {
		s.logger.Warn(fmt.Sprintf("checkpointd: the tool journal of run %s has corrupt entries (calls %s)",
			runID, strings.Join(resumed.CorruptCallIDs, ", ")), "run_id", runID)
	}
	return resumed, nil
}

// RunHead is the run's head without its payload and without fencing anyone; nil when unknown.
func (s *CheckpointStore) RunHead(ctx context.Context, runID string) (*checkpointv1.RunHead, error) {
	reply, err := s.backend.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return reply.GetRun(), nil
}

// Epoch is the epoch this store writes runID under; false before it resumed the run.
func (s *CheckpointStore) Epoch(runID string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.runs[runID]
	if !ok {
		return 0, false
	}
	return run.epoch, true
}

// Journalled is the journalled result of a call, or nil.
func (s *CheckpointStore) Journalled(runID, callID string) *checkpointv1.ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run, ok := s.runs[runID]; ok {
		return run.journal[callID]
	}
	return nil
}

// JournalledIntent is the journalled intent of a call, or nil.
func (s *CheckpointStore) JournalledIntent(runID, callID string) *checkpointv1.ToolIntent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run, ok := s.runs[runID]; ok {
		return run.intents[callID]
	}
	return nil
}

// InDoubtCall is the call in doubt with that id, if Resume reported one still unsettled.
func (s *CheckpointStore) InDoubtCall(runID, callID string) (InDoubt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run, ok := s.runs[runID]; ok {
		call, found := run.inDoubt[callID]
		return call, found
	}
	return InDoubt{}, false
}

// run is the run's view, resuming it first when this store has not.
func (s *CheckpointStore) run(ctx context.Context, runID string) (*runView, error) {
	s.mu.Lock()
	run, ok := s.runs[runID]
	s.mu.Unlock()
	if ok {
		return run, nil
	}
	if _, err := s.Resume(ctx, runID, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[runID], nil
}

func isNotFound(err error) bool {
	var typed *checkpointd.Error
	return errors.As(err, &typed) && typed.Code == codes.NotFound
}

// warnPassedOver says, on every read that falls back past quarantined checkpoints and not only
// on the one that found them, which ones the read skipped and what it served instead.
func (s *CheckpointStore) warnPassedOver(runID string, served int64, passed []checkpointd.PassedOver) {
	s.logger.Warn(fmt.Sprintf("checkpointd: run %s has quarantined corrupt checkpoint(s) at step(s) %s newer than "+
		"the one read; falling back to step %d (an operator repairs the run with `checkpointd runs drop-quarantined %s`)",
		runID, checkpointd.DescribePassedOver(passed), served, runID),
		append(passedOverAttrs(runID, passed), "served_step", served)...)
}

// passedOverAttrs are the structured fields of a passed-over warning.
func passedOverAttrs(runID string, passed []checkpointd.PassedOver) []any {
	labels := make([]string, 0, len(passed))
	ids := make([]string, 0, len(passed))
	for _, entry := range passed {
		labels = append(labels, entry.Label)
		ids = append(ids, entry.CheckpointID)
	}
	return []any{"run_id", runID, "passed_over_steps", checkpointd.PassedOverSteps(passed),
		"passed_over_labels", labels, "passed_over_checkpoint_ids", ids}
}
