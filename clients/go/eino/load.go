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
	// Every quarantined checkpoint above the one served, on every load until an operator drops
	// them (an older server names only those this load found).
	passed := checkpointd.PassedOverOf(answer)
	checkpoint := answer.GetCheckpoint()
	if s.policy == Refuse {
		if err := s.refuseBehindQuarantine(ctx, checkPointID, runID, checkpoint.GetStep(), passed); err != nil {
			s.notePassedOver(checkPointID, passed)
			return nil, err
		}
	}
	for {
		verifyErr := verify(checkPointID, checkpoint)
		if verifyErr == nil {
			s.notePassedOver(checkPointID, passed)
			if len(passed) > 0 {
				// The message and skipped_steps are as docs/eino-mapping.md names them.
				s.logger.WarnContext(ctx, "eino checkpoint store skipped corrupt checkpoints "+
					"(quarantined; an operator drops them with `checkpointd runs drop-quarantined`)",
					"checkpoint_id", checkPointID, "run_id", runID, "skipped_steps", checkpointd.PassedOverSteps(passed),
					"passed_over", checkpointd.DescribePassedOver(passed), "restored_step", checkpoint.GetStep())
			}
			return checkpoint, nil
		}
		if s.policy == Refuse {
			return nil, fmt.Errorf("eino checkpoint %q: run %s step %d does not verify on the client: %w",
				checkPointID, runID, checkpoint.GetStep(), verifyErr)
		}
		passed = append(passed, checkpointd.PassedOver{Step: checkpoint.GetStep(), CheckpointID: checkpoint.GetCheckpointId(),
			Metadata: checkpoint.GetMetadata(), Reason: "fails the client's checksum check"})
		checkpoint, err = s.loadBelow(ctx, runID, checkpoint.GetStep())
		if err != nil {
			return nil, fmt.Errorf("eino checkpoint %q: fall back in run %s: %w", checkPointID, runID, err)
		}
		if checkpoint == nil {
			s.notePassedOver(checkPointID, passed)
			return nil, s.noneVerifies(ctx, checkPointID, runID, checkpointd.PassedOverSteps(passed), verifyErr)
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

// refuseBehindQuarantine refuses a load that is not the run's newest checkpoint because corrupt
// ones above it are quarantined: the answer's passed_over names them on every load. From a
// server older than passed_over, which names them only on the load that found them, the run's
// head keeps the refusal standing (its newest step is then above its newest valid one). A save
// that landed since the load is no reason.
func (s *Store) refuseBehindQuarantine(ctx context.Context, checkPointID, runID string, loadedStep int64,
	passed []checkpointd.PassedOver) error {
	if len(passed) == 0 {
		answer, err := s.client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID})
		if err != nil {
			return fmt.Errorf("eino checkpoint %q: read run %s: %w", checkPointID, runID, err)
		}
		if run := answer.GetRun(); run.GetLatestStep() > run.GetLatestValidStep() {
			passed = []checkpointd.PassedOver{{Step: run.GetLatestStep()}}
		}
	}
	if len(passed) == 0 {
		return nil
	}
	return fmt.Errorf("eino checkpoint %q: run %s: newer checkpoints are corrupt and quarantined (steps %s); "+
		"refusing to resume from step %d (Delete the id to start over, or drop them with "+
		"`checkpointd runs drop-quarantined %s`): %w",
		checkPointID, runID, checkpointd.DescribePassedOver(passed), loadedStep, runID, checkpointd.ErrCheckpointCorrupt)
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
