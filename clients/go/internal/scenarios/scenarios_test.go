package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// otherLanguages are the client packages a run crosses into: a scenario with a continue or
// "by": "other" step runs once with each.
var otherLanguages = []string{"python", "typescript"}

// has is what this module has beyond the RPC client, of what a scenario may require.
var has = map[string]bool{"recovery-loop": true}

func TestTheScenariosDirectoryHoldsTheSuite(t *testing.T) {
	_, scenarios, names := loadSuite(t)
	for _, name := range []string{"checksum", "corruption", "corruption-every-reader", "replay-mismatch",
		"all-corrupt", "intents", "approval-cli",
		"cross-language", "cross-language-recovery", "reference-example", "sigkill"} {
		if scenarios[name] == nil {
			t.Errorf("no tests/scenarios/%s.json", name)
		}
	}
	for _, name := range names {
		if scenarios[name].Summary == "" || len(scenarios[name].Steps) == 0 {
			t.Errorf("%s has no summary or no steps", name)
		}
	}
}

func TestScenarios(t *testing.T) {
	root, scenarios, names := loadSuite(t)
	programs := buildPrograms(t, root)
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			for _, name := range names {
				scenario := scenarios[name]
				for _, need := range scenario.Requires {
					if !has[need] {
						t.Fatalf("%s needs %s, which this module lacks", name, need)
					}
				}
				others := []string{""}
				if scenario.CrossesLanguages() {
					others = otherLanguages
				}
				for _, other := range others {
					label := name
					if other != "" {
						label += "/with-" + other
					}
					t.Run(label, func(t *testing.T) {
						runScenario(t, backend, scenario, other, programs)
					})
				}
			}
		})
	}
}

func runScenario(t *testing.T, backend testserver.Backend, scenario *Scenario, other string, programs *Programs) {
	args := append([]string(nil), scenario.Server.Args...)
	if scenario.Server.Auth != "" {
		args = append(args, "--auth", scenario.Server.Auth)
	}
	server := testserver.Start(t, testserver.Options{Backend: backend, Args: args})
	keys := map[string]Key{}
	for name, key := range scenario.Server.Keys {
		keys[name] = Key{Token: server.CreateKey(t, key.Tenant, key.Role), Tenant: key.Tenant}
	}
	runner := &Runner{Server: server, Binary: testserver.Binary(t), Keys: keys, Work: t.TempDir(), Other: other, Programs: programs}
	if err := runner.Run(context.Background(), scenario); err != nil {
		t.Fatalf("%s: %v\nserver output tail:\n%s", scenario.Summary, err, tail(server.Output(), 4000))
	}
}

// loadSuite is the repository's root and its scenarios.
func loadSuite(t *testing.T) (string, map[string]*Scenario, []string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	scenarios, names, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, scenarios, names
}

// buildPrograms builds this module's programs for the test.
func buildPrograms(t *testing.T, root string) *Programs {
	t.Helper()
	moduleRoot, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	programs := &Programs{Root: root, Bin: t.TempDir(), Python: os.Getenv("CHECKPOINTD_PYTHON")}
	if programs.Python == "" {
		programs.Python = "python3"
	}
	if err := BuildGoPrograms(context.Background(), moduleRoot, programs.Bin); err != nil {
		t.Fatal(err)
	}
	return programs
}

func tail(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return text[len(text)-n:]
}
