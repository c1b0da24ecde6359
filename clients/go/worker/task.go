// One claimed task: its lease kept alive, its run driven by the recovery loop on a store
// fenced by that lease, and its outcome reported to the queue (complete, approval, release,
// fail fatal or transient) with the claim's attempt, which fences the report too.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// reportTimeout bounds each report to the queue; it runs even while the worker shuts down.
const reportTimeout = 30 * time.Second

// maxErrorLength is how much of a failure's message goes into the task's last_error.
const maxErrorLength = 4000

// runTask drives one claimed task and reports how it ended. shutdown ending is the drain.
func (w *worker) runTask(shutdown context.Context, task *checkpointv1.Task) {
	w.events.write("claimed", "run", task.GetRunId(), "task", task.GetTaskId(), "attempt", task.GetAttempt())
	// The run lives until its lease is lost, not until shutdown: a drain ends it at a step
	// boundary (WithDrain), so it can still checkpoint on the way out.
	leaseCtx, lease := w.keepLease(context.WithoutCancel(shutdown), task)
	defer lease.release()
	store := recovery.NewCheckpointStore(fencedBackend{Backend: w.checkpoints, lease: leaseCtx}, w.logger)
	agent, err := recovery.NewRecoverableAgent(w.agent, store, w.options.Recovery...)
	var result *recovery.RecoveryResult
	if err == nil {
		runOptions := []recovery.RunOption{recovery.WithDrain(shutdown.Done(), w.options.DrainDeadline)}
		if decision := taskDecision(task); decision != nil {
			runOptions = append(runOptions, recovery.WithDecision(*decision))
		}
		result, err = agent.Run(leaseCtx, task.GetRunId(), decodeInput(task.GetInput()), runOptions...)
	}
	lease.stop()
	if result != nil {
		w.events.write("resumed", "run", task.GetRunId(), "recovered_from_step", result.RecoveredFromStep,
			"restarted_from_scratch", result.RestartedFromScratch)
	}
	end := w.settle(shutdown, task, result, err, leaseCtx)
	w.record(TaskEnd{TaskID: task.GetTaskId(), RunID: task.GetRunId(), End: end})
	w.events.write("finished", "run", task.GetRunId(), "task", task.GetTaskId(), "end", string(end))
}

// settle moves the task through the queue by how its run ended and names the end.
func (w *worker) settle(shutdown context.Context, task *checkpointv1.Task, result *recovery.RecoveryResult,
	runErr error, leaseCtx context.Context) End {
	if leaseLost(leaseCtx) || recovery.IsFenced(runErr) {
		// Another worker owns the run now (or an operator took the task): the new owner settles it.
		return LeaseLost
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(shutdown), reportTimeout)
	defer cancel()
	taskID, attempt := task.GetTaskId(), task.GetAttempt()
	var approval *recovery.ApprovalRequired
	var end End
	var err error
	switch {
	case runErr == nil:
		end = Completed
		_, err = w.tasks.Complete(ctx, &checkpointv1.CompleteRequest{TaskId: taskID, Attempt: attempt, Result: result.Result})
	case errors.As(runErr, &approval):
		end = AwaitingApproval
		details, marshalErr := json.Marshal(approval.Details)
		if marshalErr != nil {
			details = []byte(`null`)
			w.logger.Warn("checkpointd-worker: approval details are not JSON; sent as null", "error", marshalErr.Error())
		}
		_, err = w.tasks.RequestApproval(ctx, &checkpointv1.RequestApprovalRequest{TaskId: taskID, Attempt: attempt,
			Action: approval.Action, Details: details})
	case errors.Is(runErr, recovery.ErrStopped):
		end = Released
		_, err = w.tasks.Release(ctx, &checkpointv1.ReleaseRequest{TaskId: taskID, Attempt: attempt})
	default:
		end, err = w.fail(ctx, taskID, attempt, runErr)
	}
	if err == nil {
		return end
	}
	var refusal *checkpointd.Error
	if errors.As(err, &refusal) && refusal.Code == codes.FailedPrecondition {
		// Another worker owns the task (LEASE_LOST), or an operator moved it (TASK_STATE, ...).
		if refusal.Reason == "" || refusal.Reason == checkpointd.ReasonLeaseLost {
			return LeaseLost
		}
		return End(strings.ToLower(string(refusal.Reason)))
	}
	w.logger.Warn("checkpointd-worker: reporting the task's outcome failed; the lease will expire",
		"task_id", taskID, "error", err.Error())
	return ReportFailed
}

// fail reports a failed run: fatal fails the task for good; transient (the resurrection budget
// spent) hands it back for a retry with backoff, or makes it a dead letter on its last attempt.
func (w *worker) fail(ctx context.Context, taskID string, attempt uint64, runErr error) (End, error) {
	end, class := FailedTransient, checkpointv1.ErrorClass_ERROR_CLASS_TRANSIENT
	if w.classifier.Classify(runErr) == recovery.KindFatal {
		end, class = FailedFatal, checkpointv1.ErrorClass_ERROR_CLASS_FATAL
	}
	_, err := w.tasks.Fail(ctx, &checkpointv1.FailRequest{TaskId: taskID, Attempt: attempt,
		Error: truncate(runErr.Error(), maxErrorLength), ErrorClass: class})
	return end, err
}

// decodeInput is the task's input as JSON when it is JSON, else its bytes; nil when empty.
func decodeInput(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var value any
	if json.Unmarshal(raw, &value) == nil {
		return value
	}
	return raw
}

// taskDecision is the human decision a re-claimed task carries, or nil while none was made.
func taskDecision(task *checkpointv1.Task) *recovery.Decision {
	approval := task.GetApproval()
	if approval == nil || !approval.GetDecided() {
		return nil
	}
	return &recovery.Decision{Action: approval.GetAction(), Approved: approval.GetApproved(),
		DecidedBy: approval.GetDecidedBy(), Comment: approval.GetComment()}
}

// truncate cuts text to at most limit bytes on a character boundary.
func truncate(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}
