// Reading a session's events: only the window a Get asks for (NumRecentEvents, After) is
// loaded, from the log offset where it starts (message_offset), and any history, however long,
// comes back page by page (CLIENT_CAPABILITY_PAGED_MESSAGES, continuations followed with
// LoadAtStep), so no session is too large to open and a Get of the last events costs what they
// weigh, not the session's age.
//
// The window is verified here too. Every session step appends one event and records the
// chain head after it (adk.messages_head, covered by the checksum), so the checkpoint whose
// log ends where the window starts gives the chain there: the window's messages continued
// from it must reach the head of the checkpoint read. When that checkpoint is gone (pruned
// by retention, quarantined), the whole log is read instead and the window cut here.

package adk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// pagedMessages is the capability every load of events declares.
var pagedMessages = []checkpointv1.ClientCapability{checkpointv1.ClientCapability_CLIENT_CAPABILITY_PAGED_MESSAGES}

// pageRestarts is how often a read starts again when its checkpoint changed between pages.
const pageRestarts = 3

// windowStart is the log offset of the first event a Get keeps: after NumRecentEvents and
// After. Events are appended in time order (ADK stamps them as they come), so the offset for
// After is where the steps' recorded times (adk.updated_at) pass it; the exact filter is
// applied again to what comes back.
func windowStart(ctx context.Context, client *checkpointd.Client, own *scope, numRecent int, after time.Time) (uint64, error) {
	count := own.chain.Len
	start := uint64(0)
	if !after.IsZero() {
		var err error
		if start, err = offsetAfter(ctx, client, own, after); err != nil {
			return 0, err
		}
	}
	if numRecent > 0 && uint64(numRecent) < count {
		start = max(start, count-uint64(numRecent))
	}
	return start, nil
}

// offsetAfter walks the session's checkpoints from the newest down to the first whose event is
// older than after: the events after it are the window.
func offsetAfter(ctx context.Context, client *checkpointd.Client, own *scope, after time.Time) (uint64, error) {
	before := own.step + 1
	token := ""
	for {
		page, err := client.Checkpoints.ListCheckpoints(ctx, &checkpointv1.ListCheckpointsRequest{
			RunId: own.runID, Descending: true, BeforeStep: &before, PageSize: 100, PageToken: token})
		if err != nil {
			return 0, fmt.Errorf("adk: list %s: %w", own.runID, err)
		}
		for _, summary := range page.GetCheckpoints() {
			if !summary.GetValid() || summary.GetMessageCount() > own.chain.Len {
				continue // quarantined, or above the checkpoint served
			}
			at := parseTime(summary.GetMetadata()[metaUpdatedAt])
			if !at.IsZero() && at.Before(after) {
				return summary.GetMessageCount(), nil
			}
		}
		if token = page.GetNextPageToken(); token == "" {
			return 0, nil
		}
	}
}

// loadEvents is the messages of own's checkpoint from offset start to its end, verified here.
func loadEvents(ctx context.Context, client *checkpointd.Client, own *scope, start uint64) ([]*checkpointv1.Message, error) {
	if start > 0 {
		messages, err := loadVerifiedWindow(ctx, client, own, start)
		if err == nil || !errors.Is(err, errNoAnchor) {
			return messages, err
		}
	}
	messages, err := loadVerifiedWindow(ctx, client, own, 0)
	if err != nil {
		return nil, err
	}
	return messages[start:], nil
}

// errNoAnchor is a window whose starting chain no stored checkpoint gives.
var errNoAnchor = errors.New("adk: no checkpoint ends where the window starts")

// loadVerifiedWindow loads own's step from offset start with every page and checks the
// messages against the chain at start and the checkpoint's recorded head.
func loadVerifiedWindow(ctx context.Context, client *checkpointd.Client, own *scope, start uint64) ([]*checkpointv1.Message, error) {
	var checkpoint *checkpointv1.Checkpoint
	previous := checkpointd.MessageChain{}
	err := parallel(
		func() (err error) { checkpoint, err = loadPaged(ctx, client, own.runID, own.step, start); return },
		func() (err error) {
			if start > 0 {
				previous, err = chainAt(ctx, client, own.runID, start)
			}
			return
		},
	)
	if err != nil {
		return nil, err
	}
	if _, err := checkpointd.VerifyCheckpoint(checkpoint, nil, nil, previous); err != nil {
		return nil, fmt.Errorf("adk: load %s: %w", own.runID, err)
	}
	if checkpointd.MessagesOf(previous, checkpoint.GetMessages()) != own.chain {
		return nil, fmt.Errorf("adk: load %s: the events read do not end at the head read: %w",
			own.runID, checkpointd.ErrCheckpointCorrupt)
	}
	return checkpoint.GetMessages(), nil
}

// chainAt is the message chain after the first count events: the recorded head of the
// session step with that many messages (step count, as every step appends one event),
// verified by its checksum. errNoAnchor when that step is not there to say.
func chainAt(ctx context.Context, client *checkpointd.Client, runID string, count uint64) (checkpointd.MessageChain, error) {
	if count > math.MaxInt64 {
		return checkpointd.MessageChain{}, errNoAnchor
	}
	answer, err := client.Checkpoints.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{RunId: runID, Step: int64(count),
		MessageOffset: math.MaxInt64, Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE})
	var typed *checkpointd.Error
	if errors.As(err, &typed) && (typed.Code == codes.NotFound || typed.Code == codes.DataLoss) {
		return checkpointd.MessageChain{}, errNoAnchor
	}
	if err != nil {
		return checkpointd.MessageChain{}, fmt.Errorf("adk: load %s step %d: %w", runID, count, err)
	}
	anchor := answer.GetCheckpoint()
	if anchor.GetMessageCount() != count {
		return checkpointd.MessageChain{}, errNoAnchor
	}
	previous, err := chainFromHex(anchor.GetMessagesOffset(), anchor.GetMetadata()[metaMessagesHead])
	if err != nil {
		return checkpointd.MessageChain{}, errNoAnchor
	}
	if _, err := checkpointd.VerifyCheckpoint(anchor, nil, nil, previous); err != nil {
		return checkpointd.MessageChain{}, fmt.Errorf("adk: load %s step %d: %w", runID, count, err)
	}
	return previous, nil
}

// loadPaged is runID's step with its messages from offset start, every page of them: a history
// over one answer comes back in pages (continuations), never as ANSWER_TOO_LARGE. When the
// checkpoint changes between pages (CHECKPOINT_CHANGED, DATA_LOSS), it starts again.
func loadPaged(ctx context.Context, client *checkpointd.Client, runID string, step int64, start uint64) (*checkpointv1.Checkpoint, error) {
	for restarts := 0; ; restarts++ {
		answer, err := client.Checkpoints.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{RunId: runID, Step: step,
			MessageOffset: start, Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE, Capabilities: pagedMessages})
		if err != nil {
			return nil, fmt.Errorf("adk: load %s step %d: %w", runID, step, err)
		}
		checkpoint := answer.GetCheckpoint()
		err = followPages(ctx, client, runID, checkpoint, answer.GetContinuation())
		if err == nil {
			return checkpoint, nil
		}
		if restarts >= pageRestarts || !changedBetweenPages(err) {
			return nil, fmt.Errorf("adk: load %s step %d: %w", runID, step, err)
		}
	}
}

// followPages appends every further page of checkpoint's messages to it.
func followPages(ctx context.Context, client *checkpointd.Client, runID string, checkpoint *checkpointv1.Checkpoint, token []byte) error {
	for len(token) > 0 {
		page, err := client.Checkpoints.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{RunId: runID,
			Continuation: token, Capabilities: pagedMessages})
		if err != nil {
			return err
		}
		token = page.GetContinuation()
		next := page.GetCheckpoint()
		if next.GetCheckpointId() != checkpoint.GetCheckpointId() || next.GetStep() != checkpoint.GetStep() {
			return fmt.Errorf("a page of step %d came back for step %d", checkpoint.GetStep(), next.GetStep())
		}
		if following := checkpoint.GetMessagesOffset() + uint64(len(checkpoint.GetMessages())); next.GetMessagesOffset() != following {
			return fmt.Errorf("a page of step %d starts at message %d, not %d", checkpoint.GetStep(),
				next.GetMessagesOffset(), following)
		}
		checkpoint.Messages = append(checkpoint.Messages, next.GetMessages()...)
	}
	return nil
}

// changedBetweenPages says whether a continuation's failure means the answer begun no longer holds.
func changedBetweenPages(err error) bool {
	var typed *checkpointd.Error
	return errors.As(err, &typed) && (typed.Code == codes.DataLoss ||
		(typed.Code == codes.FailedPrecondition && typed.Reason == checkpointd.ReasonCheckpointChanged))
}
