"""A program a user writes against the installed `checkpointd` wheel, outside the repository.

Run as `consumer.py ADDRESS STEP` against a live server: STEP `first` saves through the client,
runs a LangGraph graph on `CheckpointdSaver` and a crashing agent on the recovery loop; STEP
`second` (a new process) reads back what `first` left: the checkpoint, the graph's state, and the
agent resumed from its checkpoint with its journalled tool replayed, not re-run. Prints one
`ok: ...` line per check; any failure raises.
"""

import asyncio
import sys

from langgraph.graph import START, MessagesState, StateGraph

from checkpointd import CheckpointStore, Client, Done, RecoverableAgent
from checkpointd.langgraph import CheckpointdSaver

ADDRESS, STEP = sys.argv[1], sys.argv[2]
CALLS: list[int] = []


def reply(state: MessagesState) -> dict:
    return {"messages": [("assistant", f"you said: {state['messages'][-1].content}")]}


def graph():
    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=CheckpointdSaver(ADDRESS))


def lookup(step: int) -> str:
    CALLS.append(step)
    return f"fact {step}"


async def agent(ctx):
    fact = await ctx.call_tool("lookup", lookup, ctx.step)
    ctx.add_message("assistant", fact)
    if STEP == "first" and ctx.step == 2:
        raise SystemExit("crash after the tool ran at step 2")  # not retried: the process ends
    return Done(ctx.state) if ctx.step == 3 else None


async def run_agent() -> dict:
    store = CheckpointStore(ADDRESS)
    return await RecoverableAgent(agent, store, checkpoint_every_n=1).run_with_recovery({}, "consumer-agent")


config = {"configurable": {"thread_id": "consumer-thread"}}
if STEP == "first":
    client = Client(ADDRESS)
    client.save(run_id="consumer-run", step=1, state=b'{"n":1}', content_type="application/json")
    print("ok: client save")
    graph().invoke({"messages": [("user", "hi")]}, config)
    print("ok: LangGraph invoke on CheckpointdSaver")
    try:
        asyncio.run(run_agent())
    except SystemExit as crash:
        print(f"ok: agent crashed as planned ({crash})")
else:
    client = Client(ADDRESS)
    loaded = client.load_latest(run_id="consumer-run")
    assert loaded.checkpoint.step == 1 and loaded.checkpoint.state == b'{"n":1}', loaded
    print("ok: a new process loads the checkpoint back, verified")
    said = graph().get_state(config).values["messages"][-1].content
    assert said == "you said: hi", said
    print("ok: a new process reads the graph's state")
    result = asyncio.run(run_agent())
    assert result["recovered_from_step"] == 1, result
    assert CALLS == [3], f"lookup ran for steps {CALLS}; steps 1 and 2 were journalled"
    print("ok: the agent resumed from step 1, replayed step 2's journalled lookup and ran only step 3's")
