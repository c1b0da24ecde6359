// InvokeThenDelete: the one call a compose graph needs so that a finished run's checkpoint does
// not outlive it. Eino's graphs save only when they interrupt and never delete, so without it a
// later Invoke under the same id resumes from the finished run's last interrupt and ignores its
// new input.

package eino

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/compose"
)

// InvokeThenDelete runs the graph under checkPointID (resuming from its checkpoint when there is
// one) and, when the run completes, deletes the id's checkpoints. An interrupt or failure
// returns the graph's error and keeps them, so a later call resumes.
func InvokeThenDelete[I, O any](ctx context.Context, store *Store, graph compose.Runnable[I, O],
	checkPointID string, input I, opts ...compose.Option) (O, error) {
	output, err := graph.Invoke(ctx, input, append([]compose.Option{compose.WithCheckPointID(checkPointID)}, opts...)...)
	if err != nil {
		return output, err
	}
	if err := store.Delete(ctx, checkPointID); err != nil {
		return output, fmt.Errorf("the run completed but its checkpoint remains: %w", err)
	}
	return output, nil
}
