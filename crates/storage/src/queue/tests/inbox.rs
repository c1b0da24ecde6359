//! The suite, part six: the approval inbox's listing, `list_waiting`: only the tenant's tasks
//! in input_required, filtered by action and age in the backend, ordered either way by when
//! they asked, paged without overlap, and counted; the reference `select_waiting` agrees.

use super::{LEASE, TestBackend, as_stored, at, enqueue, ids, list, tenant};
use crate::queue::{
    ClaimBatch, Task, TaskId, TaskQueue, TaskState, Transition, WaitingQuery, select_waiting,
};
use checkpointd_core::domain::Tenant;

/// Enqueues `actions.len()` tasks in `t`; the i-th asks for `actions[i]` at `at(10 + i)`.
async fn asking(queue: &dyn TaskQueue, t: &Tenant, prefix: &str, actions: &[&str]) -> Vec<TaskId> {
    let mut asked = Vec::new();
    for n in 0..actions.len() {
        enqueue(queue, t, &format!("{prefix}-{n}")).await;
    }
    let claimed = queue
        .claim(t, "w", LEASE, ClaimBatch::up_to(actions.len()), at(0))
        .await
        .unwrap();
    assert_eq!(claimed.len(), actions.len());
    for (n, (task, action)) in claimed.iter().zip(actions).enumerate() {
        let request = Transition::RequestApproval {
            attempt: task.attempt,
            action: (*action).into(),
            details: format!("{{\"step\":{n}}}").into_bytes(),
        };
        queue
            .update(t, &task.id, request, at(10 + n as u64))
            .await
            .unwrap();
        asked.push(task.id.clone());
    }
    asked
}

fn query(limit: usize) -> WaitingQuery {
    WaitingQuery {
        limit,
        ..WaitingQuery::default()
    }
}

pub async fn the_inbox_lists_waiting_tasks_filtered_ordered_paged_and_counted<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let actions = [
        "send_email",
        "pay",
        "send_email",
        "pay",
        "send_email",
        "pay",
        "send_email",
    ];
    let asked = asking(&*queue, &t, "run", &actions).await;
    // Neither another tenant's waiting task nor a pending one of this tenant is listed.
    asking(&*queue, &tenant("other"), "other", &["pay"]).await;
    enqueue(&*queue, &t, "still-pending").await;

    let first = queue.list_waiting(&t, &query(3)).await.unwrap();
    assert_eq!(ids(&first.tasks), asked[..3]);
    assert_eq!((first.waiting, first.matching), (7, 7));
    assert_eq!(
        first.actions,
        [("send_email".to_owned(), 4), ("pay".to_owned(), 3)]
    );
    let mut pages = Vec::new();
    for offset in [3, 6, 9] {
        let page = WaitingQuery { offset, ..query(3) };
        pages.push(ids(&queue.list_waiting(&t, &page).await.unwrap().tasks));
    }
    assert_eq!(
        pages,
        [asked[3..6].to_vec(), asked[6..].to_vec(), Vec::new()]
    );

    let newest = WaitingQuery {
        newest_first: true,
        ..query(2)
    };
    let newest = queue.list_waiting(&t, &newest).await.unwrap();
    assert_eq!(ids(&newest.tasks), [asked[6].clone(), asked[5].clone()]);

    let pay = WaitingQuery {
        action: Some("pay".into()),
        ..query(10)
    };
    let pay = queue.list_waiting(&t, &pay).await.unwrap();
    assert_eq!(
        ids(&pay.tasks),
        [asked[1].clone(), asked[3].clone(), asked[5].clone()]
    );
    assert_eq!((pay.waiting, pay.matching), (7, 3));

    // Waiting at least since at(12): the first three asked.
    let old = WaitingQuery {
        requested_before: Some(at(12)),
        newest_first: true,
        ..query(10)
    };
    let old = queue.list_waiting(&t, &old).await.unwrap();
    assert_eq!(
        ids(&old.tasks),
        [asked[2].clone(), asked[1].clone(), asked[0].clone()]
    );
    assert_eq!(old.matching, 3);

    // The reference over every task of the tenant says the same, task for task.
    let all: Vec<Task> = list(&*queue, &t, None, None, 100).await;
    assert!(all.iter().any(|task| task.state == TaskState::Pending));
    for asked_for in [query(3), pay_query(), old_query()] {
        let reference = select_waiting(&all, &asked_for);
        let mut answer = queue.list_waiting(&t, &asked_for).await.unwrap();
        answer.tasks = answer.tasks.into_iter().map(as_stored::<B>).collect();
        assert_eq!(answer, reference, "{asked_for:?}");
    }
}

fn pay_query() -> WaitingQuery {
    WaitingQuery {
        action: Some("pay".into()),
        offset: 1,
        ..query(10)
    }
}

fn old_query() -> WaitingQuery {
    WaitingQuery {
        requested_before: Some(at(13)),
        ..query(2)
    }
}
