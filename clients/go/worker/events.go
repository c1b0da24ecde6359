// The worker's progress lines, "event KIND key=value ...", the same lines the Python and
// TypeScript workers print, for operators and for tests that watch a worker process.
package worker

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

type eventWriter struct {
	mu  sync.Mutex
	out io.Writer
}

// write prints one line; pairs alternate key and value. Concurrent tasks never interleave a line.
func (e *eventWriter) write(kind string, pairs ...any) {
	var line strings.Builder
	line.WriteString("event " + kind)
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&line, " %v=%v", pairs[i], pairs[i+1])
	}
	line.WriteString("\n")
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = io.WriteString(e.out, line.String())
}
