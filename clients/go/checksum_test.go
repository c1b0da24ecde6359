// Checksum v1 and idempotency key v1 against every vector in tests/vectors/checksum_v1.json,
// and a guard that every vector file there is either checked here or named as not for Go.

package checkpointd_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

const vectorsDir = "../../tests/vectors"

type toolVector struct {
	Kind      string `json:"kind"`
	CallID    string `json:"call_id"`
	ToolName  string `json:"tool_name"`
	Step      uint64 `json:"step"`
	OutputHex string `json:"output_hex"`
	IsError   bool   `json:"is_error"`
}

type checksumVector struct {
	Name        string            `json:"name"`
	RunID       string            `json:"run_id"`
	Step        json.Number       `json:"step"`
	ContentType string            `json:"content_type"`
	StateHex    string            `json:"state_hex"`
	Metadata    map[string]string `json:"metadata"`
	Messages    []struct {
		Role       string `json:"role"`
		ContentHex string `json:"content_hex"`
	} `json:"messages"`
	Tools           []toolVector `json:"tools"`
	MessageChainHex string       `json:"message_chain_hex"`
	ToolChainHex    string       `json:"tool_chain_hex"`
	Expected        string       `json:"expected"`
}

type checksumVectors struct {
	Version         int              `json:"version"`
	Vectors         []checksumVector `json:"vectors"`
	IdempotencyKeys []struct {
		Tenant   string `json:"tenant"`
		RunID    string `json:"run_id"`
		CallID   string `json:"call_id"`
		Expected string `json:"expected"`
	} `json:"idempotency_keys"`
}

func readChecksumVectors(t *testing.T) checksumVectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "checksum_v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors checksumVectors
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if vectors.Version != 1 || len(vectors.Vectors) == 0 || len(vectors.IdempotencyKeys) == 0 {
		t.Fatalf("unexpected vector file: version %d, %d vectors, %d keys",
			vectors.Version, len(vectors.Vectors), len(vectors.IdempotencyKeys))
	}
	return vectors
}

func unhex(t *testing.T, text string) []byte {
	t.Helper()
	b, err := hex.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestChecksumV1MatchesEveryVector(t *testing.T) {
	for _, v := range readChecksumVectors(t).Vectors {
		t.Run(v.Name, func(t *testing.T) {
			var messages checkpointd.MessageChain
			for _, m := range v.Messages {
				messages = messages.Push(m.Role, unhex(t, m.ContentHex))
			}
			var tools checkpointd.ToolChain
			for _, e := range v.Tools {
				if e.Kind == "intent" {
					tools = tools.PushIntent(checkpointd.ToolIntentEntry{CallID: e.CallID, ToolName: e.ToolName, Step: e.Step})
				} else {
					tools = tools.PushResult(checkpointd.ToolResultEntry{CallID: e.CallID, ToolName: e.ToolName,
						Step: e.Step, Output: unhex(t, e.OutputHex), IsError: e.IsError})
				}
			}
			if got := messages.Hex(); got != v.MessageChainHex {
				t.Errorf("message chain %s, want %s", got, v.MessageChainHex)
			}
			if got := tools.Hex(); got != v.ToolChainHex {
				t.Errorf("tool chain %s, want %s", got, v.ToolChainHex)
			}
			step, err := strconv.ParseUint(v.Step.String(), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			got := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: v.RunID, Step: step,
				ContentType: v.ContentType, State: unhex(t, v.StateHex), Metadata: v.Metadata}, messages, tools)
			if got != v.Expected {
				t.Errorf("checksum %s, want %s", got, v.Expected)
			}
		})
	}
}

func TestIdempotencyKeyV1MatchesEveryVector(t *testing.T) {
	for _, v := range readChecksumVectors(t).IdempotencyKeys {
		if got := checkpointd.IdempotencyKey(v.Tenant, v.RunID, v.CallID); got != v.Expected {
			t.Errorf("%s/%s/%s: key %s, want %s", v.Tenant, v.RunID, v.CallID, got, v.Expected)
		}
	}
}

func TestVectorsCoverResultsIntentsAndAStepPast2To53(t *testing.T) {
	vectors := readChecksumVectors(t)
	kinds := map[string]bool{}
	past53 := false
	for _, v := range vectors.Vectors {
		for _, e := range v.Tools {
			kinds[e.Kind] = true
		}
		if step, _ := strconv.ParseUint(v.Step.String(), 10, 64); step > 1<<53 {
			past53 = true
		}
	}
	if !kinds["intent"] || !(kinds[""] || kinds["result"]) || !past53 {
		t.Fatalf("the vectors lost coverage: kinds %v, a step past 2^53: %v", kinds, past53)
	}
}

// Every file in tests/vectors/ is either checked by this package or named here with why not,
// so a new vector file cannot go unnoticed.
func TestEveryVectorFileIsCheckedOrExplicitlyOutOfScope(t *testing.T) {
	checked := []string{"checksum_v1.json"}
	outOfScope := map[string]string{
		"langgraph_v1.json": "LangGraph's thread/namespace mapping (docs/langgraph-mapping.md): no Go LangGraph adapter",
	}
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		if !slices.Contains(checked, name) && outOfScope[name] == "" {
			t.Errorf("vector file %s is neither checked by the Go client nor named out of scope", name)
		}
	}
}

func TestMetadataKeysSortByUTF8BytesNotUTF16Units(t *testing.T) {
	// U+FF61 is EF BD A1 in UTF-8 and U+1F600 is F0 9F 98 80: by bytes U+FF61 comes first.
	content := func(m map[string]string) string {
		return checkpointd.Checksum(checkpointd.CheckpointContent{RunID: "r", Step: 1, Metadata: m},
			checkpointd.MessageChain{}, checkpointd.ToolChain{})
	}
	a := content(map[string]string{"\uFF61": "a", "\U0001F600": "b"})
	b := content(map[string]string{"\U0001F600": "b", "\uFF61": "a"})
	if a != b {
		t.Fatal("the checksum depends on map order")
	}
}
