// A program in a module outside the repository that uses every Go module of checkpointd as a
// user would: the client (a save with checksum v1, a verified load, a typed refusal), the
// recovery loop, the queue worker, the ADK session service under ADK's runner and an llmagent,
// and the Eino store under a compiled graph that interrupts and is resumed by a fresh store.
// It prints one "check: NAME: ok ..." line per part and exits non-zero on the first failure.
// .ci/consumer_go.sh builds it with the replace lines clients/go/README.md documents.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"time"

	"github.com/cloudwego/eino/compose"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/adk"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
	"github.com/checkpointd/checkpointd/clients/go/worker"
)

func main() {
	address := os.Getenv("CHECKPOINTD_ADDRESS")
	suffix := fmt.Sprintf("%d", os.Getpid())
	client, err := checkpointd.Dial(address, checkpointd.WithTenant("consumer-go"))
	if err != nil {
		fail("dial", err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, part := range []struct {
		name string
		run  func(context.Context, *checkpointd.Client, string) (string, error)
	}{{"client", checkClient}, {"recovery", checkRecovery}, {"worker", checkWorker},
		{"adk", checkADK}, {"eino", checkEino}} {
		said, err := part.run(ctx, client, suffix)
		if err != nil {
			fail(part.name, err)
		}
		fmt.Printf("check: %s: ok %s\n", part.name, said)
	}
}

func fail(name string, err error) {
	fmt.Printf("check: %s: FAILED %v\n", name, err)
	os.Exit(1)
}

// checkClient saves with checksum v1, loads and verifies, and reads a refusal by its reason.
func checkClient(ctx context.Context, client *checkpointd.Client, suffix string) (string, error) {
	runID := "consumer-client-" + suffix
	state := []byte(`{"n":1}`)
	messages := []*checkpointv1.Message{{Role: "user", Content: []byte(`{"content":"hi"}`)}}
	sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: 1, ContentType: "application/json",
		State: state}, checkpointd.MessagesOf(checkpointd.MessageChain{}, messages), checkpointd.ToolChain{})
	if _, err := client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: runID, Step: 1,
		ContentType: "application/json", State: state, Messages: messages, Checksum: &sum}); err != nil {
		return "", err
	}
	loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
	if err != nil {
		return "", err
	}
	if _, err := checkpointd.VerifyCheckpoint(loaded.Checkpoint, loaded.ToolResults, loaded.ToolIntents,
		checkpointd.MessageChain{}); err != nil {
		return "", err
	}
	_, err = client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: runID + "-nobody"})
	if !errors.Is(err, checkpointd.ErrRunNotFound) {
		return "", fmt.Errorf("an unknown run should be RUN_NOT_FOUND, got %v", err)
	}
	return fmt.Sprintf("saved and verified step %d, unknown run refused (%s)", loaded.Checkpoint.Step, checkpointd.ReasonRunNotFound), nil
}

// checkRecovery runs a journalled agent of 4 steps, checkpointed every 2.
func checkRecovery(ctx context.Context, client *checkpointd.Client, suffix string) (string, error) {
	calls := 0
	agentFunc := func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		fact, err := recovery.CallTool(ctx, step, "lookup", func(context.Context) (string, error) {
			calls++
			return fmt.Sprintf("fact %d", step.Step), nil
		})
		if err != nil {
			return nil, err
		}
		step.AddMessage("assistant", fact)
		if step.Step == 4 {
			return &recovery.Done{Result: map[string]any{"facts": len(step.Messages())}}, nil
		}
		return nil, nil
	}
	recoverable, err := recovery.NewRecoverableAgent(agentFunc, recovery.NewCheckpointStore(client.Checkpoints, nil),
		recovery.WithCheckpointEveryN(2))
	if err != nil {
		return "", err
	}
	if _, err := recoverable.Run(ctx, "consumer-recovery-"+suffix, map[string]any{"topic": "go"}); err != nil {
		return "", err
	}
	if calls != 4 {
		return "", fmt.Errorf("lookup ran %d times for 4 steps", calls)
	}
	return "4 steps, lookup called 4 times", nil
}

// checkWorker enqueues a task and runs a worker until it ended.
func checkWorker(ctx context.Context, client *checkpointd.Client, suffix string) (string, error) {
	runID := "consumer-worker-" + suffix
	if _, err := client.Tasks.Enqueue(ctx, &checkpointv1.EnqueueRequest{RunId: runID,
		Input: []byte(`{"name":"Ada"}`)}); err != nil {
		return "", err
	}
	greet := func(ctx context.Context, step *recovery.StepContext) (*recovery.Done, error) {
		input, _ := step.Task().(map[string]any)
		return &recovery.Done{Result: map[string]any{"greeting": fmt.Sprintf("hello, %v", input["name"])}}, nil
	}
	report, err := worker.Run(ctx, client, greet, worker.Options{ExitAfter: 1, PollInterval: 50 * time.Millisecond,
		Events: discard{}})
	if err != nil {
		return "", err
	}
	if len(report.Ends) != 1 || report.Ends[0].RunID != runID || report.Ends[0].End != worker.Completed {
		return "", fmt.Errorf("the worker's report: %+v", report.Ends)
	}
	return "task " + runID + " completed", nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// echoModel is a model.LLM that answers "echo: <the user's last text>".
type echoModel struct{}

func (echoModel) Name() string { return "echo" }

func (echoModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		text := ""
		if n := len(req.Contents); n > 0 && len(req.Contents[n-1].Parts) > 0 {
			text = req.Contents[n-1].Parts[0].Text
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText("echo: "+text, genai.RoleModel)}, nil)
	}
}

// checkADK runs two turns through ADK's runner over the session service, then reads the
// session back through a new service.
func checkADK(ctx context.Context, client *checkpointd.Client, suffix string) (string, error) {
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: echoModel{}, Instruction: "Echo."})
	if err != nil {
		return "", err
	}
	r, err := runner.New(runner.Config{AppName: "consumer", Agent: assistant, SessionService: adk.New(client),
		AutoCreateSession: true})
	if err != nil {
		return "", err
	}
	sessionID := "session-" + suffix
	last := ""
	for _, text := range []string{"hello", "again"} {
		for event, err := range r.Run(ctx, "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return "", err
			}
			if event.Content != nil && len(event.Content.Parts) > 0 {
				last = event.Content.Parts[0].Text
			}
		}
	}
	if last != "echo: again" {
		return "", fmt.Errorf("the agent said %q", last)
	}
	got, err := adk.New(client).Get(ctx, &session.GetRequest{AppName: "consumer", UserID: "user", SessionID: sessionID})
	if err != nil {
		return "", err
	}
	if n := got.Session.Events().Len(); n != 4 {
		return "", fmt.Errorf("the stored session holds %d events, want 4", n)
	}
	return `runner said "echo: again"; 4 events stored`, nil
}

// checkEino interrupts a compiled graph at an approval node (its draft saved with the
// interrupt), then resumes it with the decision through a fresh store.
func checkEino(ctx context.Context, client *checkpointd.Client, suffix string) (string, error) {
	graph := compose.NewGraph[string, string]()
	_ = graph.AddLambdaNode("approve", compose.InvokableLambda(func(ctx context.Context, draft string) (string, error) {
		interrupted, _, saved := compose.GetInterruptState[string](ctx)
		if !interrupted {
			return "", compose.StatefulInterrupt(ctx, "approve: "+draft, draft)
		}
		if resumed, has, decision := compose.GetResumeContext[string](ctx); resumed && has {
			return saved + " (" + decision + ")", nil
		}
		return "", compose.StatefulInterrupt(ctx, "approve: "+saved, saved)
	}))
	_ = graph.AddEdge(compose.START, "approve")
	_ = graph.AddEdge("approve", compose.END)
	compile := func() (compose.Runnable[string, string], *eino.Store, error) {
		store := eino.New(client)
		runnable, err := graph.Compile(ctx, compose.WithCheckPointStore(store))
		return runnable, store, err
	}
	id := "thread-" + suffix
	first, store, err := compile()
	if err != nil {
		return "", err
	}
	_, err = eino.InvokeThenDelete(ctx, store, first, id, "draft")
	info, interrupted := compose.ExtractInterruptInfo(err)
	if !interrupted || len(info.InterruptContexts) == 0 {
		return "", fmt.Errorf("the graph did not interrupt: %v", err)
	}
	second, fresh, err := compile()
	if err != nil {
		return "", err
	}
	out, err := eino.InvokeThenDelete(compose.ResumeWithData(ctx, info.InterruptContexts[0].ID, "approved"),
		fresh, second, id, "")
	if err != nil {
		return "", err
	}
	if out != "draft (approved)" {
		return "", fmt.Errorf("the resumed graph said %q", out)
	}
	encoded, _ := json.Marshal(out)
	return "interrupted, resumed by a fresh store: " + string(encoded), nil
}
