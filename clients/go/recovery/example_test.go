// The README's recovery snippets as compiled examples (no Output: they need a running
// checkpointd). readme_test.go in the module's root checks the README quotes them.

package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// lookup stands for a tool that costs something (an API, a search): journalled, so a resumed
// run reuses its results.
func lookup(_ context.Context, step int64) (string, error) { return fmt.Sprintf("fact %d", step), nil }

// An agent of 8 steps, checkpointed every 3; run again after a crash, it resumes from the
// latest valid checkpoint and replays journalled tool results instead of calling the tool.
func ExampleRecoverableAgent_Run() {
	ctx := context.Background()
	client, err := checkpointd.Dial("127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	store := recovery.NewCheckpointStore(client.Checkpoints, nil)
	agent := func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		fact, err := recovery.CallTool(ctx, step, "lookup", func(ctx context.Context) (string, error) {
			return lookup(ctx, step.Step) // journalled: after a crash it is replayed, not re-run
		})
		if err != nil {
			return nil, err
		}
		step.AddMessage("assistant", fact)
		if step.Step == 8 {
			return &recovery.Done{Result: step.State()}, nil
		}
		return nil, nil
	}
	recoverable, err := recovery.NewRecoverableAgent(agent, store, recovery.WithCheckpointEveryN(3))
	if err != nil {
		log.Fatal(err)
	}
	task := map[string]any{"topic": "checkpoints"} // the run's input: step.Task()
	result, err := recoverable.Run(ctx, "run-1", task)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recoveredFromStep", result.RecoveredFromStep)
}

// WeatherQuery and Forecast are a tool's arguments and result.
type WeatherQuery struct{ City string }
type Forecast struct{ Summary string }

func forecast(_ context.Context, q WeatherQuery) (Forecast, error) {
	return Forecast{Summary: "sunny in " + q.City}, nil
}

// A journalled tool whose arguments are compared on replay.
func ExampleCallToolWith() {
	agent := func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		city := "Lisbon"
		weather, err := recovery.CallToolWith(ctx, step, "weather", WeatherQuery{City: city},
			func(ctx context.Context, q WeatherQuery) (Forecast, error) { return forecast(ctx, q) })
		var mismatch *checkpointd.ReplayMismatchError
		if errors.As(err, &mismatch) { /* mismatch.CallID, mismatch.StoredDigest, mismatch.RequestDigest */
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		step.AddMessage("assistant", weather.Summary)
		return &recovery.Done{Result: weather}, nil
	}
	_ = agent
}
