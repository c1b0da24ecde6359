package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// crashOnce is the reference agent: a journalled lookup per step, a transient crash at step
// crashAt the first time, finished at step 8; lookups counts the real lookups per step.
func crashOnce(crashAt int64, lookups map[int64]int) AgentFunc {
	crashed := false
	return func(ctx context.Context, step *StepContext) (*Done, error) {
		found, err := CallTool(ctx, step, "lookup", func(context.Context) (int64, error) {
			lookups[step.Step]++
			return step.Step * 10, nil
		})
		if err != nil {
			return nil, err
		}
		total, _ := step.State()["total"].(float64)
		step.State()["total"] = total + float64(found)
		step.AddMessage("assistant", fmt.Sprintf("step %d", step.Step))
		if step.Step == crashAt && !crashed {
			crashed = true
			return nil, errors.New("simulated crash (connection reset)")
		}
		if step.Step == 8 {
			return &Done{Result: step.State()["total"]}, nil
		}
		return nil, nil
	}
}

func TestAnAgentThatCrashesAtStepFiveResumesFromStepThreeWithEachLookupOnce(t *testing.T) {
	forEachPlace(t, func(t *testing.T, p place) {
		lookups := map[int64]int{}
		agent, err := NewRecoverableAgent(crashOnce(5, lookups), NewCheckpointStore(p.backend(t), nil),
			WithCheckpointEveryN(3), WithCooldown(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		result, err := agent.Run(context.Background(), "ref", "task")
		if err != nil {
			t.Fatal(err)
		}
		if result.RecoveredFromStep != 3 || result.Resurrections != 1 || result.ToolsReplayed != 2 ||
			result.ToolsExecuted != 8 || string(result.Result) != "360" {
			t.Fatalf("result %+v (%s)", result, result.Result)
		}
		for step := int64(1); step <= 8; step++ {
			if lookups[step] != 1 {
				t.Fatalf("lookups per step %v", lookups)
			}
		}
		// The failed step left no trace: the final state counts each step once.
		loaded, err := NewCheckpointStore(p.backend(t), nil).LoadLatest(context.Background(), "ref")
		if err != nil || loaded.Step != 8 || loaded.State["total"] != float64(360) || len(loaded.Messages) != 8 {
			t.Fatalf("final checkpoint %+v %v", loaded, err)
		}
	})
}

func TestAFinishedRunIsNotRunAgain(t *testing.T) {
	store := NewInMemoryStore(nil, nil)
	lookups := map[int64]int{}
	agent, _ := NewRecoverableAgent(crashOnce(0, lookups), store, WithCooldown(time.Millisecond))
	if _, err := agent.Run(context.Background(), "done", nil); err != nil {
		t.Fatal(err)
	}
	again, err := agent.Run(context.Background(), "done", nil)
	if err != nil || string(again.Result) != "360" || again.RecoveredFromStep != 8 || again.StepsExecuted != 0 {
		t.Fatalf("second run %+v %v", again, err)
	}
	if lookups[8] != 1 {
		t.Fatalf("lookups %v", lookups)
	}
}

func TestTheResurrectionBudgetIsSpentThenTheErrorReturned(t *testing.T) {
	lives := 0
	failing := func(ctx context.Context, step *StepContext) (*Done, error) {
		if step.Step == 1 {
			lives++
		}
		return nil, errors.New("upstream timeout")
	}
	var log logged
	agent, _ := NewRecoverableAgent(failing, NewInMemoryStore(nil, log.logger()), WithMaxResurrections(2), WithCooldown(time.Millisecond))
	_, err := agent.Run(context.Background(), "budget", nil)
	if err == nil || !strings.Contains(err.Error(), "upstream timeout") || lives != 3 {
		t.Fatalf("err %v after %d lives, want the error after 3", err, lives)
	}
	if strings.Count(log.String(), "resurrecting") != 2 {
		t.Fatalf("log:\n%s", log.String())
	}
}

func TestAFatalErrorIsNotResurrected(t *testing.T) {
	lives := 0
	fatal := func(ctx context.Context, step *StepContext) (*Done, error) {
		lives++
		return nil, errors.New("invalid api key")
	}
	agent, _ := NewRecoverableAgent(fatal, NewInMemoryStore(nil, nil), WithCooldown(time.Millisecond))
	if _, err := agent.Run(context.Background(), "fatal", nil); err == nil || lives != 1 {
		t.Fatalf("err %v after %d lives", err, lives)
	}
}

func TestTheCooldownEndsWhenTheContextEnds(t *testing.T) {
	failing := func(ctx context.Context, step *StepContext) (*Done, error) { return nil, errors.New("flaky") }
	agent, _ := NewRecoverableAgent(failing, NewInMemoryStore(nil, nil), WithCooldown(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := agent.Run(ctx, "cancelled", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// emailAgent sends an email at step 2 under policy; sent counts effects per idempotency key.
func emailAgent(policy InDoubtPolicy, sent map[string]int, hang *bool) AgentFunc {
	return func(ctx context.Context, step *StepContext) (*Done, error) {
		if step.Step == 2 {
			_, err := step.CallSideEffect(ctx, "email", func(_ context.Context, key string) (any, error) {
				sent[key]++
				if *hang {
					return nil, errors.New("the process died after the email went out")
				}
				return map[string]string{"key": key}, nil
			}, policy)
			if err != nil {
				return nil, err
			}
		}
		if step.Step == 3 {
			return &Done{Result: "ok"}, nil
		}
		return nil, nil
	}
}

func TestACallInDoubtIsRetriedWithItsKeyOrStoppedByItsPolicy(t *testing.T) {
	for _, policy := range []InDoubtPolicy{RetryWithKey, Fail, Ask} {
		t.Run(string(policy), func(t *testing.T) {
			memory := NewMemoryBackend("default")
			sent := map[string]int{}
			dies := true
			first, _ := NewRecoverableAgent(emailAgent(policy, sent, &dies), NewInMemoryStore(memory, nil),
				WithMaxResurrections(0), WithCheckpointEveryN(1))
			if _, err := first.Run(context.Background(), "email", nil); err == nil {
				t.Fatal("the first life did not fail")
			}
			dies = false
			second, _ := NewRecoverableAgent(emailAgent(policy, sent, &dies), NewInMemoryStore(memory, nil), WithMaxResurrections(0))
			result, err := second.Run(context.Background(), "email", nil)
			var fatal *FatalError
			var approval *ApprovalRequired
			switch policy {
			case RetryWithKey:
				if err != nil || len(sent) != 1 || result.RecoveredFromStep != 1 {
					t.Fatalf("%+v %v, sent %v: want one key, retried", result, err, sent)
				}
				for _, times := range sent {
					if times != 2 {
						t.Fatalf("sent %v: the retry used another key", sent)
					}
				}
			case Fail:
				if !errors.As(err, &fatal) || !strings.Contains(err.Error(), "step-2/email/0") {
					t.Fatalf("err %v, want fatal naming the call", err)
				}
			case Ask:
				if !errors.As(err, &approval) || approval.Action != InDoubtAction("step-2/email/0") {
					t.Fatalf("err %v, want an approval request", err)
				}
				third, _ := NewRecoverableAgent(emailAgent(policy, sent, &dies), NewInMemoryStore(memory, nil))
				if _, err := third.Run(context.Background(), "email", nil,
					WithDecision(Decision{Action: approval.Action, Approved: true})); err != nil {
					t.Fatalf("approved: %v", err)
				}
			}
		})
	}
}

func TestAFailedStepLeavesNoTraceInTheCheckpointedState(t *testing.T) {
	memory := NewMemoryBackend("default")
	failures := 0
	agent := func(ctx context.Context, step *StepContext) (*Done, error) {
		step.State()["visits"] = len(step.Messages()) + 1
		step.AddMessage("assistant", fmt.Sprint(step.Step))
		if step.Step == 2 && failures == 0 {
			failures++
			step.State()["poison"] = true
			return nil, errors.New("flaky")
		}
		if step.Step == 2 {
			return &Done{}, nil
		}
		return nil, nil
	}
	recoverable, _ := NewRecoverableAgent(agent, NewInMemoryStore(memory, nil), WithCheckpointEveryN(1), WithCooldown(time.Millisecond))
	if _, err := recoverable.Run(context.Background(), "trace", nil); err != nil {
		t.Fatal(err)
	}
	loaded, _ := NewInMemoryStore(memory, nil).LoadLatest(context.Background(), "trace")
	if _, poisoned := loaded.State["poison"]; poisoned || len(loaded.Messages) != 2 || loaded.State["visits"] != float64(2) {
		t.Fatalf("final checkpoint %+v", loaded)
	}
}
