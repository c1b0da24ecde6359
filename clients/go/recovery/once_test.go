// What "once" means (README, "What runs once, and what may run twice"): a journalled tool whose
// process dies after the tool returned and before its result was journalled runs again on
// resume; a side effect left in doubt the same way is not re-run silently.
package recovery

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// diesBeforeTheResult is a backend whose process "dies" when it would journal a result: the
// write never reaches the store.
type diesBeforeTheResult struct{ Backend }

var errDied = errors.New("the process died before journalling the result")

func (diesBeforeTheResult) RecordToolResult(context.Context, *checkpointv1.RecordToolResultRequest,
	...grpc.CallOption) (*checkpointv1.RecordToolResultResponse, error) {
	return nil, Fatal(errDied)
}

func TestAJournalledToolWhoseResultWasNeverJournalledRunsAgain(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		calls := 0
		agent := func(ctx context.Context, step *StepContext) (*Done, error) {
			found, err := CallTool(ctx, step, "lookup", func(context.Context) (int, error) { calls++; return 42, nil })
			if err != nil {
				return nil, err
			}
			return &Done{Result: found}, nil
		}
		dying, _ := NewRecoverableAgent(agent, NewCheckpointStore(diesBeforeTheResult{p.backend(t)}, nil), WithMaxResurrections(0))
		if _, err := dying.Run(ctx, "r", nil); !errors.Is(err, errDied) {
			t.Fatalf("first life: %v", err)
		}
		again, _ := NewRecoverableAgent(agent, NewCheckpointStore(p.backend(t), nil))
		if result, err := again.Run(ctx, "r", nil); err != nil || string(result.Result) != "42" || calls != 2 {
			t.Fatalf("second life: %+v %v; the tool ran %d times, want 2 (no intent: it runs again)", result, err, calls)
		}
	})
}

func TestASideEffectWhoseResultWasNeverJournalledIsNotReRunSilently(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		sent := 0
		agent := func(ctx context.Context, step *StepContext) (*Done, error) {
			_, err := CallSideEffect(ctx, step, "send_email", func(context.Context, string) (bool, error) { sent++; return true, nil }, Fail)
			if err != nil {
				return nil, err
			}
			return &Done{Result: "sent"}, nil
		}
		dying, _ := NewRecoverableAgent(agent, NewCheckpointStore(diesBeforeTheResult{p.backend(t)}, nil), WithMaxResurrections(0))
		if _, err := dying.Run(ctx, "r", nil); !errors.Is(err, errDied) {
			t.Fatalf("first life: %v", err)
		}
		again, _ := NewRecoverableAgent(agent, NewCheckpointStore(p.backend(t), nil))
		var fatal *FatalError
		if _, err := again.Run(ctx, "r", nil); !errors.As(err, &fatal) || sent != 1 {
			t.Fatalf("second life: %v; sent %d times, want 1 and the in-doubt call failed by its policy", err, sent)
		}
	})
}
