// A claimed task's lease: heartbeats every third of it, and what a lost lease does. A heartbeat
// the queue fences (FAILED_PRECONDITION: another worker reclaimed the task, or an operator
// cancelled it) cancels the run's context with errLeaseLost, so the running step is abandoned,
// and the store under the run refuses every write from then on (fencedBackend): nothing more is
// written, whatever the step does with its context. Any other heartbeat failure is retried at
// the next beat, since the lease has two more beats to run.
package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// errLeaseLost is the cause a run's context is cancelled with when its lease is lost.
var errLeaseLost = errors.New("checkpointd-worker: the task's lease was lost; another owner has it")

// leaseLost says whether leaseCtx was cancelled because the lease was lost.
func leaseLost(leaseCtx context.Context) bool {
	return errors.Is(context.Cause(leaseCtx), errLeaseLost)
}

// leaseKeeper heartbeats one task until stopped.
type leaseKeeper struct {
	cancel  context.CancelCauseFunc
	stopped chan struct{}
	beating chan struct{}
}

// keepLease starts heartbeating task (with its claim's attempt) and returns the context its run
// lives in, cancelled when the lease is lost.
func (w *worker) keepLease(parent context.Context, task *checkpointv1.Task) (context.Context, *leaseKeeper) {
	leaseCtx, cancel := context.WithCancelCause(parent)
	keeper := &leaseKeeper{cancel: cancel, stopped: make(chan struct{}), beating: make(chan struct{})}
	go func() {
		defer close(keeper.beating)
		interval := max(w.options.Lease/3, time.Millisecond) // a ticker needs a positive interval
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-keeper.stopped:
				return
			case <-ticker.C:
			}
			if err := w.heartbeat(parent, task, interval); err != nil {
				var refusal *checkpointd.Error
				if errors.As(err, &refusal) && refusal.Code == codes.FailedPrecondition {
					w.logger.Warn("checkpointd-worker: lease lost; stopping the task", "task_id", task.GetTaskId(),
						"reason", string(refusal.Reason))
					cancel(fmt.Errorf("%w (%v)", errLeaseLost, err))
					return
				}
				w.logger.Warn("checkpointd-worker: heartbeat failed; retrying", "task_id", task.GetTaskId(), "error", err.Error())
			}
		}
	}()
	return leaseCtx, keeper
}

func (w *worker) heartbeat(ctx context.Context, task *checkpointv1.Task, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := w.tasks.Heartbeat(ctx, &checkpointv1.HeartbeatRequest{TaskId: task.GetTaskId(), Attempt: task.GetAttempt(),
		LeaseDuration: durationpb.New(w.options.Lease)})
	return err
}

// stop ends the heartbeats and waits for one in flight; the lease context stays as it is.
func (k *leaseKeeper) stop() {
	close(k.stopped)
	<-k.beating
}

// release frees the lease context once the task is settled.
func (k *leaseKeeper) release() { k.cancel(nil) }

// fencedBackend refuses every write once the lease is lost: Resume (which would take the run
// back from its new owner), Save and the journal's records. Reads pass through.
type fencedBackend struct {
	recovery.Backend
	lease context.Context
}

func (f fencedBackend) refusal() error {
	if leaseLost(f.lease) {
		return context.Cause(f.lease)
	}
	return nil
}

func (f fencedBackend) Resume(ctx context.Context, in *checkpointv1.ResumeRequest, opts ...grpc.CallOption) (*checkpointv1.ResumeResponse, error) {
	if err := f.refusal(); err != nil {
		return nil, err
	}
	return f.Backend.Resume(ctx, in, opts...)
}

func (f fencedBackend) Save(ctx context.Context, in *checkpointv1.SaveRequest, opts ...grpc.CallOption) (*checkpointv1.SaveResponse, error) {
	if err := f.refusal(); err != nil {
		return nil, err
	}
	return f.Backend.Save(ctx, in, opts...)
}

func (f fencedBackend) RecordToolResult(ctx context.Context, in *checkpointv1.RecordToolResultRequest,
	opts ...grpc.CallOption) (*checkpointv1.RecordToolResultResponse, error) {
	if err := f.refusal(); err != nil {
		return nil, err
	}
	return f.Backend.RecordToolResult(ctx, in, opts...)
}

func (f fencedBackend) RecordToolIntent(ctx context.Context, in *checkpointv1.RecordToolIntentRequest,
	opts ...grpc.CallOption) (*checkpointv1.RecordToolIntentResponse, error) {
	if err := f.refusal(); err != nil {
		return nil, err
	}
	return f.Backend.RecordToolIntent(ctx, in, opts...)
}
