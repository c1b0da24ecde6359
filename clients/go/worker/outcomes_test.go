// How a task ends, with real worker processes: fatal (failed at once), transient (resurrected
// in-process up to the budget, then handed back), dead on its last attempt, approval through the
// operator CLI (approve, reject, and auto_resume_hitl false), side effects in doubt under the ask
// and fail policies, two tasks in flight at once, and a worker over mTLS.
package worker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

var outcomeScenarios = []scenario{
	{"a_fatal_error_fails_the_task_at_once_without_resurrection", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-fatal"})
		out := f.startWorker([]string{"--exit-after", "1", "--cooldown", "0s"}, "AGENT_FATAL_AT=2").finish(60 * time.Second)
		failed := f.task(taskID)
		mustEqual(t, "state", failed.GetState(), checkpointv1.TaskState_TASK_STATE_FAILED)
		mustEqual(t, "error class", failed.GetLastErrorClass(), checkpointv1.ErrorClass_ERROR_CLASS_FATAL)
		mustEqual(t, "attempts used", failed.GetAttemptsUsed(), uint32(1))
		mustMatch(t, `configuration is wrong`, failed.GetLastError())
		mustMatch(t, `end=failed_fatal`, out)
		mustEqual(t, "tools.log", f.countLines("tools.log"), map[string]int{"lookup@1": 1, "lookup@2": 1})
	}},
	{"a_transient_error_resurrects_the_run_in_process_up_to_the_budget_then_hands_the_task_back", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-transient"})
		out := f.startWorker([]string{"--exit-after", "1", "--max-resurrections", "2", "--cooldown", "0s"},
			"AGENT_TRANSIENT_AT=3").finish(60 * time.Second)
		retried := f.task(taskID)
		mustEqual(t, "state", retried.GetState(), checkpointv1.TaskState_TASK_STATE_PENDING)
		mustEqual(t, "error class", retried.GetLastErrorClass(), checkpointv1.ErrorClass_ERROR_CLASS_TRANSIENT)
		mustMatch(t, `connection reset`, retried.GetLastError())
		mustMatch(t, `end=failed_transient`, out)
		// The first life and two resurrections reached step 3; the journal kept its lookup single.
		mustEqual(t, "tries of step 3", f.countLines("attempts.log")["step 3"], 3)
		mustEqual(t, "lookups of step 3", f.countLines("tools.log")["lookup@3"], 1)
	}},
	{"a_transient_error_on_the_last_attempt_past_the_budget_makes_the_task_a_dead_letter", func(t *testing.T, f *fixture) {
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-dead",
			RetryPolicy: &checkpointv1.RetryPolicy{MaxAttempts: 1}})
		out := f.startWorker([]string{"--exit-after", "1", "--max-resurrections", "0"}, "AGENT_TRANSIENT_AT=2").finish(60 * time.Second)
		dead := f.task(taskID)
		mustEqual(t, "state", dead.GetState(), checkpointv1.TaskState_TASK_STATE_DEAD)
		mustEqual(t, "error class", dead.GetLastErrorClass(), checkpointv1.ErrorClass_ERROR_CLASS_TRANSIENT)
		mustEqual(t, "tries of step 2", f.countLines("attempts.log")["step 2"], 1)
		mustMatch(t, `end=failed_transient`, out)
	}},
	{"a_step_that_asks_for_approval_waits_for_tasks_approve_and_sees_the_decision", func(t *testing.T, f *fixture) {
		approvalRoundTrip(t, f, "approve", "alice", "alice")
	}},
	{"a_step_that_asks_for_approval_waits_for_tasks_reject_and_sees_the_decision", func(t *testing.T, f *fixture) {
		approvalRoundTrip(t, f, "reject", "carol", nil)
	}},
	{"with_auto_resume_hitl_false_a_decided_task_waits_for_tasks_resume", func(t *testing.T, f *fixture) {
		manual := false
		taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-manual", AutoResumeHitl: &manual})
		waiting := f.startWorker([]string{"--exit-after", "1"}, "AGENT_APPROVAL_AT=4")
		f.waitState(taskID, checkpointv1.TaskState_TASK_STATE_INPUT_REQUIRED)
		f.cli("tasks", "approve", taskID, "--by", "alice")
		// Decided but not resumed: the worker polls every 100 ms and must leave it parked.
		time.Sleep(time.Second)
		parked := f.task(taskID)
		mustEqual(t, "state after the decision", parked.GetState(), checkpointv1.TaskState_TASK_STATE_INPUT_REQUIRED)
		mustEqual(t, "decided", parked.GetApproval().GetDecided(), true)
		f.cli("tasks", "resume", taskID)
		out := waiting.finish(60 * time.Second)
		done := f.task(taskID)
		mustEqual(t, "state", done.GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		mustEqual(t, "result", resultOf(t, done), map[string]any{"sum": 21.0, "approvedBy": "alice"})
		mustMatch(t, `(?s)end=awaiting_approval.*end=completed`, out)
	}},
	{"an_email_in_doubt_after_a_SIGKILL_waits_for_a_human_under_policy_ask_and_is_never_sent_twice", func(t *testing.T, f *fixture) {
		email := []string{"AGENT_EMAIL_AT=2", "AGENT_EMAIL_POLICY=ask"}
		taskID := killedAfterTheEmail(f, "go-worker-in-doubt", email)
		second := f.startWorker([]string{"--lease", "2s", "--exit-after", "1"}, email...)
		asked := f.waitState(taskID, checkpointv1.TaskState_TASK_STATE_INPUT_REQUIRED)
		mustEqual(t, "action", asked.GetApproval().GetAction(), "in_doubt step-2/send_email/0")
		mustMatch(t, `send_email`, string(asked.GetApproval().GetDetails()))
		f.cli("tasks", "approve", taskID, "--by", "bob")
		second.finish(60 * time.Second)
		mustEqual(t, "state", f.task(taskID).GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		// Approved, the call re-ran with its idempotency key, which the tool had seen: one email.
		mustEqual(t, "emails sent", len(f.countLines("effects.log")), 1)
	}},
	{"an_email_in_doubt_after_a_SIGKILL_is_failed_fatally_under_policy_fail_never_resent", func(t *testing.T, f *fixture) {
		email := []string{"AGENT_EMAIL_AT=2", "AGENT_EMAIL_POLICY=fail"}
		taskID := killedAfterTheEmail(f, "go-worker-in-doubt-fail", email)
		out := f.startWorker([]string{"--lease", "2s", "--exit-after", "1"}, email...).finish(60 * time.Second)
		failed := f.task(taskID)
		mustEqual(t, "state", failed.GetState(), checkpointv1.TaskState_TASK_STATE_FAILED)
		mustEqual(t, "error class", failed.GetLastErrorClass(), checkpointv1.ErrorClass_ERROR_CLASS_FATAL)
		mustMatch(t, `step-2/send_email/0`, failed.GetLastError())
		mustMatch(t, `end=failed_fatal`, out)
		mustEqual(t, "emails sent", len(f.countLines("effects.log")), 1)
	}},
	{"two_tasks_are_in_flight_at_once_with_concurrency_2", func(t *testing.T, f *fixture) {
		// Each run waits at step 2 until both reached it: one slot would wait forever.
		first := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-pair-a"})
		second := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-pair-b"})
		out := f.startWorker([]string{"--concurrency", "2", "--exit-after", "2"}, "AGENT_BARRIER=2").finish(60 * time.Second)
		for _, taskID := range []string{first, second} {
			mustEqual(t, "state of "+taskID, f.task(taskID).GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
		}
		mustEqual(t, "completions", strings.Count(out, "end=completed"), 2)
	}},
}

// killedAfterTheEmail enqueues runID and SIGKILLs its worker right after step 2's email went
// out, before its result was journalled: the call is in doubt. It returns the task's id.
func killedAfterTheEmail(f *fixture, runID string, email []string) string {
	taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: runID})
	first := f.startWorker([]string{"--lease", "2s"}, append(email, "AGENT_HANG_AFTER_EMAIL=1")...)
	f.waitHanging(first, "the email")
	first.kill()
	return taskID
}

// approvalRoundTrip parks a task at step 4 for approval, decides it with the CLI's verb, and
// checks the step saw the decision and steps 1 to 3 never ran their tools again.
func approvalRoundTrip(t *testing.T, f *fixture, verb, by string, approvedBy any) {
	runID := "go-worker-" + verb
	taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: runID})
	waiting := f.startWorker([]string{"--exit-after", "1"}, "AGENT_APPROVAL_AT=4")
	asked := f.waitState(taskID, checkpointv1.TaskState_TASK_STATE_INPUT_REQUIRED)
	mustEqual(t, "action", asked.GetApproval().GetAction(), "deploy")
	var details map[string]any
	if err := json.Unmarshal(asked.GetApproval().GetDetails(), &details); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "details", details, map[string]any{"target": "prod"})
	f.cli("tasks", verb, taskID, "--by", by)
	out := waiting.finish(60 * time.Second)
	done := f.task(taskID)
	mustEqual(t, "state", done.GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
	mustEqual(t, "result", resultOf(t, done), map[string]any{"sum": 21.0, "approvedBy": approvedBy})
	mustMatch(t, `(?s)end=awaiting_approval.*end=completed`, out)
	mustEqual(t, "tools.log", f.countLines("tools.log"), lookupsOnce)
}

func TestAWorkerOverMutualTLSCompletesATask(t *testing.T) {
	for _, backend := range testserver.Backends {
		t.Run(string(backend), func(t *testing.T) {
			certs := testserver.MakeCerts(t)
			tlsOptions := checkpointd.TLSOptions{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}
			server := testserver.Start(t, testserver.Options{Backend: backend,
				Args:         []string{"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-client-ca", certs.CA},
				ProbeOptions: []checkpointd.Option{checkpointd.WithTLS(tlsOptions)}})
			f := newFixture(t, server, "mtls", checkpointd.WithTLS(tlsOptions))
			f.workers = []string{"--ca", certs.CA, "--cert", certs.ClientCert, "--key", certs.ClientKey}
			taskID := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-mtls"})
			out := f.startWorker([]string{"--exit-after", "1"}).finish(60 * time.Second)
			mustEqual(t, "state", f.task(taskID).GetState(), checkpointv1.TaskState_TASK_STATE_COMPLETED)
			mustMatch(t, `end=completed`, out)

			// Without its client certificate the worker cannot claim: the task stays pending.
			f.workers = []string{"--ca", certs.CA}
			other := f.enqueue(&checkpointv1.EnqueueRequest{RunId: "go-worker-mtls-refused"})
			// Each claim first waits for a connection (the client's connect timeout, 5 s), then
			// fails with the TLS error: wait for that line rather than for a fixed time.
			refused := f.startWorker(nil)
			for deadline := time.Now().Add(checkpointd.DefaultConnectTimeout + 10*time.Second); time.Now().Before(deadline) &&
				!strings.Contains(refused.output(), "claim failed"); {
				time.Sleep(100 * time.Millisecond)
			}
			refused.kill()
			mustEqual(t, "state without a client certificate", f.task(other).GetState(), checkpointv1.TaskState_TASK_STATE_PENDING)
			mustMatch(t, `claim failed`, refused.output())
		})
	}
}
