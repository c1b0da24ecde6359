//! The suite, part four: tasks whose approval decision does not resume them by themselves
//! (`auto_resume_hitl` off) stay parked in input_required, through new handles, until
//! `ResumeTask`.

use crate::queue::ClaimBatch;
use std::sync::Arc;

use super::{LEASE, TestBackend, at, claim_one, new_task, tenant};
use crate::queue::{NewTask, Task, TaskQueue, TaskState, Transition};
use checkpointd_core::error::Error;

fn parking(run_id: &str) -> NewTask {
    NewTask {
        auto_resume_hitl: false,
        ..new_task(run_id, None)
    }
}

fn decide(approved: bool) -> Transition {
    Transition::Decide {
        approved,
        decided_by: "alice".into(),
        comment: "checked".into(),
    }
}

/// Enqueues `new`, claims it at 0 and has it ask for approval at 1.
async fn waiting(queue: &dyn TaskQueue, new: NewTask) -> Task {
    let t = tenant("default");
    let (task, _) = queue.enqueue(&t, new).await.unwrap();
    let claimed = claim_one(queue, at(0)).await;
    assert_eq!(claimed.id, task.id);
    let request = Transition::RequestApproval {
        attempt: claimed.attempt,
        action: "send_email".into(),
        details: b"{\"to\":\"ceo\"}".to_vec(),
    };
    queue.update(&t, &task.id, request, at(1)).await.unwrap()
}

async fn nothing_claimable(queue: &dyn TaskQueue) -> bool {
    let claimed = queue
        .claim(
            &tenant("default"),
            "w",
            LEASE,
            ClaimBatch::up_to(10),
            at(100_000),
        )
        .await
        .unwrap();
    claimed.is_empty()
}

pub async fn a_decided_task_without_auto_resume_stays_parked_until_resumed<B: TestBackend>() {
    for approved in [true, false] {
        let backend = B::fresh().await;
        let queue = backend.open().await;
        let t = tenant("default");
        let waiting = waiting(&*queue, parking("run-1")).await;
        assert!(!waiting.auto_resume_hitl);

        let parked = queue
            .update(&t, &waiting.id, decide(approved), at(2))
            .await
            .unwrap();
        assert_eq!(
            parked.state,
            TaskState::InputRequired,
            "approved: {approved}"
        );
        let approval = parked.approval.clone().unwrap();
        assert_eq!(approval.decision, Some(approved));
        assert_eq!(
            (approval.decided_by.as_str(), approval.decided_at),
            ("alice", Some(at(2)))
        );
        assert!(nothing_claimable(&*queue).await);

        // As after a server restart: a new handle reads it parked, and it still never runs.
        drop(queue);
        let queue: Arc<dyn TaskQueue> = backend.open().await;
        assert_eq!(
            queue.get(&t, &waiting.id).await.unwrap(),
            Some(parked.clone())
        );
        assert!(nothing_claimable(&*queue).await);

        let resumed = queue
            .update(&t, &waiting.id, Transition::ResumeTask, at(3))
            .await
            .unwrap();
        assert_eq!(
            (
                resumed.state,
                resumed.next_attempt_at,
                resumed.attempts_used
            ),
            (TaskState::Pending, at(3), 0)
        );
        assert_eq!(resumed.approval, parked.approval);
        let claimed = claim_one(&*queue, at(3)).await;
        assert_eq!(
            (claimed.attempt.get(), claimed.approval),
            (2, parked.approval)
        );
    }
}

pub async fn a_parked_task_refuses_a_second_decision_and_changes_nothing<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let waiting = waiting(&*queue, parking("run-1")).await;
    let parked = queue
        .update(&t, &waiting.id, decide(true), at(2))
        .await
        .unwrap();

    let again = queue.update(&t, &waiting.id, decide(false), at(3)).await;

    assert!(matches!(again, Err(Error::TaskState(_))), "{again:?}");
    assert_eq!(queue.get(&t, &waiting.id).await.unwrap(), Some(parked));
}

pub async fn only_a_task_parked_after_a_decision_can_be_resumed<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let undecided = waiting(&*queue, parking("run-1")).await;
    let auto_resumed = waiting(&*queue, new_task("run-2", None)).await;
    assert!(auto_resumed.auto_resume_hitl);
    let auto_resumed = queue
        .update(&t, &auto_resumed.id, decide(true), at(2))
        .await
        .unwrap();
    assert_eq!(auto_resumed.state, TaskState::Pending);

    for task in [undecided, auto_resumed] {
        let outcome = queue
            .update(&t, &task.id, Transition::ResumeTask, at(3))
            .await;
        assert!(matches!(outcome, Err(Error::TaskState(_))), "{outcome:?}");
        assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(task));
    }
}
