// The programs the agent and continue steps run, as separate processes: this module's (built
// once per test binary with `go build`), and the Python and TypeScript clients' as their own
// runners invoke them. Every process of a run shares one folder (tools.log, effects.log,
// hanging), whatever its language; a side-effect agent told to hang after its email is
// SIGKILLed for real.
package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Programs knows where every language's programs are.
type Programs struct {
	// Root is the repository's root.
	Root string
	// Bin holds this module's programs: crash-and-resume, crash-agent, continue-run.
	Bin string
	// Python runs the Python client's programs ($CHECKPOINTD_PYTHON, default python3).
	Python string
}

// BuildGoPrograms builds this module's programs into bin.
func BuildGoPrograms(ctx context.Context, moduleRoot, bin string) error {
	for name, pkg := range map[string]string{"crash-and-resume": "./examples/crash-and-resume",
		"crash-agent": "./cmd/crash-agent", "continue-run": "./cmd/continue-run"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, name), pkg)
		cmd.Dir = moduleRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w: %s", pkg, err, out)
		}
	}
	return nil
}

// typescript is the TypeScript package's compiled test programs (npm ci, npm test builds them).
func (p *Programs) typescript(program string) (string, error) {
	path := filepath.Join(p.Root, "clients", "typescript", "dist-test", "test", program+".js")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no %s: in clients/typescript run npm ci, npm run build and npx tsc -p tsconfig.test.json", path)
	}
	return path, nil
}

// Continuation is the argv of a language's continuation program.
func (p *Programs) Continuation(language, baseURL, runID string) ([]string, error) {
	switch language {
	case "python":
		return []string{p.Python, filepath.Join(p.Root, "clients", "python", "tests", "fixtures", "continue_run.py"), baseURL, runID}, nil
	case "typescript":
		script, err := p.typescript("fixtures/continue-run")
		return []string{"node", script, baseURL, runID}, err
	case "go":
		return []string{filepath.Join(p.Bin, "continue-run"), baseURL, runID}, nil
	}
	return nil, fmt.Errorf("no continuation program in %q", language)
}

// sideEffectArgv is a language's side-effect agent: TARGET RUN_ID DIR.
func (p *Programs) sideEffectArgv(language, baseURL, runID, dir string) ([]string, error) {
	switch language {
	case "python":
		return []string{p.Python, filepath.Join(p.Root, "clients", "python", "tests", "crash_agent.py"),
			strings.TrimPrefix(baseURL, "http://"), runID, dir}, nil
	case "typescript":
		agent, err := p.typescript("recovery-crash-agent")
		return []string{"node", agent, baseURL, runID, dir}, err
	case "go":
		return []string{filepath.Join(p.Bin, "crash-agent"), baseURL, runID, dir}, nil
	}
	return nil, fmt.Errorf("no side-effect agent in %q", language)
}

var (
	recoveredLine = regexp.MustCompile(`(?m)^recoveredFromStep=(\d+)$`)
	lookupsLine   = regexp.MustCompile(`(?m)^lookup calls: (\d+) for \d+ steps \((\d+) replayed`)
)

// ReferenceExample runs examples/crash-and-resume as a user does and reports what it printed.
func (p *Programs) ReferenceExample(addr, runID string) (map[string]any, error) {
	cmd := exec.Command(filepath.Join(p.Bin, "crash-and-resume"), "--server", addr, "--run-id", runID)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runWithin(cmd, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("the reference example: %w: %s", err, stderr.String())
	}
	recovered, calls := recoveredLine.FindStringSubmatch(stdout.String()), lookupsLine.FindStringSubmatch(stdout.String())
	if recovered == nil || calls == nil {
		return nil, fmt.Errorf("unexpected output of the reference example:\n%s", stdout.String())
	}
	return map[string]any{"recoveredFromStep": atoi(recovered[1]), "toolCalls": atoi(calls[1]), "toolsReplayed": atoi(calls[2])}, nil
}

// SideEffectAgent runs a language's side-effect agent on a run, its logs in work/RUN_ID. With
// kill it is SIGKILLed once step 5's email went out, before its result is journalled, and
// reports nothing; otherwise it runs to the end and reports the recovery, the result, the real
// lookups per step and the emails sent.
func (p *Programs) SideEffectAgent(language, baseURL, runID, work, kill string) (map[string]any, error) {
	dir := filepath.Join(work, runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	argv, err := p.sideEffectArgv(language, baseURL, runID, dir)
	if err != nil {
		return nil, err
	}
	if kill != "" {
		if kill != "after-side-effect" {
			return nil, fmt.Errorf("unknown kill point %s", kill)
		}
		return nil, killAfterEmail(append(argv, "--hang-after-email"), dir)
	}
	result, err := runForAnswer(argv)
	if err != nil {
		return nil, fmt.Errorf("the %s side-effect agent: %w", language, err)
	}
	recovered, ok := result["recoveredFromStep"]
	if !ok {
		recovered = result["recovered_from_step"] // Python prints snake_case
	}
	lookups := lines(filepath.Join(dir, "tools.log"))
	perStep := make([]any, 8)
	for step := range perStep {
		count := 0
		for _, line := range lookups {
			if line == fmt.Sprintf("lookup@%d", step+1) {
				count++
			}
		}
		perStep[step] = count
	}
	return map[string]any{"recoveredFromStep": recovered, "result": result["result"], "lookupsPerStep": perStep,
		"effects": len(lines(filepath.Join(dir, "effects.log")))}, nil
}

// killAfterEmail starts the agent, waits for DIR/hanging (the email went out), then SIGKILLs it.
func killAfterEmail(argv []string, dir string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for hanging := false; !hanging; {
		select {
		case err := <-exited:
			return fmt.Errorf("the agent exited (%v) before step 5's email: %s", err, stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("step 5's email was never sent: %s", stderr.String())
		case <-time.After(20 * time.Millisecond):
			_, err := os.Stat(filepath.Join(dir, "hanging"))
			hanging = err == nil
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	err := <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return fmt.Errorf("the agent was not killed by SIGKILL (%v): %s", err, stderr.String())
	}
	return nil
}

// runForAnswer runs a program to its end and decodes the last line it printed.
func runForAnswer(argv []string) (map[string]any, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runWithin(cmd, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("%v: %w: %s", argv, err, stderr.String())
	}
	printed := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	value, err := decodeJSON([]byte(printed[len(printed)-1]))
	answer, ok := value.(map[string]any)
	if err != nil || !ok {
		return nil, fmt.Errorf("%v printed no JSON object last: %s", argv, stdout.String())
	}
	return answer, nil
}

// runWithin runs cmd, killing it past the timeout.
func runWithin(cmd *exec.Cmd, timeout time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}

func lines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

func atoi(text string) int {
	n, _ := strconv.Atoi(text)
	return n
}
