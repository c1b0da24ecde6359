// The README's Go snippets compile: every ```go block of README.md, and of the repository's
// top-level README.md, is an excerpt (its lines, trimmed, in a row) of a Go file of this folder
// or its nested modules, which go vet and go test compile (the example_test.go files and
// examples/). A snippet that drifts from the code fails here instead of in a user's editor.

package checkpointd_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadmeGoSnippetsAreExcerptsOfCompiledFiles(t *testing.T) {
	for _, readme := range []string{"README.md", filepath.Join("..", "..", "README.md")} {
		t.Run(readme, func(t *testing.T) { checkReadmeGoSnippets(t, readme) })
	}
}

func checkReadmeGoSnippets(t *testing.T, path string) {
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sources [][]string
	err = filepath.WalkDir(".", func(path string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasPrefix(path, "gen/") {
			return err
		}
		text, err := os.ReadFile(path)
		sources = append(sources, trimmedLines(string(text)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```go blocks", path)
	}
	for _, block := range blocks {
		if !excerptOfAny(trimmedLines(block), sources) {
			t.Errorf("this %s block is not an excerpt of any compiled Go file here:\n%s", path, block)
		}
	}
}

// goBlocks is the text of every ```go fenced block.
func goBlocks(markdown string) []string {
	var blocks []string
	var current []string
	inside := false
	for _, line := range strings.Split(markdown, "\n") {
		switch {
		case !inside && strings.TrimSpace(line) == "```go":
			inside, current = true, nil
		case inside && strings.TrimSpace(line) == "```":
			inside = false
			blocks = append(blocks, strings.Join(current, "\n"))
		case inside:
			current = append(current, line)
		}
	}
	return blocks
}

// trimmedLines are the non-empty lines of text without their indentation.
func trimmedLines(text string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

func excerptOfAny(block []string, sources [][]string) bool {
	for _, source := range sources {
		for start := 0; start+len(block) <= len(source); start++ {
			if equalLines(source[start:start+len(block)], block) {
				return true
			}
		}
	}
	return false
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
