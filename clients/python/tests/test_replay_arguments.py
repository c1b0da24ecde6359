"""A journalled call is replayed only for the same arguments: the recovery loop's tools and side
effects send their arguments digest, a replay with other arguments raises `ReplayMismatch`
without calling the tool, and the server's ARGUMENTS_MISMATCH is the same error. Against a real
server (SQLite, Postgres) and the in-memory store, which must refuse the same way."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from checkpointd import Done, FatalError, RecoverableAgent, ReplayMismatch, StepContext, arguments_digest
from checkpointd.classify import ErrorClass, ErrorClassifier
from checkpointd.digest import check_replay


def test_the_digest_is_sha256_of_the_canonical_json_of_the_arguments() -> None:
    canonical = '{"a":"été","b":[1,2.5,null]}'.encode()
    assert arguments_digest({"b": [1, 2.5, None], "a": "été"}) == hashlib.sha256(canonical).hexdigest()
    assert arguments_digest({"a": 1}) != arguments_digest({"a": 2})
    # Arguments JSON cannot carry get no digest, and an empty digest never mismatches.
    assert arguments_digest({"when": object()}) == ""
    check_replay("c", "", arguments_digest({"a": 1}))
    check_replay("c", arguments_digest({"a": 1}), "")
    with pytest.raises(ReplayMismatch) as raised:
        check_replay("c", "a" * 64, "b" * 64)
    assert (raised.value.call_id, raised.value.stored_digest, raised.value.request_digest) == (
        "c",
        "a" * 64,
        "b" * 64,
    )
    assert raised.value.reason == "ARGUMENTS_MISMATCH"
    assert ErrorClassifier().classify(raised.value) is ErrorClass.FATAL


class Mailer:
    """Step 1 sends an email to `self.to`, then the run stops before any checkpoint (fatal at
    step 1 the first time), so the next life replays step 1 from the journal."""

    def __init__(self, to: str, side_effect: bool, stop: bool) -> None:
        self.to = to
        self.side_effect = side_effect
        self.stop = stop
        self.sent: list[str] = []

    def send(self, *args: Any) -> dict[str, Any]:
        to = args[-1]
        self.sent.append(to)
        return {"sent": to}

    async def __call__(self, ctx: StepContext) -> Any:
        if self.side_effect:
            await ctx.call_side_effect("send_email", self.send, self.to)
        else:
            await ctx.call_tool("send_email", self.send, self.to)
        if self.stop:
            raise FatalError("stop after the email, before a checkpoint")
        return Done({"to": self.to})


@pytest.mark.parametrize("side_effect", [False, True], ids=["tool", "side_effect"])
async def test_a_replay_with_the_same_arguments_reuses_the_journalled_result(stores, side_effect) -> None:
    first = Mailer("ada@example.com", side_effect, stop=True)
    with pytest.raises(FatalError):
        await RecoverableAgent(first, stores.store()).run_with_recovery(None, "same-args")
    again = Mailer("ada@example.com", side_effect, stop=False)
    result = await RecoverableAgent(again, stores.store()).run_with_recovery(None, "same-args")
    assert first.sent == ["ada@example.com"] and again.sent == []
    assert result["tools_replayed"] == 1 and result["result"] == {"to": "ada@example.com"}


@pytest.mark.parametrize("side_effect", [False, True], ids=["tool", "side_effect"])
async def test_a_replay_with_other_arguments_raises_and_the_tool_is_not_called(stores, side_effect) -> None:
    first = Mailer("ada@example.com", side_effect, stop=True)
    with pytest.raises(FatalError):
        await RecoverableAgent(first, stores.store()).run_with_recovery(None, "other-args")
    other = Mailer("bob@example.com", side_effect, stop=False)
    with pytest.raises(ReplayMismatch) as raised:
        await RecoverableAgent(other, stores.store(), cooldown=0).run_with_recovery(None, "other-args")
    assert other.sent == [], "the second email must not be sent under the first call's id"
    assert raised.value.call_id == "step-1/send_email/0"
    assert raised.value.stored_digest == arguments_digest(["ada@example.com"])
    assert raised.value.request_digest == arguments_digest(["bob@example.com"])


async def test_an_in_doubt_side_effect_with_other_arguments_is_not_retried(stores) -> None:
    """An intent journalled for one set of arguments (the process died before the result) is
    not settled by a call with other arguments: no retry with its key."""
    store = stores.store()
    await store.resume("in-doubt-args")
    digest = arguments_digest(["ada@example.com"])
    await store.record_tool_intent(
        "in-doubt-args", "step-1/send_email/0", "send_email", 1, arguments_digest=digest
    )
    await store.close()
    other = Mailer("bob@example.com", side_effect=True, stop=False)
    with pytest.raises(ReplayMismatch):
        await RecoverableAgent(other, stores.store(), cooldown=0).run_with_recovery(None, "in-doubt-args")
    assert other.sent == []


async def test_the_journal_refuses_a_call_id_with_other_arguments_as_replay_mismatch(stores) -> None:
    """The store's own journal writes: the same digest (or none) is a retry that returns the
    stored result; another digest is ALREADY_EXISTS / ARGUMENTS_MISMATCH, as `ReplayMismatch`."""
    store = stores.store()
    first, second = "a" * 64, "b" * 64
    recorded = await store.record_tool_result("journal-args", "c1", "t", 1, b"1", arguments_digest=first)
    assert recorded.arguments_digest == first
    again = await store.record_tool_result("journal-args", "c1", "t", 1, b"1", arguments_digest=first)
    assert again.seq == recorded.seq
    older = await store.record_tool_result("journal-args", "c1", "t", 1, b"1")
    assert older.seq == recorded.seq
    with pytest.raises(ReplayMismatch) as raised:
        await store.record_tool_result("journal-args", "c1", "t", 1, b"1", arguments_digest=second)
    assert raised.value.reason == "ARGUMENTS_MISMATCH"
    assert raised.value.metadata == {"call_id": "c1", "stored_digest": first, "request_digest": second}
    with pytest.raises(ReplayMismatch):
        await store.record_tool_intent("journal-args", "c1", "t", 1, arguments_digest=second)
    await store.close()
