// The reason list is kept equal to the two places that define it: the "Errors" section of
// proto/checkpoint/v1/checkpoint.proto and the reason column of docs/errors.md.

package checkpointd_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func knownReasons() []string {
	var out []string
	for _, r := range checkpointd.KnownReasons {
		out = append(out, string(r))
	}
	return out
}

func TestEveryReasonInTheProtoHasASentinel(t *testing.T) {
	raw, err := os.ReadFile("../../proto/checkpoint/v1/checkpoint.proto")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "// # Errors")
	end := strings.Index(text, "// New reasons may be added")
	if start < 0 || end < start {
		t.Fatal("checkpoint.proto's Errors section moved: update this test")
	}
	row := regexp.MustCompile(`(?m)^//   ([A-Z][A-Z_]+)\s+[A-Z_]+\s`)
	found := row.FindAllStringSubmatch(text[start:end], -1)
	if len(found) < 20 {
		t.Fatalf("read only %d reasons from the proto", len(found))
	}
	for _, m := range found {
		if !slices.Contains(knownReasons(), m[1]) {
			t.Errorf("the proto documents reason %s, which reasons.go lacks", m[1])
		}
	}
}

func TestEveryReasonInDocsErrorsHasASentinel(t *testing.T) {
	raw, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	// Table rows end with "| `CODE` | `REASON` |".
	row := regexp.MustCompile("(?m)\\| `[A-Z_]+` \\| `([A-Z][A-Z_]+)` \\|\\s*$")
	found := row.FindAllStringSubmatch(string(raw), -1)
	if len(found) < 20 {
		t.Fatalf("read only %d reasons from docs/errors.md", len(found))
	}
	for _, m := range found {
		if !slices.Contains(knownReasons(), m[1]) {
			t.Errorf("docs/errors.md lists reason %s, which reasons.go lacks", m[1])
		}
	}
}
