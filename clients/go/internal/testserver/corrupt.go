// Damage to a server's stored checkpoints, straight in its database as a bad disk would do it:
// nothing goes through checkpointd, so its verification on read is what finds it.

package testserver

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// CorruptState flips the first byte of the stored state of runID's checkpoint at step.
func (s *Server) CorruptState(t testing.TB, runID string, step int64) {
	t.Helper()
	quoted := strings.ReplaceAll(runID, "'", "''")
	var cmd *exec.Cmd
	if s.Backend == SQLite {
		sql := fmt.Sprintf("UPDATE checkpoints SET state = CAST((CASE WHEN substr(state, 1, 1) = X'00' "+
			"THEN X'01' ELSE X'00' END) || substr(state, 2) AS BLOB) WHERE run_id = '%s' AND step = %d", quoted, step)
		cmd = exec.Command("sqlite3", "-cmd", ".timeout 10000", strings.TrimPrefix(s.Database, "sqlite://"), sql)
	} else {
		sql := fmt.Sprintf("UPDATE checkpoints SET state = set_byte(state, 0, (get_byte(state, 0) + 1) %% 256) "+
			"WHERE run_id = '%s' AND step = %d", quoted, step)
		cmd = exec.Command("psql", s.Database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("corrupt %s step %d: %v: %s", runID, step, err, out)
	}
}
