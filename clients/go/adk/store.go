// The checkpoint layer under the service: save a scope's next step with checksum v1 computed
// here, and load a scope's latest step verified here, whatever the server says. Every scope
// (a session, an app's state, a user's state) is saved and loaded through these two functions.

package adk

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

const (
	// stateContentType is the media type of every checkpoint's state: a JSON object.
	stateContentType = "application/json"
	// eventRole is the role of every message: one message is one ADK event as JSON.
	eventRole = "adk.event"

	// metaMessagesHead is the message chain head (hex) once the checkpoint's messages are in
	// the log. Covered by the checksum, it lets a load that skips the messages still verify.
	metaMessagesHead = "adk.messages_head"
	// metaUpdatedAt is the session's LastUpdateTime after this step, RFC 3339 with nanoseconds.
	metaUpdatedAt = "adk.updated_at"
	// metaEventID is the id of the event a session step appended.
	metaEventID = "adk.event_id"
	// metaCreateNonce makes two creations of one session id differ, so the second is refused
	// (STEP_CONFLICT) instead of being taken for an idempotent retry of the first.
	metaCreateNonce = "adk.create_nonce"
)

// scope is a run as one load saw it: what the next save continues from.
type scope struct {
	runID string
	// step of the latest checkpoint; the next save is step+1.
	step int64
	// epoch the next save carries (the run's fencing epoch).
	epoch uint64
	// chain covers the whole message log.
	chain checkpointd.MessageChain
	// state is the checkpoint's state: the scope's own keys, unprefixed.
	state map[string]any
	// messages are the events a Get read (window.go), until they are decoded.
	messages []*checkpointv1.Message
	metadata map[string]string
	// passedOver is what the load fell back past: quarantined checkpoints newer than step.
	passedOver []checkpointd.PassedOver
}

// errScopeNotFound is a load of a run that does not exist.
var errScopeNotFound = errors.New("adk: not found")

// loadScope loads and verifies the latest checkpoint of runID without its messages: the chain
// is the head the checkpoint's (checksummed) metadata records. A session's events are read by
// loadEvents (window.go), only as many as a Get asks for.
func loadScope(ctx context.Context, client *checkpointd.Client, runID string) (*scope, error) {
	// The server clamps the offset to the checkpoint's message count: no message returned.
	request := &checkpointv1.LoadLatestRequest{RunId: runID, Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE,
		MessageOffset: math.MaxInt64}
	response, err := client.Checkpoints.LoadLatest(ctx, request)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: run %s: %w", errScopeNotFound, runID, err)
		}
		return nil, fmt.Errorf("adk: load %s: %w", runID, err)
	}
	checkpoint := response.GetCheckpoint()
	recordedHead := checkpoint.GetMetadata()[metaMessagesHead]
	previous, err := chainFromHex(checkpoint.GetMessagesOffset(), recordedHead)
	if err != nil {
		return nil, err
	}
	if _, err := checkpointd.VerifyCheckpoint(checkpoint, nil, nil, previous); err != nil {
		return nil, fmt.Errorf("adk: load %s: %w", runID, err)
	}
	chain := checkpointd.MessagesOf(previous, checkpoint.GetMessages())
	if chain.Hex() != recordedHead {
		return nil, fmt.Errorf("adk: load %s: %w", runID, checkpointd.ErrCheckpointCorrupt)
	}
	state := map[string]any{}
	if err := json.Unmarshal(checkpoint.GetState(), &state); err != nil {
		return nil, fmt.Errorf("adk: load %s: the state is not a JSON object: %w", runID, err)
	}
	return &scope{runID: runID, step: checkpoint.GetStep(), epoch: checkpoint.GetEpoch(), chain: chain,
		state: state, messages: checkpoint.GetMessages(), metadata: checkpoint.GetMetadata(),
		passedOver: checkpointd.PassedOverOf(response)}, nil
}

// loadSession is loadScope for a session's run, with the run's fencing epoch: a session with
// no event yet has only its step 0, saved before Create's Resume raised the epoch, so there
// the epoch comes from the run's head (one more call, for empty sessions only).
func loadSession(ctx context.Context, client *checkpointd.Client, runID string) (*scope, error) {
	loaded, err := loadScope(ctx, client, runID)
	if err != nil || loaded.step > 0 {
		return loaded, err
	}
	head, err := client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: run %s: %w", errScopeNotFound, runID, err)
		}
		return nil, fmt.Errorf("adk: read %s: %w", runID, err)
	}
	loaded.epoch = head.GetRun().GetEpoch()
	return loaded, nil
}

// nextStep is what one save adds to a scope.
type nextStep struct {
	state    map[string]any
	messages []*checkpointv1.Message
	metadata map[string]string
	label    string
}

// saveNext saves step from.step+1 (step 0 when from is nil: a new run) with checksum v1, and
// returns the scope as it stands after it. A concurrent writer that saved the same step first
// makes this one fail with STEP_CONFLICT (ALREADY_EXISTS): the step is the fence. A retry of an
// identical save, e.g. after a lost answer, succeeds and changes nothing.
func saveNext(ctx context.Context, client *checkpointd.Client, runID string, from *scope, next nextStep) (*scope, error) {
	step, epoch, chain := int64(0), uint64(0), checkpointd.MessageChain{}
	if from != nil {
		step, epoch, chain = from.step+1, from.epoch, from.chain
	}
	state, err := json.Marshal(next.state)
	if err != nil {
		return nil, fmt.Errorf("adk: state of %s is not JSON: %w", runID, err)
	}
	after := checkpointd.MessagesOf(chain, next.messages)
	metadata := map[string]string{metaMessagesHead: after.Hex()}
	for key, value := range next.metadata {
		metadata[key] = value
	}
	sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: uint64(step),
		ContentType: stateContentType, State: state, Metadata: metadata}, after, checkpointd.ToolChain{})
	request := &checkpointv1.SaveRequest{RunId: runID, Step: step, ContentType: stateContentType,
		State: state, Messages: next.messages, MessageOffset: chain.Len, Metadata: metadata,
		Epoch: &epoch, Checksum: &sum, Label: next.label}
	if _, err := client.Checkpoints.Save(ctx, request); err != nil {
		return nil, fmt.Errorf("adk: save %s step %d: %w", runID, step, err)
	}
	return &scope{runID: runID, step: step, epoch: epoch, chain: after, state: next.state, metadata: metadata}, nil
}

// chainFromHex is the chain of length count whose head a checkpoint's metadata recorded.
func chainFromHex(count uint64, head string) (checkpointd.MessageChain, error) {
	raw, err := hex.DecodeString(head)
	if err != nil || len(raw) != 32 {
		return checkpointd.MessageChain{}, fmt.Errorf("adk: the checkpoint records no message chain head: %w",
			checkpointd.ErrCheckpointCorrupt)
	}
	chain := checkpointd.MessageChain{Len: count}
	copy(chain.Head[:], raw)
	return chain, nil
}

// isNotFound is a run (or its checkpoint) that is not there.
func isNotFound(err error) bool {
	var typed *checkpointd.Error
	return errors.As(err, &typed) && typed.Code == codes.NotFound
}

// isStepTaken is a save that lost the race for its step to another writer.
func isStepTaken(err error) bool {
	return errors.Is(err, checkpointd.ErrStepConflict) || errors.Is(err, checkpointd.ErrStepBehindLatest)
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(text string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}
	}
	return t
}
