// Package eino is a CloudWeGo Eino checkpoint store backed by checkpointd: Store implements
// compose.CheckPointStore (Get, Set) and Eino's CheckPointDeleter (Delete), so a compiled graph
// that interrupts keeps its checkpoint in checkpointd, checksummed, tenant-scoped and verified
// on every read, and a new process resumes it. docs/eino-mapping.md describes the mapping.
//
// It is a module of its own, so users of the core client never pull Eino into their builds.
package eino

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// CorruptPolicy says what Get does when the newest checkpoint of an id fails its checksum.
type CorruptPolicy int

const (
	// FallBack (the default) returns the newest checkpoint that verifies and logs, as a
	// warning, the id and the steps skipped, on every Get until the corrupt ones are dropped
	// or a newer checkpoint is saved (Store.PassedOver names them too); when none verifies it logs an error and returns
	// "not found", so the graph starts over from its input. LangGraph's savers do the same.
	FallBack CorruptPolicy = iota
	// Refuse returns an error wrapping checkpointd.ErrCheckpointCorrupt (or
	// ErrAllCheckpointsCorrupt), and keeps refusing, on every Get, while corrupt checkpoints are
	// quarantined above the newest valid one, until Delete or an operator drops them: a graph whose interrupts guard side effects may prefer a person to
	// decide over resuming from an older interrupt.
	Refuse
)

// Option configures a Store.
type Option func(*Store)

// WithCorruptPolicy sets what Get does about a corrupt newest checkpoint (FallBack by default).
func WithCorruptPolicy(policy CorruptPolicy) Option {
	return func(s *Store) { s.policy = policy }
}

// WithLogger sets where fallbacks past corrupt checkpoints are reported (slog.Default() by
// default).
func WithLogger(logger *slog.Logger) Option { return func(s *Store) { s.logger = logger } }

// maxSaveAttempts bounds the retries of a Set whose step another writer took meanwhile. Each
// refusal is another writer's save landing and the retry starts from a fresh head, so a Set
// lands unless 16 or more writers of the one id save at the same moment.
const maxSaveAttempts = 16

// Store is an Eino checkpoint store on one checkpointd client. Each checkpoint id is one run
// (RunID) in the tenant the client's options name; each Set saves a new checkpoint of it with
// checksum v1; Get returns the newest one that verifies; Delete removes the run. Safe for
// concurrent use by many graphs.
type Store struct {
	client *checkpointd.Client
	policy CorruptPolicy
	logger *slog.Logger

	mu    sync.Mutex
	heads map[string]runHead // by run id: where this store's last save left the run
	// passedOver is, by checkpoint id, what the last Get of it fell back past.
	passedOver map[string][]checkpointd.PassedOver
}

// runHead is what the next save of a run needs: the step saved last and the run's epoch.
type runHead struct {
	step  int64
	epoch uint64
}

// New makes a store on client. The client's tenant (checkpointd.WithTenant, or the credential's)
// scopes every checkpoint id.
func New(client *checkpointd.Client, opts ...Option) *Store {
	s := &Store{client: client, policy: FallBack, logger: slog.Default(), heads: map[string]runHead{},
		passedOver: map[string][]checkpointd.PassedOver{}}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Set saves checkPoint as the id's newest checkpoint, at the run's next step, with checksum v1
// over it (the server refuses the save if its own differs). It returns once the save is
// durable. A step taken by another writer meanwhile is retried above it.
func (s *Store) Set(ctx context.Context, checkPointID string, checkPoint []byte) error {
	runID := RunID(checkPointID)
	metadata := checkpointMetadata(checkPointID)
	noJournal := uint64(0) // the journal is not the store's: no checkpoint covers it
	var lastErr error
	for range maxSaveAttempts {
		head, err := s.head(ctx, runID)
		if err != nil {
			return fmt.Errorf("eino checkpoint %q: read run %s: %w", checkPointID, runID, err)
		}
		step := head.step + 1
		checksum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: uint64(step),
			ContentType: ContentType, State: checkPoint, Metadata: metadata},
			checkpointd.MessageChain{}, checkpointd.ToolChain{})
		epoch := head.epoch
		_, err = s.client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: runID, Step: step,
			ContentType: ContentType, State: checkPoint, Metadata: metadata, Epoch: &epoch,
			Checksum: &checksum, ToolCount: &noJournal})
		if err == nil {
			s.remember(runID, runHead{step: step, epoch: epoch})
			return nil
		}
		if !anotherWriterMovedOn(err) {
			return fmt.Errorf("eino checkpoint %q: save run %s step %d: %w", checkPointID, runID, step, err)
		}
		s.forget(runID)
		lastErr = err
	}
	return fmt.Errorf("eino checkpoint %q: save run %s: other writers kept taking the next step: %w",
		checkPointID, runID, lastErr)
}

// Get returns the id's newest checkpoint that verifies, false when the id has none. The server
// verifies it and skips (and quarantines) corrupt ones; the store verifies it again on the client
// against checksum v1 before handing Eino a byte. What happens past a corrupt one is the
// CorruptPolicy's.
func (s *Store) Get(ctx context.Context, checkPointID string) ([]byte, bool, error) {
	loaded, err := s.loadVerified(ctx, checkPointID)
	if err != nil || loaded == nil {
		return nil, false, err
	}
	return loaded.GetState(), true, nil
}

// PassedOver is what the last Get of checkPointID fell back past: the quarantined (corrupt)
// checkpoints newer than the one it returned, newest first, with their steps and checkpointd's
// ids; empty when it returned the newest. Eino's CheckPointStore has no place for it in Get's
// answer, so it is here (and in the warning each such Get logs). Under Refuse, the ones that
// made Get refuse.
func (s *Store) PassedOver(checkPointID string) []checkpointd.PassedOver {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]checkpointd.PassedOver(nil), s.passedOver[checkPointID]...)
}

func (s *Store) notePassedOver(checkPointID string, passed []checkpointd.PassedOver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(passed) == 0 {
		delete(s.passedOver, checkPointID)
		return
	}
	s.passedOver[checkPointID] = passed
}

// Delete removes the id's run: its checkpoints, with the run's log and journal. An id with no
// checkpoint is not an error. Eino's compose graphs never call it (only adk.TurnLoop does): a
// finished graph's last interrupt stays until Delete, and a later run under the same id would
// resume from it; InvokeThenDelete does both.
func (s *Store) Delete(ctx context.Context, checkPointID string) error {
	runID := RunID(checkPointID)
	s.forget(runID)
	_, err := s.client.Checkpoints.DeleteRun(ctx, &checkpointv1.DeleteRunRequest{RunId: runID})
	if err != nil && !errors.Is(err, checkpointd.ErrRunNotFound) {
		return fmt.Errorf("eino checkpoint %q: delete run %s: %w", checkPointID, runID, err)
	}
	return nil
}

// head is the run's last step and epoch: this store's own last save, or else the server's head.
func (s *Store) head(ctx context.Context, runID string) (runHead, error) {
	s.mu.Lock()
	head, known := s.heads[runID]
	s.mu.Unlock()
	if known {
		return head, nil
	}
	answer, err := s.client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
	if errors.Is(err, checkpointd.ErrRunNotFound) {
		return runHead{}, nil
	}
	if err != nil {
		return runHead{}, err
	}
	run := answer.GetRun()
	// latest_step counts quarantined checkpoints too: a new step must be above them.
	return runHead{step: run.GetLatestStep(), epoch: run.GetEpoch()}, nil
}

func (s *Store) remember(runID string, head runHead) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if head.step > s.heads[runID].step {
		s.heads[runID] = head
	}
}

func (s *Store) forget(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.heads, runID)
}

// anotherWriterMovedOn: the save lost a race with another writer of the run (its step, a
// newer step, or a Resume's epoch), so a fresh head and a new step settle it.
func anotherWriterMovedOn(err error) bool {
	for _, reason := range []error{checkpointd.ErrStepConflict, checkpointd.ErrStepBehindLatest,
		checkpointd.ErrStaleEpoch, checkpointd.ErrEpochNotIssued, checkpointd.ErrConflict} {
		if errors.Is(err, reason) {
			return true
		}
	}
	return false
}
