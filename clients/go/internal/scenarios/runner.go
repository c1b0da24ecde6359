// Package scenarios runs the shared client scenarios (tests/scenarios/*.json; the format is in
// its README.md) through this module's client: each step's RPC goes through the typed service
// clients of a checkpointd.Client (its interceptors, typed errors, checksum v1 and
// verification are what is under test), and the agent steps run this module's programs on the
// recovery loop, or the Python and TypeScript clients' for a run that crosses languages.
package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// defaultTenant is the tenant a call without a credential acts in.
const defaultTenant = "default"

// Step is one step; exactly one of Call, Corrupt, CLI, Continue and Agent is set.
type Step struct {
	Call     string            `json:"call"`
	Request  json.RawMessage   `json:"request"`
	As       string            `json:"as"`
	Token    *string           `json:"token"`
	Tenant   *string           `json:"tenant"`
	Checksum string            `json:"checksum"`
	Verify   bool              `json:"verify"`
	Bind     map[string]string `json:"bind"`
	Corrupt  *struct {
		RunID  string `json:"runId"`
		Step   *int64 `json:"step"`
		CallID string `json:"callId"`
	} `json:"corrupt"`
	CLI      []string `json:"cli"`
	Continue *struct {
		RunID string `json:"runId"`
	} `json:"continue"`
	Agent  string          `json:"agent"`
	RunID  string          `json:"runId"`
	Kill   string          `json:"kill"`
	By     string          `json:"by"`
	Expect json.RawMessage `json:"expect"`
}

// Scenario is one file of tests/scenarios.
type Scenario struct {
	Summary  string   `json:"summary"`
	Requires []string `json:"requires"`
	Server   struct {
		Args []string `json:"args"`
		Auth string   `json:"auth"`
		Keys map[string]struct {
			Tenant string `json:"tenant"`
			Role   string `json:"role"`
		} `json:"keys"`
	} `json:"server"`
	Steps []Step `json:"steps"`
}

// CrossesLanguages says whether a step hands the run to another client package.
func (s *Scenario) CrossesLanguages() bool {
	for _, step := range s.Steps {
		if step.Continue != nil || step.By == "other" {
			return true
		}
	}
	return false
}

// RepoRoot is the repository's root: the nearest folder up holding tests/scenarios.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tests", "scenarios")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no tests/scenarios above the working directory")
		}
		dir = parent
	}
}

// Load reads every scenario, by its file's stem.
func Load(root string) (map[string]*Scenario, []string, error) {
	paths, err := filepath.Glob(filepath.Join(root, "tests", "scenarios", "*.json"))
	if err != nil {
		return nil, nil, err
	}
	scenarios := map[string]*Scenario{}
	var names []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		var scenario Scenario
		if err := json.Unmarshal(data, &scenario); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		scenarios[name] = &scenario
		names = append(names, name)
	}
	sort.Strings(names)
	return scenarios, names, nil
}

// Key is an API key made for a scenario: its token and tenant.
type Key struct{ Token, Tenant string }

// Runner runs one scenario's steps against one server.
type Runner struct {
	Server *testserver.Server
	// Binary is the checkpointd binary, for cli steps.
	Binary string
	Keys   map[string]Key
	// Work is a scratch folder for the agent programs' logs.
	Work string
	// Other is the other client package a continue or "by": "other" step hands the run to:
	// "python" or "typescript".
	Other    string
	Programs *Programs

	vars    map[string]any
	views   map[string]*runView
	clients map[string]*checkpointd.Client
}

// Run runs the steps in order and fails on the first whose outcome differs.
func (r *Runner) Run(ctx context.Context, scenario *Scenario) error {
	r.vars, r.views, r.clients = map[string]any{}, map[string]*runView{}, map[string]*checkpointd.Client{}
	defer func() {
		for _, client := range r.clients {
			_ = client.Close()
		}
	}()
	for index, step := range scenario.Steps {
		var err error
		kind := ""
		switch {
		case step.Call != "":
			kind, err = "call "+step.Call, r.call(ctx, step)
		case step.Corrupt != nil:
			kind, err = "corrupt", r.corrupt(step)
		case step.CLI != nil:
			kind, err = "cli", r.cli(step)
		case step.Continue != nil:
			kind, err = "continue", r.continueRun(step)
		case step.Agent != "":
			kind, err = "agent "+step.Agent, r.agent(step)
		default:
			err = errors.New("a step of no kind this runner knows")
		}
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", index, kind, err)
		}
	}
	return nil
}

var variable = regexp.MustCompile(`\$\{([^}]+)\}`)

// substitute replaces ${name} by a bound value (kept whole when it is the entire string) and
// ${idempotencyKey:RUN:CALL} by key v1 of that call in the default tenant.
func (r *Runner) substitute(value any) (any, error) {
	switch v := value.(type) {
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			var err error
			if out[i], err = r.substitute(item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			var err error
			if out[key], err = r.substitute(item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case string:
		if whole := variable.FindStringSubmatch(v); whole != nil && whole[0] == v {
			return r.variable(whole[1])
		}
		var failed error
		text := variable.ReplaceAllStringFunc(v, func(found string) string {
			bound, err := r.variable(found[2 : len(found)-1])
			if err != nil {
				failed = err
			}
			return scalar(bound)
		})
		return text, failed
	}
	return value, nil
}

func (r *Runner) variable(name string) (any, error) {
	if rest, ok := strings.CutPrefix(name, "idempotencyKey:"); ok {
		runID, callID, _ := strings.Cut(rest, ":")
		return checkpointd.IdempotencyKey(defaultTenant, runID, callID), nil
	}
	value, ok := r.vars[name]
	if !ok {
		return nil, fmt.Errorf("${%s} is not bound yet", name)
	}
	return value, nil
}

// client is the connection of a step's credential and tenant, made once.
func (r *Runner) client(step Step) (*checkpointd.Client, error) {
	var token, tenant string
	if step.As != "" {
		key, ok := r.Keys[step.As]
		if !ok {
			return nil, fmt.Errorf("no key named %s", step.As)
		}
		token, tenant = key.Token, key.Tenant
	}
	if step.Token != nil {
		token = *step.Token
	}
	if step.Tenant != nil {
		tenant = *step.Tenant
	}
	id := token + "\n" + tenant
	if client, ok := r.clients[id]; ok {
		return client, nil
	}
	client, err := checkpointd.Dial(r.Server.Addr(), checkpointd.WithToken(token), checkpointd.WithTenant(tenant))
	if err != nil {
		return nil, err
	}
	r.clients[id] = client
	return client, nil
}

// method is an RPC by its proto name, in whichever service has it (their names are disjoint),
// and the typed client that serves it.
func method(client *checkpointd.Client, name string) (protoreflect.MethodDescriptor, reflect.Value, error) {
	services := []struct {
		file   protoreflect.FileDescriptor
		name   protoreflect.Name
		client any
	}{
		{checkpointv1.File_checkpoint_v1_checkpoint_proto, "CheckpointService", client.Checkpoints},
		{checkpointv1.File_checkpoint_v1_task_proto, "TaskService", client.Tasks},
	}
	for _, service := range services {
		if found := service.file.Services().ByName(service.name).Methods().ByName(protoreflect.Name(name)); found != nil {
			return found, reflect.ValueOf(service.client).MethodByName(name), nil
		}
	}
	return nil, reflect.Value{}, fmt.Errorf("no RPC named %s", name)
}

// call runs one RPC through the package's typed client and checks its outcome.
func (r *Runner) call(ctx context.Context, step Step) error {
	client, err := r.client(step)
	if err != nil {
		return err
	}
	descriptor, invoke, err := method(client, step.Call)
	if err != nil {
		return err
	}
	messageType, err := protoregistry.GlobalTypes.FindMessageByName(descriptor.Input().FullName())
	if err != nil {
		return err
	}
	request := messageType.New().Interface()
	if err := r.decodeInto(step.Request, request); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if step.Checksum != "" {
		if err := r.withChecksum(request.(*checkpointv1.SaveRequest), step.Checksum); err != nil {
			return err
		}
	}
	callCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out := invoke.Call([]reflect.Value{reflect.ValueOf(callCtx), reflect.ValueOf(request)})
	expect, err := r.expectation(step.Expect, map[string]any{"ok": map[string]any{}})
	if err != nil {
		return err
	}
	if callErr, _ := out[1].Interface().(error); callErr != nil {
		return r.refused(callErr, expect)
	}
	if _, ok := expect["ok"]; !ok {
		return fmt.Errorf("expected %s, the call succeeded", show(expect["error"]))
	}
	response := out[0].Interface().(proto.Message)
	r.observe(request, response)
	if step.Verify {
		if err := r.verify(response); err != nil {
			return err
		}
	}
	answerJSON, err := protojson.Marshal(response)
	if err != nil {
		return err
	}
	answer, err := decodeJSON(answerJSON)
	if err != nil {
		return err
	}
	if err := match(expect["ok"], answer, step.Call); err != nil {
		return err
	}
	for name, path := range step.Bind {
		value, err := lookup(answer, path)
		if err != nil {
			return err
		}
		r.vars[name] = value
	}
	return nil
}

// decodeInto reads a request of the scenario's JSON (bytes shorthand expanded, variables
// substituted) into message.
func (r *Runner) decodeInto(raw json.RawMessage, message proto.Message) error {
	if len(raw) == 0 {
		return nil
	}
	value, err := decodeJSON(raw)
	if err != nil {
		return err
	}
	if value, err = r.substitute(expandBytes(value)); err != nil {
		return err
	}
	body, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(body, message)
}

// expectation is a step's expect, expanded and substituted, or fallback when absent.
func (r *Runner) expectation(raw json.RawMessage, fallback map[string]any) (map[string]any, error) {
	if len(raw) == 0 {
		return fallback, nil
	}
	value, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	if value, err = r.substitute(expandBytes(value)); err != nil {
		return nil, err
	}
	expect, ok := value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expect is not an object: %s", raw)
	}
	return expect, nil
}

// refused checks a refusal against {"error": {"code", "reason", "metadata"}}.
func (r *Runner) refused(err error, expect map[string]any) error {
	var typed *checkpointd.Error
	if !errors.As(err, &typed) {
		return fmt.Errorf("not a *checkpointd.Error: %w", err)
	}
	want, ok := expect["error"].(map[string]any)
	if !ok {
		return fmt.Errorf("expected success, got %w", err)
	}
	if code := codeName(typed.Code); code != want["code"] {
		return fmt.Errorf("expected %v, got %w", want["code"], err)
	}
	if want["reason"] != nil && string(typed.Reason) != want["reason"] {
		return fmt.Errorf("expected reason %v, got %w", want["reason"], err)
	}
	metadata, _ := want["metadata"].(map[string]any)
	for key, value := range metadata {
		if typed.Metadata[key] != scalar(value) {
			return fmt.Errorf("metadata %s: expected %v in %v (%w)", key, value, typed.Metadata, err)
		}
	}
	return nil
}
