// The README's ADK snippet as a compiled example (no Output: it needs a running checkpointd
// and a model). readme_test.go in the core module checks the README quotes it.

package adk_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/genai"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/adk"
)

// yourModel is the agent's model.LLM, e.g. from google.golang.org/adk/v2/model/gemini.
var yourModel model.LLM

// ADK's runner with its sessions in checkpointd: any process continues a session.
func ExampleNew() {
	ctx := context.Background()
	client, err := checkpointd.Dial("127.0.0.1:50051", checkpointd.WithTenant("my-agents"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sessions := adk.New(client) // a session.Service: pass it to ADK's runner

	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: yourModel,
		Instruction: "Answer briefly."})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "my-app", Agent: assistant,
		SessionService: sessions, AutoCreateSession: true})
	if err != nil {
		log.Fatal(err)
	}
	message := genai.NewContentFromText("hello", genai.RoleUser)
	for event, err := range r.Run(ctx, "user-1", "session-1", message, agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(event.Author, event.Content)
	}
}
