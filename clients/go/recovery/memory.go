// MemoryBackend: checkpointd's checkpoint rules in this process, for tests and throwaway runs
// (NewInMemoryStore), as the TypeScript and Python clients' memory backends. It answers the
// calls a store makes with the server's errors and reasons: checksum v1 computed on save and
// verified on every read (a corrupt checkpoint is quarantined and skipped; when all are, Resume
// restarts from scratch, and every later LoadLatest and Resume lists it in passed_over until a
// newer checkpoint is saved above it), fencing epochs, idempotent saves and tool results, the message log
// with offsets, the tool journal with intents, calls in doubt and arguments digests
// (ARGUMENTS_MISMATCH). No tenants, auth, size
// limits, retention, labels, journal scopes or paging: every answer is whole.
//
// Several stores may share one backend, as several processes share one server.
// CorruptState and CorruptToolResult damage stored data the way a bad disk would.
package recovery

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// storedCheckpoint is one checkpoint row.
type storedCheckpoint struct {
	id           string
	epoch        uint64
	contentType  string
	state        []byte
	metadata     map[string]string
	messageCount int
	toolCount    int
	checksum     string
	createdAt    time.Time
	// quarantine is why the checkpoint failed verification; empty while it is sound.
	quarantine    string
	quarantinedAt time.Time
}

// quarantineFor marks the checkpoint as failing verification, for reason.
func (row *storedCheckpoint) quarantineFor(reason string) {
	row.quarantine, row.quarantinedAt = reason, timeNow()
}

// storedEntry is a journal entry (a result, or an intent when intent) and the chain after it.
type storedEntry struct {
	intent     bool
	callID     string
	toolName   string
	step       int64
	output     []byte
	isError    bool
	seq        uint64
	recordedAt time.Time
	chain      string
	// argumentsDigest is the call's arguments digest as journalled; "" when none was sent.
	argumentsDigest string
}

func (e *storedEntry) pushOnto(chain checkpointd.ToolChain) checkpointd.ToolChain {
	if e.intent {
		return chain.PushIntent(checkpointd.ToolIntentEntry{CallID: e.callID, ToolName: e.toolName, Step: uint64(e.step)})
	}
	return chain.PushResult(checkpointd.ToolResultEntry{CallID: e.callID, ToolName: e.toolName,
		Step: uint64(e.step), Output: e.output, IsError: e.isError})
}

type memoryRun struct {
	epoch       uint64
	checkpoints map[int64]*storedCheckpoint
	messages    []*checkpointv1.Message
	journal     []*storedEntry
	updatedAt   time.Time
}

// MemoryBackend keeps runs in this process; see the file comment. Safe for concurrent use.
type MemoryBackend struct {
	tenant string
	mu     sync.Mutex
	runs   map[string]*memoryRun
	ids    int
}

// NewMemoryBackend is an empty backend whose idempotency keys are those of tenant.
func NewMemoryBackend(tenant string) *MemoryBackend {
	return &MemoryBackend{tenant: tenant, runs: map[string]*memoryRun{}}
}

// CorruptState flips the first byte of the stored state of the checkpoint at step.
func (m *MemoryBackend) CorruptState(runID string, step int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	run, ok := m.runs[runID]
	if !ok || run.checkpoints[step] == nil {
		return fmt.Errorf("run %s has no checkpoint at step %d", runID, step)
	}
	row := run.checkpoints[step]
	row.state = flipFirstByte(row.state)
	return nil
}

// CorruptToolResult flips the first byte of a journalled result's output.
func (m *MemoryBackend) CorruptToolResult(runID, callID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if run, ok := m.runs[runID]; ok {
		for _, entry := range run.journal {
			if entry.callID == callID && !entry.intent {
				entry.output = flipFirstByte(entry.output)
				return nil
			}
		}
	}
	return fmt.Errorf("run %s has no journalled result %s", runID, callID)
}

func flipFirstByte(data []byte) []byte {
	if len(data) == 0 {
		return []byte{0}
	}
	out := slices.Clone(data)
	out[0]++
	return out
}

func refuse(code codes.Code, reason checkpointd.Reason, format string, args ...any) error {
	return clientRefusal(code, reason, fmt.Sprintf(format, args...))
}

// refuseField is INVALID_ARGUMENT naming the bad field in the ErrorInfo metadata, as the server does.
func refuseField(field, message string) error {
	st := status.New(codes.InvalidArgument, message)
	if detailed, err := st.WithDetails(&errdetails.ErrorInfo{Reason: string(checkpointd.ReasonInvalidArgument),
		Domain: checkpointd.ErrorDomain, Metadata: map[string]string{"field": field}}); err == nil {
		st = detailed
	}
	return checkpointd.FromError(st.Err())
}

func invalid(format string, args ...any) error {
	return refuse(codes.InvalidArgument, checkpointd.ReasonInvalidArgument, format, args...)
}

func checkID(kind, raw string) error {
	switch {
	case raw == "":
		return invalid("%s must not be empty", kind)
	case len(raw) > 256:
		return invalid("%s is over 256 bytes", kind)
	case strings.IndexFunc(raw, unicode.IsControl) >= 0:
		return invalid("%s must not contain control characters", kind)
	}
	return nil
}

func checkStep(step int64) error {
	if step < 0 {
		return invalid("step must be >= 0, got %d", step)
	}
	return nil
}

// checkEpoch is fencing: a write carries exactly the run's current epoch.
func checkEpoch(requested *uint64, current uint64) error {
	var asked uint64
	if requested != nil {
		asked = *requested
	}
	if asked < current {
		return refuse(codes.FailedPrecondition, checkpointd.ReasonStaleEpoch,
			"stale epoch %d: the run was resumed at epoch %d; this writer is fenced", asked, current)
	}
	if asked > current {
		return refuse(codes.FailedPrecondition, checkpointd.ReasonEpochNotIssued,
			"epoch %d was never issued: the run is at epoch %d", asked, current)
	}
	return nil
}

// runOf is the run, made empty when unknown (not yet stored: the caller stores it on a write).
func (m *MemoryBackend) runOf(runID string) *memoryRun {
	if run, ok := m.runs[runID]; ok {
		return run
	}
	return &memoryRun{checkpoints: map[int64]*storedCheckpoint{}, updatedAt: time.Now()}
}

func journalChainOf(entries []*storedEntry) checkpointd.ToolChain {
	var chain checkpointd.ToolChain
	for _, entry := range entries {
		chain = entry.pushOnto(chain)
	}
	return chain
}

// corruptEntries are the journal entries that fail verification: each is checked against the
// chain over the entries before it, so every entry from the first damaged one on counts (the
// server, which keeps each entry's chain value, can tell a lone damaged entry; this is stricter).
func corruptEntries(journal []*storedEntry) map[*storedEntry]bool {
	var chain checkpointd.ToolChain
	corrupt := map[*storedEntry]bool{}
	for index, entry := range journal {
		chain = entry.pushOnto(chain)
		if len(corrupt) > 0 || entry.seq != uint64(index+1) || chain.Hex() != entry.chain {
			corrupt[entry] = true
		}
	}
	return corrupt
}

func firstCorrupt(journal []*storedEntry, corrupt map[*storedEntry]bool) *storedEntry {
	for _, entry := range journal {
		if corrupt[entry] {
			return entry
		}
	}
	return nil
}

// verify says why the checkpoint at step does not verify against its checksum ("" when it does).
func verify(runID string, run *memoryRun, step int64) string {
	row := run.checkpoints[step]
	if len(run.messages) < row.messageCount {
		return fmt.Sprintf("message log holds %d of the %d messages", len(run.messages), row.messageCount)
	}
	if len(run.journal) < row.toolCount {
		return fmt.Sprintf("tool journal holds %d of the %d entries", len(run.journal), row.toolCount)
	}
	computed := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: uint64(step),
		ContentType: row.contentType, State: row.state, Metadata: row.metadata},
		checkpointd.MessagesOf(checkpointd.MessageChain{}, run.messages[:row.messageCount]),
		journalChainOf(run.journal[:row.toolCount]))
	if computed != row.checksum {
		return fmt.Sprintf("checksum mismatch: stored %s, computed %s", row.checksum, computed)
	}
	return ""
}

func stepsNewestFirst(run *memoryRun) []int64 {
	steps := make([]int64, 0, len(run.checkpoints))
	for step := range run.checkpoints {
		steps = append(steps, step)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] > steps[j] })
	return steps
}

// latestValid is the newest step that verifies (corrupt ones above it quarantined on the way;
// found false when none does) and the steps skipped, newest first. A damaged journal is
// DATA_LOSS unless fallBack: then the newest checkpoint not covering its first corrupt entry.
func latestValid(runID string, run *memoryRun, fallBack bool) (step int64, found bool, skipped []int64, err error) {
	corrupt := corruptEntries(run.journal)
	first := firstCorrupt(run.journal, corrupt)
	for _, step := range stepsNewestFirst(run) {
		row := run.checkpoints[step]
		if row.quarantine != "" {
			continue
		}
		if first != nil {
			if !fallBack {
				return 0, false, nil, refuse(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt,
					"tool journal is corrupt at entry %d", first.seq)
			}
			if uint64(row.toolCount) >= first.seq {
				row.quarantineFor(fmt.Sprintf("covers tool journal entry %d, which is corrupt", first.seq))
				skipped = append(skipped, step)
				continue
			}
		}
		if reason := verify(runID, run, step); reason != "" {
			row.quarantineFor(reason)
			skipped = append(skipped, step)
			continue
		}
		return step, true, skipped, nil
	}
	return 0, false, skipped, nil
}

// quarantinedAbove are the quarantined steps above restored (all when not found), newest first.
func quarantinedAbove(run *memoryRun, restored int64, found bool) []int64 {
	var steps []int64
	for _, step := range stepsNewestFirst(run) {
		if run.checkpoints[step].quarantine != "" && (!found || step > restored) {
			steps = append(steps, step)
		}
	}
	return steps
}

// passedOver is quarantinedAbove as the answer's passed_over.
func passedOver(run *memoryRun, restored int64, found bool) []*checkpointv1.PassedOverCheckpoint {
	var out []*checkpointv1.PassedOverCheckpoint
	for _, step := range quarantinedAbove(run, restored, found) {
		row := run.checkpoints[step]
		out = append(out, &checkpointv1.PassedOverCheckpoint{Step: step, CheckpointId: row.id,
			Metadata: maps.Clone(row.metadata), QuarantinedAt: stamp(row.quarantinedAt), Reason: row.quarantine})
	}
	return out
}

// checkDigest refuses an arguments digest that is neither empty nor 64 lower-case hex digits.
func checkDigest(digest string) error {
	if digest == "" {
		return nil
	}
	if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return refuseField("arguments_digest", "arguments_digest must be 64 lower-case hex digits or empty")
	}
	return nil
}

// digestConflict is ARGUMENTS_MISMATCH when the call id is journalled with another non-empty
// digest than the request's, as the server answers.
func digestConflict(run *memoryRun, callID, requested string) error {
	if requested == "" {
		return nil
	}
	for _, entry := range run.journal {
		if entry.callID == callID && entry.argumentsDigest != "" && entry.argumentsDigest != requested {
			return checkpointd.NewReplayMismatch(callID, entry.argumentsDigest, requested)
		}
	}
	return nil
}

func stamp(at time.Time) *timestamppb.Timestamp { return timestamppb.New(at) }

// timeNow is when a write lands.
func timeNow() time.Time { return time.Now().UTC() }
