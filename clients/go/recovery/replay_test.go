// A replay must match its call (DESIGN.md, contract 14): a journalled result or intent is
// reused only for a call with the same arguments; other arguments under the same call id are a
// *checkpointd.ReplayMismatchError, fatal, and the tool is not called, whether this client finds
// it before replaying or the server refuses the journal write (ARGUMENTS_MISMATCH).
package recovery

import (
	"context"
	"errors"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

type lookupArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// lookupOnce is an agent whose step 1 calls lookup with query, counting the real calls, and
// then fails fatally the first time (so step 1 is never checkpointed and re-runs on the next
// Run) and finishes the next.
func lookupOnce(query string, calls *int, failFirst *bool) AgentFunc {
	return func(ctx context.Context, step *StepContext) (*Done, error) {
		found, err := CallToolWith(ctx, step, "lookup", lookupArgs{Query: query, Limit: 3},
			func(_ context.Context, args lookupArgs) (string, error) {
				*calls++
				return "found " + args.Query, nil
			})
		if err != nil {
			return nil, err
		}
		if *failFirst {
			*failFirst = false
			return nil, Fatal(errors.New("stopped after the tool, before a checkpoint"))
		}
		return &Done{Result: found}, nil
	}
}

func TestAJournalledResultIsReplayedOnlyForTheSameArguments(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		calls, fail := 0, true
		first, _ := NewRecoverableAgent(lookupOnce("paris", &calls, &fail), NewCheckpointStore(p.backend(t), nil),
			WithMaxResurrections(0), WithCooldown(time.Millisecond))
		if _, err := first.Run(ctx, "r", nil); err == nil {
			t.Fatal("the first life did not fail")
		}
		store := NewCheckpointStore(p.backend(t), nil)
		if _, err := store.Resume(ctx, "r", true); err != nil {
			t.Fatal(err)
		}
		want, _ := checkpointd.ArgumentsDigest(lookupArgs{Query: "paris", Limit: 3})
		if got := store.Journalled("r", "step-1/lookup/0").GetArgumentsDigest(); got != want {
			t.Fatalf("journalled digest %q, want %q", got, want)
		}

		// Other arguments under the same call id: refused, the tool not called, no resurrection.
		other, _ := NewRecoverableAgent(lookupOnce("london", &calls, new(bool)), NewCheckpointStore(p.backend(t), nil),
			WithMaxResurrections(3), WithCooldown(time.Millisecond))
		_, err := other.Run(ctx, "r", nil)
		var mismatch *checkpointd.ReplayMismatchError
		if !errors.As(err, &mismatch) || mismatch.CallID != "step-1/lookup/0" || mismatch.StoredDigest != want ||
			mismatch.RequestDigest == "" || mismatch.RequestDigest == want {
			t.Fatalf("other arguments: %v, want a ReplayMismatchError naming the call and both digests", err)
		}
		if calls != 1 {
			t.Fatalf("the tool ran %d times; a mismatched replay must not call it", calls)
		}
		if (Classifier{}).Classify(err) != KindFatal {
			t.Fatal("a replay mismatch is not fatal")
		}

		// The same arguments replay.
		same, _ := NewRecoverableAgent(lookupOnce("paris", &calls, new(bool)), NewCheckpointStore(p.backend(t), nil),
			WithCooldown(time.Millisecond))
		result, err := same.Run(ctx, "r", nil)
		if err != nil || string(result.Result) != `"found paris"` || result.ToolsReplayed != 1 || calls != 1 {
			t.Fatalf("same arguments: %+v %v (calls %d)", result, err, calls)
		}
	})
}

func TestAResultJournalledWithoutADigestReplaysForAnyArguments(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		older := NewCheckpointStore(p.backend(t), nil)
		if _, err := older.RecordToolResult(ctx, "r", "step-1/lookup/0", "lookup", 1, []byte(`"found then"`), false, ""); err != nil {
			t.Fatal(err)
		}
		calls := 0
		agent, _ := NewRecoverableAgent(lookupOnce("anything", &calls, new(bool)), NewCheckpointStore(p.backend(t), nil),
			WithCooldown(time.Millisecond))
		result, err := agent.Run(ctx, "r", nil)
		if err != nil || string(result.Result) != `"found then"` || calls != 0 {
			t.Fatalf("%+v %v (calls %d)", result, err, calls)
		}
	})
}

func TestAnIntentIsReusedOnlyForTheSameArgumentsAndTheEffectIsNotRun(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		sent := 0
		email := func(to string, crash bool) AgentFunc {
			return func(ctx context.Context, step *StepContext) (*Done, error) {
				_, err := CallSideEffectWith(ctx, step, "send_email", map[string]string{"to": to},
					func(_ context.Context, key string, args map[string]string) (bool, error) {
						sent++
						if crash {
							return false, Fatal(errors.New("died after the effect, before its result"))
						}
						return true, nil
					}, RetryWithKey)
				if err != nil {
					return nil, err
				}
				return &Done{Result: to}, nil
			}
		}
		crashed, _ := NewRecoverableAgent(email("ada@example.com", true), NewCheckpointStore(p.backend(t), nil),
			WithMaxResurrections(0))
		if _, err := crashed.Run(ctx, "r", nil); err == nil {
			t.Fatal("the first life did not fail")
		}
		// The call is in doubt; the next life asks for another recipient under the same call id.
		other, _ := NewRecoverableAgent(email("bob@example.com", false), NewCheckpointStore(p.backend(t), nil),
			WithMaxResurrections(0))
		_, err := other.Run(ctx, "r", nil)
		var mismatch *checkpointd.ReplayMismatchError
		if !errors.As(err, &mismatch) || mismatch.CallID != "step-1/send_email/0" || sent != 1 {
			t.Fatalf("an in-doubt intent for other arguments: %v (sent %d), want a ReplayMismatchError and no effect", err, sent)
		}
		same, _ := NewRecoverableAgent(email("ada@example.com", false), NewCheckpointStore(p.backend(t), nil))
		if result, err := same.Run(ctx, "r", nil); err != nil || string(result.Result) != `"ada@example.com"` || sent != 2 {
			t.Fatalf("the same arguments retry with the key: %+v %v (sent %d)", result, err, sent)
		}
	})
}

func TestTheServersArgumentsMismatchIsAReplayMismatchError(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		ctx := context.Background()
		a, _ := checkpointd.ArgumentsDigest(map[string]string{"env": "prod"})
		b, _ := checkpointd.ArgumentsDigest(map[string]string{"env": "staging"})
		store := NewCheckpointStore(p.backend(t), nil)
		if _, err := store.RecordToolIntent(ctx, "r", "step-2/deploy/0", "deploy", 2, a); err != nil {
			t.Fatal(err)
		}
		// The store sends these writes as they are: the backend is the one that refuses them.
		for name, write := range map[string]func() error{
			"intent": func() error {
				_, err := store.RecordToolIntent(ctx, "r", "step-2/deploy/0", "deploy", 2, b)
				return err
			},
			"result": func() error {
				_, err := store.RecordToolResult(ctx, "r", "step-2/deploy/0", "deploy", 2, []byte(`"ok"`), false, b)
				return err
			},
		} {
			err := write()
			var mismatch *checkpointd.ReplayMismatchError
			if !errors.As(err, &mismatch) || mismatch.CallID != "step-2/deploy/0" || mismatch.StoredDigest != a ||
				mismatch.RequestDigest != b || !errors.Is(err, checkpointd.ErrArgumentsMismatch) {
				t.Fatalf("%s with another digest: %v", name, err)
			}
		}
		if _, err := store.RecordToolResult(ctx, "r", "step-2/deploy/0", "deploy", 2, []byte(`"ok"`), false, a); err != nil {
			t.Fatalf("the same digest completes the call: %v", err)
		}
		if _, err := store.RecordToolResult(ctx, "r", "step-3/x/0", "x", 3, []byte(`1`), false, "ABC"); !errors.Is(err, checkpointd.ErrInvalidArgument) {
			t.Fatalf("a malformed digest: %v, want INVALID_ARGUMENT", err)
		}
	})
}
