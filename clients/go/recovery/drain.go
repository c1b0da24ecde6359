// Draining a run for shutdown (a queue worker's SIGTERM): once the stop channel closes, the run
// ends at the next step boundary with its last completed step checkpointed; a step still
// running when the drain deadline passes has its context cancelled, is rolled back like a failed
// step, and the run is checkpointed at the step before it. Without WithDrain nothing changes.
package recovery

import (
	"context"
	"errors"
	"time"
)

// ErrStopped is Run's error when a drain (WithDrain) ended the run early: its last completed
// step is checkpointed, and the run resumes from there in any process.
var ErrStopped = errors.New("checkpointd: the run was stopped for shutdown; its last completed step is checkpointed")

// errDrainDeadline is the cause a step's context is cancelled with when the drain deadline passes.
var errDrainDeadline = errors.New("checkpointd: the drain deadline passed mid-step; the step is abandoned")

// WithDrain ends the run for shutdown once stop is closed: between steps the last completed
// step is checkpointed and Run returns ErrStopped; a step still running deadline after stop
// closed has its context cancelled (a step that ignores its context delays the drain until it
// returns), leaves no trace, and the run ends the same way. A cooldown before a resurrection
// ends at once.
func WithDrain(stop <-chan struct{}, deadline time.Duration) RunOption {
	return func(r *runSettings) { r.drain = &drain{stop: stop, deadline: deadline} }
}

type drain struct {
	stop     <-chan struct{}
	deadline time.Duration
}

// stopping says whether the drain began; false without one.
func (d *drain) stopping() bool {
	if d == nil {
		return false
	}
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// stopped is the channel that closes when the drain begins; nil (never ready) without one.
func (d *drain) stopped() <-chan struct{} {
	if d == nil {
		return nil
	}
	return d.stop
}

// stepContext is ctx for one step, cancelled with errDrainDeadline once the deadline after
// the drain's start passes; release ends the watch and must be called when the step returns.
func (d *drain) stepContext(ctx context.Context) (stepCtx context.Context, release func()) {
	if d == nil {
		return ctx, func() {}
	}
	stepCtx, cancel := context.WithCancelCause(ctx)
	returned := make(chan struct{})
	go func() {
		select {
		case <-returned:
			return
		case <-d.stop:
		}
		timer := time.NewTimer(d.deadline)
		defer timer.Stop()
		select {
		case <-returned:
		case <-timer.C:
			cancel(errDrainDeadline)
		}
	}()
	return stepCtx, func() { close(returned); cancel(nil) }
}

// abandoned says whether stepCtx was cancelled by the drain deadline.
func abandoned(stepCtx context.Context) bool {
	return errors.Is(context.Cause(stepCtx), errDrainDeadline)
}
