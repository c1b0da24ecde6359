package scenarios

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestMatchHoldsObjectsBySubsetArraysWholeAndScalarsByText(t *testing.T) {
	decode := func(text string) any {
		value, err := decodeJSON([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
	holds := [][2]string{
		{`{"step": 3}`, `{"step": "3", "other": 1}`},
		{`{"skippedSteps": [], "alreadyExisted": false, "kind": "X_UNSPECIFIED"}`, `{}`},
		{`{"list": [{"a": 1}]}`, `{"list": [{"a": "1", "b": 2}]}`},
	}
	for _, pair := range holds {
		if err := match(decode(pair[0]), decode(pair[1]), "answer"); err != nil {
			t.Errorf("%s should hold in %s: %v", pair[0], pair[1], err)
		}
	}
	differs := [][2]string{
		{`{"step": 3}`, `{"step": "4"}`},
		{`{"step": 3}`, `{}`},
		{`{"list": [1]}`, `{"list": [1, 2]}`},
		{`{"o": {"a": true}}`, `{"o": {"a": false}}`},
	}
	for _, pair := range differs {
		if err := match(decode(pair[0]), decode(pair[1]), "answer"); err == nil {
			t.Errorf("%s should not hold in %s", pair[0], pair[1])
		}
	}
}

// TestARunnerFailsAStepWhoseOutcomeDiffers: an expectation the server does not meet fails the
// scenario at that step, so a passing scenario means what it says.
func TestARunnerFailsAStepWhoseOutcomeDiffers(t *testing.T) {
	server := testserver.Start(t, testserver.Options{Backend: testserver.SQLite})
	for _, steps := range []string{
		`[{"call": "GetRun", "request": {"runId": "nobody"}}]`,
		`[{"call": "GetRun", "request": {"runId": "nobody"}, "expect": {"error": {"code": "NOT_FOUND", "reason": "CHECKPOINT_NOT_FOUND"}}}]`,
		`[{"call": "Save", "request": {"runId": "r", "step": 1}, "expect": {"ok": {"alreadyExisted": true}}}]`,
		`[{"call": "Save", "request": {"runId": "r", "step": 1}, "checksum": "wrong"}]`,
	} {
		var scenario Scenario
		if err := json.Unmarshal([]byte(`{"summary": "s", "steps": `+steps+`}`), &scenario); err != nil {
			t.Fatal(err)
		}
		runner := &Runner{Server: server, Binary: testserver.Binary(t), Work: t.TempDir()}
		err := runner.Run(context.Background(), &scenario)
		if err == nil || !strings.Contains(err.Error(), "step 0") {
			t.Errorf("%s passed (%v)", steps, err)
		}
	}
}

// TestTheGoContinuationProgramContinuesACrossLanguageRun runs the cross-language scenarios with
// this module's own programs (cmd/continue-run, cmd/crash-agent) as "the other language", the
// way the Python and TypeScript runners would call them.
func TestTheGoContinuationProgramContinuesACrossLanguageRun(t *testing.T) {
	root, scenarios, _ := loadSuite(t)
	programs := buildPrograms(t, root)
	for _, name := range []string{"cross-language", "cross-language-recovery"} {
		t.Run(name, func(t *testing.T) {
			runScenario(t, testserver.SQLite, scenarios[name], "go", programs)
		})
	}
}
