// The README's usage as a compiled example (no Output: it needs a running checkpointd).

package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudwego/eino/compose"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
)

// A graph that asks for approval before "send": the first call interrupts and its checkpoint is
// in checkpointd; the same call from any process later resumes it, and the completed run's
// checkpoint is deleted.
func ExampleInvokeThenDelete() {
	ctx := context.Background()
	client, err := checkpointd.Dial("127.0.0.1:50051", checkpointd.WithTenant("default"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	store := eino.New(client, eino.WithCorruptPolicy(eino.Refuse))

	graph := compose.NewGraph[string, string]()
	_ = graph.AddLambdaNode("draft", compose.InvokableLambda(func(_ context.Context, in string) (string, error) {
		return in + " drafted", nil
	}))
	_ = graph.AddLambdaNode("send", compose.InvokableLambda(func(_ context.Context, in string) (string, error) {
		return in + " sent", nil // the side effect, after approval
	}))
	_ = graph.AddEdge(compose.START, "draft")
	_ = graph.AddEdge("draft", "send")
	_ = graph.AddEdge("send", compose.END)
	runnable, err := graph.Compile(ctx, compose.WithCheckPointStore(store),
		compose.WithInterruptBeforeNodes([]string{"send"}))
	if err != nil {
		log.Fatal(err)
	}

	output, err := eino.InvokeThenDelete(ctx, store, runnable, "thread-1", "hello")
	if info, interrupted := compose.ExtractInterruptInfo(err); interrupted {
		fmt.Println("awaiting approval before", info.BeforeNodes) // call again to approve
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(output)
}
