// Command worker is the example queue worker to copy: your agent and one call, worker.Main,
// which runs it until SIGTERM or Ctrl-C (then it drains: running steps finish, runs are
// checkpointed, tasks released). Run it against a server with a task in the queue:
//
//	checkpointd serve --database sqlite:///tmp/cpd.db &
//	checkpointd tasks enqueue --run greet-1 --input '{"name":"Ada"}'
//	go run ./examples/worker --server 127.0.0.1:50051 --exit-after 1
package main

import (
	"context"
	"fmt"

	"github.com/checkpointd/checkpointd/clients/go/recovery"
	"github.com/checkpointd/checkpointd/clients/go/worker"
)

// greet is the agent: three steps, each a journalled tool call (never repeated after a crash),
// done after the third. Replace it with yours.
func greet(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
	input, _ := step.Task().(map[string]any)
	line, err := recovery.CallTool(ctx, step, "compose", func(context.Context) (string, error) {
		return fmt.Sprintf("step %d: hello, %v", step.Step, input["name"]), nil
	})
	if err != nil {
		return nil, err
	}
	step.AddMessage("assistant", line)
	if step.Step == 3 {
		return &recovery.Done{Result: map[string]any{"lines": len(step.Messages())}}, nil
	}
	return nil, nil
}

// main runs greet as a queue worker: worker.Main parses the worker's flags (--server, --tenant,
// --token, --ca/--cert/--key, --concurrency, --lease, --strategy, ...), dials, and runs until
// SIGTERM or Ctrl-C, then drains. For more control, do what it does: worker.BindFlags,
// Flags.Dial, Flags.Options and worker.Run with a context that ends on shutdown.
func main() { worker.Main(greet) }
