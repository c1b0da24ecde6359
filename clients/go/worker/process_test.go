// The worker as real processes against a real server on SQLite and Postgres: a task run to its
// end, a SIGKILLed worker's task reclaimed with no tool re-run, a frozen worker (SIGSTOP) that
// lost its lease writing nothing when thawed, an operator's cancel, and the SIGTERM drain. The
// outcomes (fatal, transient, dead, approval, in doubt, concurrency, mTLS) are in outcomes_test.go.
package worker_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// scenario is one worker test, run on every backend with a fixture of its own.
type scenario struct {
	name string
	run  func(t *testing.T, f *fixture)
}

func TestWorkerProcesses(t *testing.T) {
	all := slices.Concat(processScenarios, outcomeScenarios)
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			server := testserver.Start(t, testserver.Options{Backend: backend})
			for _, s := range all {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					s.run(t, newFixture(t, server, s.name))
				})
			}
		})
	}
}

func resultOf(t *testing.T, task *checkpointv1.Task) map[string]any {
	t.Helper()
	var result map[string]any
	if err := json.Unmarshal(task.GetResult(), &result); err != nil {
		t.Fatalf("task result %q: %v", task.GetResult(), err)
	}
	return result
}

func mustMatch(t *testing.T, pattern, out string) {
	t.Helper()
	if !regexp.MustCompile(pattern).MatchString(out) {
		t.Fatalf("output does not match %s:\n%s", pattern, out)
	}
}

func mustEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

var processScenarios = []scenario{
	{"a_task_is_claimed_run_to_its_end_and_completed_with_the_agents_result", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-complete"})
		out := f.startWorker([]string{"--exit-after", "1"}).finish(60 * time.Second)
		done := f.task(taskID)
		mustEqual(t, "state", done.GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		mustEqual(t, "result", resultOf(t, done), map[string]any{"sum": 21.0, "approvedBy": nil})
		mustMatch(t, `event finished run=go-worker-complete .* end=completed`, out)
		mustEqual(t, "tools.log", f.countLines("tools.log"), lookupsOnce)
	}},
	{"a_SIGKILLed_workers_task_is_finished_by_a_second_worker_from_the_latest_checkpoint_with_no_tool_rerun", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-kill"})
		first := f.startWorker([]string{"--lease", "2s"}, "AGENT_HANG_AT=5")
		f.waitHanging(first, "step 5")
		first.kill()
		mustEqual(t, "state after the kill", f.task(taskID).GetState(), checkpointv1.TaskState_TASK_STATE_RUNNING)

		out := f.startWorker([]string{"--lease", "2s", "--exit-after", "1"}).finish(60 * time.Second)
		done := f.task(taskID)
		mustEqual(t, "state", done.GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		mustEqual(t, "result", resultOf(t, done), map[string]any{"sum": 21.0, "approvedBy": nil})
		mustEqual(t, "attempt", done.GetAttempt(), uint64(2))
		mustMatch(t, `event resumed run=go-worker-kill recovered_from_step=3 `, out)
		// Steps 4 and 5 re-ran, but their lookups came from the journal.
		mustEqual(t, "tools.log", f.countLines("tools.log"), lookupsOnce)
	}},
	{"a_frozen_worker_that_lost_its_lease_writes_nothing_when_thawed", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-zombie"})
		zombie := f.startWorker([]string{"--lease", "2s", "--exit-after", "1"}, "AGENT_HANG_AT=5")
		f.waitHanging(zombie, "step 5")
		zombie.signal(syscall.SIGSTOP)
		thawed := false
		defer func() {
			if !thawed {
				zombie.signal(syscall.SIGCONT)
			}
		}()
		f.startWorker([]string{"--lease", "2s", "--exit-after", "1"}).finish(60 * time.Second)
		completed := f.task(taskID)
		mustEqual(t, "state", completed.GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		mustEqual(t, "attempt", completed.GetAttempt(), uint64(2))
		saved := f.checkpointSteps("go-worker-zombie")

		zombie.signal(syscall.SIGCONT)
		thawed = true
		// Thawed, its next heartbeat is fenced: the hung step is abandoned and nothing written.
		out := zombie.finish(30 * time.Second)
		mustMatch(t, `end=lease_lost`, out)
		after := f.task(taskID)
		mustEqual(t, "task state after the thaw", after.GetState(), completed.GetState())
		mustEqual(t, "task update after the thaw", after.GetUpdatedAt().AsTime(), completed.GetUpdatedAt().AsTime())
		mustEqual(t, "checkpoints after the thaw", f.checkpointSteps("go-worker-zombie"), saved)
		mustEqual(t, "tools.log", f.countLines("tools.log"), lookupsOnce)
	}},
	{"an_operators_cancel_stops_the_running_step_at_the_next_heartbeat_nothing_more_written", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-cancel"})
		running := f.startWorker([]string{"--lease", "3s", "--exit-after", "1"}, "AGENT_HANG_AT=4")
		f.waitHanging(running, "step 4")
		f.cli("tasks", "cancel", taskID)
		out := running.finish(30 * time.Second)
		mustEqual(t, "state", f.task(taskID).GetState(), checkpointv1.TaskState_TASK_STATE_CANCELLED)
		// The hung step was abandoned, not checkpointed: step 3 stays the latest.
		mustEqual(t, "checkpoints", f.checkpointSteps("go-worker-cancel"), []int64{3})
		mustMatch(t, `end=lease_lost`, out)
	}},
	{"SIGTERM_drains_the_hung_step_is_abandoned_at_the_deadline_the_run_checkpointed_and_the_task_released", func(t *testing.T, f *fixture) {
		// Step 5 was abandoned; step 4, done, was checkpointed on the way out.
		drainWhileHanging(t, f, "go-worker-drain", 5, []int64{3, 4})
	}},
	{"SIGTERM_checkpoints_a_completed_step_the_strategy_had_not_saved_yet", func(t *testing.T, f *fixture) {
		// Step 1 was completed but not yet checkpointed (every 3 steps): the drain saved it.
		drainWhileHanging(t, f, "go-worker-drain-early", 2, []int64{1})
		mustEqual(t, "tools.log", f.countLines("tools.log"), map[string]int{"lookup@1": 1, "lookup@2": 1})
	}},
}

// drainWhileHanging SIGTERMs a worker whose run hangs at step hangAt and checks the task was
// released with no attempt charged and the run checkpointed at wantSteps.
func drainWhileHanging(t *testing.T, f *fixture, runID string, hangAt int, wantSteps []int64) {
	taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: runID})
	draining := f.startWorker([]string{"--drain-deadline", "200ms"}, fmt.Sprintf("AGENT_HANG_AT=%d", hangAt))
	f.waitHanging(draining, fmt.Sprintf("step %d", hangAt))
	draining.signal(syscall.SIGTERM)
	out := draining.finish(30 * time.Second)
	released := f.task(taskID)
	mustEqual(t, "state", released.GetState(), checkpointv1.TaskState_TASK_STATE_PENDING)
	mustEqual(t, "attempts used", released.GetAttemptsUsed(), uint32(0))
	mustEqual(t, "checkpoints", f.checkpointSteps(runID), wantSteps)
	mustMatch(t, `end=released`, out)
}
