// Paged answers: LoadLatest, LoadAtStep and Resume declare CLIENT_CAPABILITY_PAGED_MESSAGES,
// and a history too long for one answer is fetched page by page and handed back whole, as if
// the server had sent it in one piece (proto/checkpoint/v1/checkpoint.proto; the TypeScript
// client's pages.ts). If the checkpoint changes between pages (CHECKPOINT_CHANGED, or DATA_LOSS
// on a later page), the call starts again from its first request, at most pageRestarts times.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// pageRestarts is how often a call starts again after its checkpoint changed between pages.
const pageRestarts = 3

// declaring is capabilities with the paging capability (and more) added.
func declaring(capabilities []checkpointv1.ClientCapability, more ...checkpointv1.ClientCapability) []checkpointv1.ClientCapability {
	all := slices.Clone(capabilities)
	for _, capability := range append([]checkpointv1.ClientCapability{
		checkpointv1.ClientCapability_CLIENT_CAPABILITY_PAGED_MESSAGES}, more...) {
		if !slices.Contains(all, capability) {
			all = append(all, capability)
		}
	}
	return all
}

// changedBetweenPages says whether a continuation's failure means the answer begun no longer holds.
func changedBetweenPages(err error) bool {
	var typed *checkpointd.Error
	return errors.As(err, &typed) && (typed.Code == codes.DataLoss ||
		(typed.Code == codes.FailedPrecondition && typed.Reason == checkpointd.ReasonCheckpointChanged))
}

// pagedAnswer is what LoadLatest, LoadAtStep and Resume answers have in common.
type pagedAnswer interface {
	GetCheckpoint() *checkpointv1.Checkpoint
	GetContinuation() []byte
}

// whole calls first, then fetches every further page of its checkpoint's messages.
func whole[A pagedAnswer](ctx context.Context, backend Backend, runID string, first func() (A, error)) (A, error) {
	for restarts := 0; ; restarts++ {
		answer, err := first()
		if err != nil {
			return answer, err
		}
		err = follow(ctx, backend, runID, answer.GetCheckpoint(), answer.GetContinuation())
		if err == nil {
			return answer, nil
		}
		if restarts >= pageRestarts || !changedBetweenPages(err) {
			return answer, err
		}
	}
}

func follow(ctx context.Context, backend Backend, runID string, checkpoint *checkpointv1.Checkpoint, token []byte) error {
	if len(token) == 0 {
		return nil
	}
	if checkpoint == nil {
		return errors.New("checkpointd: the server sent a continuation without a checkpoint")
	}
	for len(token) > 0 {
		page, err := backend.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{RunId: runID, Continuation: token,
			Capabilities: []checkpointv1.ClientCapability{checkpointv1.ClientCapability_CLIENT_CAPABILITY_PAGED_MESSAGES}})
		if err != nil {
			return err
		}
		token = page.GetContinuation()
		next := page.GetCheckpoint()
		if next == nil {
			return fmt.Errorf("checkpointd: a page of step %d came back empty", checkpoint.GetStep())
		}
		if next.GetCheckpointId() != checkpoint.GetCheckpointId() || next.GetStep() != checkpoint.GetStep() {
			return fmt.Errorf("checkpointd: a page of step %d came back for step %d", checkpoint.GetStep(), next.GetStep())
		}
		following := checkpoint.GetMessagesOffset() + uint64(len(checkpoint.GetMessages()))
		if next.GetMessagesOffset() != following {
			return fmt.Errorf("checkpointd: a page of step %d starts at message %d, not %d",
				checkpoint.GetStep(), next.GetMessagesOffset(), following)
		}
		checkpoint.Messages = append(checkpoint.Messages, next.GetMessages()...)
	}
	if held := checkpoint.GetMessagesOffset() + uint64(len(checkpoint.GetMessages())); held != checkpoint.GetMessageCount() {
		return fmt.Errorf("checkpointd: the pages of step %d ended at message %d of %d",
			checkpoint.GetStep(), held, checkpoint.GetMessageCount())
	}
	return nil
}

func loadLatestWhole(ctx context.Context, backend Backend, runID string) (*checkpointv1.LoadLatestResponse, error) {
	request := &checkpointv1.LoadLatestRequest{RunId: runID, Capabilities: declaring(nil)}
	return whole(ctx, backend, runID, func() (*checkpointv1.LoadLatestResponse, error) {
		return backend.LoadLatest(ctx, request)
	})
}

func loadAtStepWhole(ctx context.Context, backend Backend, runID string, step int64) (*checkpointv1.LoadAtStepResponse, error) {
	request := &checkpointv1.LoadAtStepRequest{RunId: runID, Step: step, Capabilities: declaring(nil)}
	return whole(ctx, backend, runID, func() (*checkpointv1.LoadAtStepResponse, error) {
		return backend.LoadAtStep(ctx, request)
	})
}

// resumeWhole is Resume with every page, declaring that calls in doubt are read.
func resumeWhole(ctx context.Context, backend Backend, runID string, requireExisting bool) (*checkpointv1.ResumeResponse, error) {
	request := &checkpointv1.ResumeRequest{RunId: runID, RequireExisting: requireExisting,
		Capabilities: declaring(nil, checkpointv1.ClientCapability_CLIENT_CAPABILITY_IN_DOUBT_CALLS)}
	return whole(ctx, backend, runID, func() (*checkpointv1.ResumeResponse, error) {
		return backend.Resume(ctx, request)
	})
}
