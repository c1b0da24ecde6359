// Package agentfiles is what the test agents (cmd/crash-agent, internal/workerfixture) write
// their tool and side-effect logs with, one line per execution, for the tests to count.
package agentfiles

import (
	"fmt"
	"os"
)

// AppendLine appends line and a newline to the file at path, creating it.
func AppendLine(path, line string) error {
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = fmt.Fprintln(file, line)
	return err
}
