// Loading an id's checkpoint with verification on both ends: the server's (it skips and
// quarantines corrupt checkpoints on LoadLatest) and the client's (checksum v1 recomputed over
// what arrived), and the CorruptPolicy applied to whatever either of them found.

package eino

import (
	"context"
	"errors"
	"fmt"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// loadVerified is the id's newest checkpoint that verifies, nil when there is none (or, under
// FallBack, none that verifies).
func (s *Store) loadVerified(ctx context.Context, checkPointID string) (*checkpointv1.Checkpoint, error) {
	runID := RunID(checkPointID)
	answer, err := s.client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{
		RunId: runID, Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE})
	switch {
	case errors.Is(err, checkpointd.ErrRunNotFound), errors.Is(err, checkpointd.ErrCheckpointNotFound):
		return nil, nil
	case errors.Is(err, checkpointd.ErrAllCheckpointsCorrupt):
		return nil, s.noneVerifies(ctx, checkPointID, runID, nil, err)
	case err != nil:
		return nil, fmt.Errorf("eino checkpoint %q: load run %s: %w", checkPointID, runID, err)
	}
	skipped := answer.GetSkippedSteps() // corrupt on the server, quarantined by this load
	checkpoint := answer.GetCheckpoint()
	if s.policy == Refuse {
		if err := s.refuseBehindQuarantine(ctx, checkPointID, runID, checkpoint.GetStep(), skipped); err != nil {
			return nil, err
		}
	}
	for {
		verifyErr := verify(checkPointID, checkpoint)
		if verifyErr == nil {
			if len(skipped) > 0 {
				s.logger.WarnContext(ctx, "eino checkpoint store skipped corrupt checkpoints",
					"checkpoint_id", checkPointID, "run_id", runID, "skipped_steps", skipped,
					"restored_step", checkpoint.GetStep())
			}
			return checkpoint, nil
		}
		if s.policy == Refuse {
			return nil, fmt.Errorf("eino checkpoint %q: run %s step %d does not verify on the client: %w",
				checkPointID, runID, checkpoint.GetStep(), verifyErr)
		}
		skipped = append(skipped, checkpoint.GetStep())
		checkpoint, err = s.loadBelow(ctx, runID, checkpoint.GetStep())
		if err != nil {
			return nil, fmt.Errorf("eino checkpoint %q: fall back in run %s: %w", checkPointID, runID, err)
		}
		if checkpoint == nil {
			return nil, s.noneVerifies(ctx, checkPointID, runID, skipped, verifyErr)
		}
	}
}

// verify recomputes checksum v1 over a checkpoint the store saved (no messages, no journal
// entries) and checks that it is this id's, not another id's under a colliding run id.
func verify(checkPointID string, checkpoint *checkpointv1.Checkpoint) error {
	if _, err := checkpointd.VerifyCheckpoint(checkpoint, nil, nil, checkpointd.MessageChain{}); err != nil {
		return err
	}
	if stored := checkpoint.GetMetadata()[MetadataCheckpointID]; stored != checkPointID {
		return fmt.Errorf("run %s step %d holds checkpoint id %q, not %q: %w", checkpoint.GetRunId(),
			checkpoint.GetStep(), stored, checkPointID, checkpointd.ErrCheckpointCorrupt)
	}
	return nil
}

// refuseBehindQuarantine refuses a load that is not the run's newest checkpoint because a
// corrupt one above it was skipped: now, or by an earlier load that quarantined it (LoadLatest
// reports a step only once, so the run's head is what keeps the refusal standing: its newest
// step is then above its newest valid one). A save that landed since the load is no reason.
func (s *Store) refuseBehindQuarantine(ctx context.Context, checkPointID, runID string, loadedStep int64,
	skippedNow []int64) error {
	skipped := skippedNow
	if len(skipped) == 0 {
		answer, err := s.client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
		if err != nil {
			return fmt.Errorf("eino checkpoint %q: read run %s: %w", checkPointID, runID, err)
		}
		if run := answer.GetRun(); run.GetLatestStep() > run.GetLatestValidStep() {
			skipped = []int64{run.GetLatestStep()}
		}
	}
	if len(skipped) == 0 {
		return nil
	}
	return fmt.Errorf("eino checkpoint %q: run %s: the newest checkpoint (step %d) is corrupt and "+
		"quarantined; refusing to resume from step %d (Delete the id to start over): %w",
		checkPointID, runID, skipped[0], loadedStep, checkpointd.ErrCheckpointCorrupt)
}

// loadBelow loads the newest checkpoint of the run below step that the server will serve, nil
// when there is none; steps the server finds corrupt on the way are passed over.
func (s *Store) loadBelow(ctx context.Context, runID string, step int64) (*checkpointv1.Checkpoint, error) {
	for {
		page, err := s.client.Checkpoints.ListCheckpoints(ctx, &checkpointv1.ListCheckpointsRequest{
			RunId: runID, PageSize: 1, Descending: true, BeforeStep: &step})
		if err != nil {
			return nil, err
		}
		if len(page.GetCheckpoints()) == 0 {
			return nil, nil
		}
		step = page.GetCheckpoints()[0].GetStep()
		answer, err := s.client.Checkpoints.LoadAtStep(ctx, &checkpointv1.LoadAtStepRequest{
			RunId: runID, Step: step, Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE})
		if errors.Is(err, checkpointd.ErrCheckpointCorrupt) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return answer.GetCheckpoint(), nil
	}
}

// noneVerifies is the answer when no checkpoint of the id verifies: under FallBack an error log
// and "not found" (the graph starts over), under Refuse the error.
func (s *Store) noneVerifies(ctx context.Context, checkPointID, runID string, skipped []int64, cause error) error {
	if s.policy == Refuse {
		return fmt.Errorf("eino checkpoint %q: no checkpoint of run %s verifies: %w", checkPointID, runID, cause)
	}
	s.logger.ErrorContext(ctx, "eino checkpoint store found every checkpoint corrupt; the graph starts over",
		"checkpoint_id", checkPointID, "run_id", runID, "skipped_steps", skipped, "error", cause)
	return nil
}
