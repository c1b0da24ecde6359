// The CommonJS twin of app.ts (a project made by `npm init -y`): the same checks through require().
const {
  CheckpointdError, Code, MessageChain, ToolChain, checkpointChecksum, createCheckpointClient, verifyCheckpoint,
} = require("@checkpointd/client");
const { CheckpointdSaver } = require("@checkpointd/client/langgraph");
const { MessagesAnnotation, START, StateGraph } = require("@langchain/langgraph");

const flavour = process.argv[2] ?? "typescript";
const address = process.env.CHECKPOINTD_ADDRESS ?? "127.0.0.1:50051";
const encode = (text) => new TextEncoder().encode(text);

async function main() {
  const client = createCheckpointClient({ baseUrl: `http://${address}` });
  const runId = `consumer-${flavour}-${process.pid}`;
  const messages = [{ role: "user", content: encode('{"content":"hi"}') }];
  const content = { runId, step: 1n, contentType: "application/json", state: encode('{"n":1}'), metadata: {} };
  await client.save({ ...content, messages, checksum: checkpointChecksum(content, MessageChain.over(messages), ToolChain.EMPTY) });
  const loaded = await client.loadLatest({ runId });
  if (loaded.checkpoint === undefined || !verifyCheckpoint(loaded.checkpoint, loaded.toolResults, loaded.toolIntents).valid) {
    throw new Error("the loaded checkpoint does not verify");
  }
  const refused = await client.getRun({ runId: `${runId}-nobody` }).then(() => undefined, (error) => error);
  if (!(refused instanceof CheckpointdError) || refused.code !== Code.NotFound) {
    throw new Error(`an unknown run should be a CheckpointdError NOT_FOUND, got ${String(refused)}`);
  }

  const saver = new CheckpointdSaver({ baseUrl: address });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({
      messages: [{ role: "assistant", content: `you said: ${String(state.messages.at(-1)?.content)}` }],
    }))
    .addEdge(START, "reply")
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: `thread-${runId}` } };
  await graph.invoke({ messages: [{ role: "user", content: "hi" }] }, config);
  const said = String((await graph.getState(config)).values.messages.at(-1)?.content);
  if (said !== "you said: hi") throw new Error(`the graph said ${JSON.stringify(said)}`);
  // A fresh saver reads the thread back from the server, not from this process.
  const stored = await new CheckpointdSaver({ baseUrl: address }).getTuple(config);
  if (stored === undefined) throw new Error("the graph's checkpoint is not on the server");
  console.log(`check: ${flavour}: run ${runId} saved and loaded (verified); graph said "${said}", checkpoint ${stored.checkpoint.id} stored`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
