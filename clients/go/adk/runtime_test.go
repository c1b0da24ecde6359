// ADK's whole runtime over this service: ADK's runner and an llmagent with a scripted model
// (model.LLM, deterministic from the request, so any process continues a conversation) and a
// side-effecting tool that needs the user's confirmation. Importing runner and llmagent here
// also keeps this module's pins compiling with them: OpenTelemetry newer than ADK's breaks
// ADK's internal/telemetry (undefined: log.Value), and go vet / go test compile this file.

package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"
)

const (
	runtimeApp  = "runtime"
	runtimeUser = "u"
	// sendEmailTool is the side effect: it appends a line to the file named by the
	// sideEffectFileEnv variable each time it really runs.
	sendEmailTool     = "send_email"
	sideEffectFileEnv = "ADK_RUNTIME_SIDE_EFFECTS"
)

// scriptedModel answers from the last content of the request alone, so a conversation
// continued by another process gets the same answers: "send ..." asks for send_email, the
// tool's response gets "sent", any other text gets "echo: <text>".
type scriptedModel struct{}

func (scriptedModel) Name() string { return "scripted" }

func (scriptedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: scriptedReply(req.Contents)}, nil)
	}
}

func scriptedReply(contents []*genai.Content) *genai.Content {
	if len(contents) == 0 {
		return genai.NewContentFromText("nothing to answer", genai.RoleModel)
	}
	last := contents[len(contents)-1]
	for _, part := range last.Parts {
		if response := part.FunctionResponse; response != nil && response.Name == sendEmailTool {
			return genai.NewContentFromText(fmt.Sprintf("sent: %v", response.Response["result"]), genai.RoleModel)
		}
	}
	for _, part := range last.Parts {
		if to, ok := strings.CutPrefix(part.Text, "send "); ok {
			return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				ID: "call-" + to, Name: sendEmailTool, Args: map[string]any{"to": to}}}}}
		}
		if part.Text != "" {
			return genai.NewContentFromText("echo: "+part.Text, genai.RoleModel)
		}
	}
	return genai.NewContentFromText("nothing to answer", genai.RoleModel)
}

type emailArgs struct {
	To string `json:"to"`
}

type emailResult struct {
	Result string `json:"result"`
}

// sendEmail is the side effect, run only after the user confirmed it: one line per real run.
func sendEmail(_ agent.Context, args emailArgs) (emailResult, error) {
	file, err := os.OpenFile(os.Getenv(sideEffectFileEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return emailResult{}, err
	}
	defer file.Close()
	if _, err := fmt.Fprintf(file, "email to %s\n", args.To); err != nil {
		return emailResult{}, err
	}
	return emailResult{Result: "mail to " + args.To}, nil
}

// newRuntime is ADK's runner with the scripted llmagent over sessions.
func newRuntime(sessions session.Service) (*runner.Runner, error) {
	send, err := functiontool.New(functiontool.Config{Name: sendEmailTool,
		Description: "sends an email", RequireConfirmation: true}, sendEmail)
	if err != nil {
		return nil, err
	}
	root, err := llmagent.New(llmagent.Config{Name: "mailer", Description: "sends mail when asked",
		Instruction: "Send mail when asked.", Model: scriptedModel{}, Tools: []tool.Tool{send}})
	if err != nil {
		return nil, err
	}
	return runner.New(runner.Config{AppName: runtimeApp, Agent: root, SessionService: sessions})
}

// runTurn runs one user message through the runner and returns the events it yielded.
func runTurn(ctx context.Context, r *runner.Runner, sessionID string, message *genai.Content) ([]*session.Event, error) {
	var events []*session.Event
	for event, err := range r.Run(ctx, runtimeUser, sessionID, message, agent.RunConfig{}) {
		if err != nil {
			return events, err
		}
		events = append(events, event)
	}
	return events, nil
}

// pendingConfirmation is the id of the newest adk_request_confirmation call in events that no
// later event answers, "" when there is none.
func pendingConfirmation(events []*session.Event) string {
	answered := map[string]bool{}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Content == nil {
			continue
		}
		for _, part := range events[i].Content.Parts {
			if r := part.FunctionResponse; r != nil && r.Name == toolconfirmation.FunctionCallName {
				answered[r.ID] = true
			}
			if c := part.FunctionCall; c != nil && c.Name == toolconfirmation.FunctionCallName && !answered[c.ID] {
				return c.ID
			}
		}
	}
	return ""
}

// confirmation is the user's answer to the confirmation call id.
func confirmation(id string, confirmed bool) *genai.Content {
	answer, _ := json.Marshal(toolconfirmation.ToolConfirmation{Confirmed: confirmed})
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: toolconfirmation.FunctionCallName, ID: id, Response: map[string]any{"response": string(answer)}}}}}
}

// lastText is the text of the last event in events that has some.
func lastText(events []*session.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Content == nil {
			continue
		}
		for _, part := range events[i].Content.Parts {
			if part.Text != "" {
				return part.Text
			}
		}
	}
	return ""
}
