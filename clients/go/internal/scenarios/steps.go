// The steps other than RPCs: damage to the store (straight in the server's database), the
// operator CLI, another language's continuation program, and the agent programs.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

var plainID = regexp.MustCompile(`^[\w/-]+$`)

// corrupt flips the first byte of a checkpoint's stored state, or damages a journalled
// result's output, as a bad disk would: nothing goes through checkpointd.
func (r *Runner) corrupt(step Step) error {
	target := step.Corrupt
	if !plainID.MatchString(target.RunID + target.CallID) {
		return fmt.Errorf("corrupt takes plain ids, got %q %q", target.RunID, target.CallID)
	}
	sqlite := r.Server.Backend == testserver.SQLite
	var sql string
	switch {
	case target.Step != nil && sqlite:
		sql = fmt.Sprintf("UPDATE checkpoints SET state = CAST(CASE WHEN length(state) = 0 THEN X'00' ELSE "+
			"(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(state, 2) END AS BLOB) "+
			"WHERE run_id = '%s' AND step = %d", target.RunID, *target.Step)
	case target.Step != nil:
		sql = fmt.Sprintf("UPDATE checkpoints SET state = CASE WHEN length(state) = 0 THEN '\\x00'::bytea "+
			"ELSE set_byte(state, 0, (get_byte(state, 0) + 1) %% 256) END WHERE run_id = '%s' AND step = %d",
			target.RunID, *target.Step)
	case sqlite:
		sql = fmt.Sprintf("UPDATE tool_results SET output = CAST(X'00' || substr(output, 2) AS BLOB) "+
			"WHERE run_id = '%s' AND call_id = '%s' AND intent = 0", target.RunID, target.CallID)
	default:
		sql = fmt.Sprintf("UPDATE tool_results SET output = set_byte(output, 0, 0) "+
			"WHERE run_id = '%s' AND call_id = '%s' AND NOT intent", target.RunID, target.CallID)
	}
	var cmd *exec.Cmd
	if sqlite {
		cmd = exec.Command("sqlite3", "-cmd", ".timeout 10000", strings.TrimPrefix(r.Server.Database, "sqlite://"), sql)
	} else {
		cmd = exec.Command("psql", r.Server.Database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", cmd.Args[0], err, out)
	}
	return nil
}

// cli runs `checkpointd ARGS --server URL` with no CHECKPOINTD_* variable passed on and checks
// its exit status and that each expected text occurs in its output.
func (r *Runner) cli(step Step) error {
	substituted, err := r.substitute(toAny(step.CLI))
	if err != nil {
		return err
	}
	var args []string
	for _, arg := range substituted.([]any) {
		args = append(args, scalar(arg))
	}
	cmd := exec.Command(r.Binary, append(args, "--server", "http://"+r.Server.Addr())...)
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, "CHECKPOINTD_") {
			cmd.Env = append(cmd.Env, entry)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exit := 0
	if err := runWithin(cmd, time.Minute); err != nil {
		var exited *exec.ExitError
		if !errors.As(err, &exited) {
			return err
		}
		exit = exited.ExitCode()
	}
	expect, err := r.expectation(step.Expect, map[string]any{"exit": 0})
	if err != nil {
		return err
	}
	if want := expect["exit"]; want != nil && scalar(want) != fmt.Sprint(exit) || want == nil && exit != 0 {
		return fmt.Errorf("exit %d, want %v: %s", exit, want, stderr.String())
	}
	for stream, output := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		texts, _ := expect[stream].([]any)
		for _, text := range texts {
			if !strings.Contains(output, scalar(text)) {
				return fmt.Errorf("%s lacks %q: %s", stream, scalar(text), output)
			}
		}
	}
	return nil
}

// continueRun hands the run to the other language's continuation program.
func (r *Runner) continueRun(step Step) error {
	argv, err := r.Programs.Continuation(r.Other, "http://"+r.Server.Addr(), step.Continue.RunID)
	if err != nil {
		return err
	}
	answer, err := runForAnswer(argv)
	if err != nil {
		return fmt.Errorf("the %s continuation: %w", r.Other, err)
	}
	if answer["language"] != r.Other {
		return fmt.Errorf("the continuation reports language %v, not %s", answer["language"], r.Other)
	}
	expect, err := r.expectation(step.Expect, map[string]any{})
	if err != nil {
		return err
	}
	return match(expect, answer, "continue")
}

// agent runs a program on a client package's recovery loop: this module's, or with
// "by": "other" the other language's, so one run crosses languages.
func (r *Runner) agent(step Step) error {
	language := "go"
	if step.By == "other" {
		language = r.Other
	}
	baseURL := "http://" + r.Server.Addr()
	var answer map[string]any
	var err error
	switch step.Agent {
	case "reference-example":
		if language != "go" || step.Kill != "" {
			return errors.New("the reference example runs as it is")
		}
		answer, err = r.Programs.ReferenceExample(r.Server.Addr(), step.RunID)
	case "side-effect-agent":
		answer, err = r.Programs.SideEffectAgent(language, baseURL, step.RunID, r.Work, step.Kill)
	default:
		err = fmt.Errorf("no agent program named %s", step.Agent)
	}
	if err != nil {
		return err
	}
	if answer == nil {
		if len(step.Expect) > 0 {
			return errors.New("a killed agent reports nothing to expect")
		}
		return nil
	}
	expect, err := r.expectation(step.Expect, map[string]any{})
	if err != nil {
		return err
	}
	return match(expect, toAny(answer), step.Agent)
}

// toAny is a value as decodeJSON would give it, for matching.
func toAny(value any) any {
	out, err := decodeJSON([]byte(show(value)))
	if err != nil {
		return value
	}
	return out
}
