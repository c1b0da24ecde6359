// A LangGraph.js graph checkpointed by checkpointd: one node that echoes the last message.
//
//     node langgraph.mjs            # prints "you said: hi"
//
// Needs a running `checkpointd serve` on 127.0.0.1:50051, `@checkpointd/client` and
// `@langchain/langgraph` installed. Switching a graph to checkpointd is its `checkpointer`.

import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

import { CheckpointdSaver } from "@checkpointd/client/langgraph";

const reply = (state) => ({
  messages: [{ role: "assistant", content: `you said: ${state.messages.at(-1).content}` }],
});

const graph = new StateGraph(MessagesAnnotation)
  .addNode("reply", reply)
  .addEdge(START, "reply")
  .compile({ checkpointer: new CheckpointdSaver({ baseUrl: "http://127.0.0.1:50051" }) });

const config = { configurable: { thread_id: "t-1" } };
await graph.invoke({ messages: [{ role: "user", content: "hi" }] }, config);
console.log((await graph.getState(config)).values.messages.at(-1).content);
