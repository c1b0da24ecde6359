/**
 * CheckpointdSaver against a real `checkpointd serve` on SQLite and Postgres: a fallback past
 * corrupt checkpoints is loud (log line and `checkpointd_fallback` metadata, or an error under
 * "raise"); pending writes that arrive before their checkpoint's put (LangGraph's default
 * "async" durability) are held, never refused, and durable once the put returns; the messages
 * channel is stored once, in the run's message log, each save sending only the new messages.
 * Corruption is made by flipping a byte of a stored state in the database, as a bad disk would.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";

import { ConnectError } from "@connectrpc/connect";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";

import { CheckpointdError, Code, createCheckpointClient, type CheckpointClient } from "../../src/index.js";
import { CheckpointdSaver, CorruptCheckpoints, FALLBACK_KEY, runId, ThreadTakenOver, type SaverLogger } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type Backend, type TestServer } from "../server.js";

/** Runs SQL on the server's own database, found in the line the server logs when it starts. */
function sql(server: TestServer, statement: string): string {
  const plain = server.output().replace(/\u001b\[[0-9;]*m/g, "");
  const url = /database=(\S+)/.exec(plain)?.[1];
  if (url === undefined) throw new Error(`no database= in the server's output:\n${plain}`);
  if (url.startsWith("sqlite://")) {
    return execFileSync("sqlite3", [url.slice("sqlite://".length), statement], { encoding: "utf8" }).trim();
  }
  return execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-tAq", "-c", statement], { encoding: "utf8" }).trim();
}

function corruptState(server: TestServer, backend: Backend, run: string, step: number): void {
  const flip = backend === "sqlite"
    ? "state = CAST(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END || substr(state, 2) AS BLOB)"
    : "state = set_byte(state, 0, (get_byte(state, 0) + 1) % 256)";
  sql(server, `UPDATE checkpoints SET ${flip} WHERE run_id = '${run}' AND step = ${step}`);
}

class Recorder implements SaverLogger {
  readonly lines: string[] = [];
  info(message: string): void { this.lines.push(`info ${message}`); }
  warn(message: string): void { this.lines.push(`warn ${message}`); }
  error(message: string): void { this.lines.push(`error ${message}`); }
}

const meta = (step: number): CheckpointMetadata => ({ source: "loop", step, parents: {} });

function checkpoint(values: Record<string, unknown> = {}): Checkpoint {
  const versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return { ...emptyCheckpoint(), id: uuid6(-3), channel_values: values, channel_versions: versions };
}

/**
 * Puts a chain of checkpoints on one thread; their ids, oldest first. As in a graph, LangGraph's
 * step starts at -1 (the input), one below checkpointd's step, which starts at 0.
 */
async function chain(saver: CheckpointdSaver, threadId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let config = { configurable: { thread_id: threadId, checkpoint_ns: "" } } as { configurable: Record<string, unknown> };
  for (let i = 0; i < count; i++) {
    const cp = checkpoint({ counter: i });
    config = await saver.put(config, cp, meta(i - 1), cp.channel_versions) as typeof config;
    ids.push(cp.id);
  }
  return ids;
}

for (const backend of BACKENDS) {
  describe(`CheckpointdSaver (${backend})`, () => {
    let server: TestServer;
    let client: CheckpointClient;
    const tenant = "langgraph-tests";
    const saverOf = (options: { logger?: SaverLogger; onCorrupt?: "warn" | "raise" } = {}) =>
      new CheckpointdSaver({ baseUrl: server.baseUrl, tenant, ...options });

    before(async () => {
      server = await startServer({ backend });
      client = createCheckpointClient({ baseUrl: server.baseUrl, tenant });
    });

    after(async () => {
      await server?.stop();
    });

    /** A thread of 4 checkpoints whose 2 newest are corrupt; their ids, oldest first. */
    async function corruptThread(threadId: string): Promise<string[]> {
      const ids = await chain(saverOf(), threadId, 4);
      corruptState(server, backend, runId(threadId, ""), 3);
      corruptState(server, backend, runId(threadId, ""), 2);
      return ids;
    }

    test("a fallback past corrupt checkpoints is logged and on the tuple's metadata", async () => {
      const ids = await corruptThread("loud");
      const logger = new Recorder();
      const tuple = await saverOf({ logger }).getTuple({ configurable: { thread_id: "loud" } });
      assert.equal(tuple?.checkpoint.id, ids[1]);
      assert.deepEqual(tuple?.checkpoint.channel_values, { counter: 1 });
      // Named as LangGraph names them (ids, metadata.step) and as checkpointd does (its steps).
      assert.deepEqual((tuple?.metadata as Record<string, unknown>)[FALLBACK_KEY], {
        skipped_ids: [ids[3], ids[2]],
        skipped_langgraph_steps: [2, 1],
        skipped_steps: [3, 2],
        served_id: ids[1],
      });
      const line = logger.lines.find((l) => l.includes("skipped corrupt checkpoints")) ?? "";
      assert.ok(line.startsWith("warn "), `no warning: ${JSON.stringify(logger.lines)}`);
      assert.ok(line.includes('"loud"') && line.includes(ids[3] as string) && line.includes(ids[2] as string), line);

      // A save goes on from the checkpoint served (the run resumes past the corrupt ones).
      const next = checkpoint({ counter: 9 });
      await saverOf().put({ configurable: { thread_id: "loud", checkpoint_ns: "", checkpoint_id: ids[1] } }, next, meta(9), next.channel_versions);
      assert.equal((await saverOf().getTuple({ configurable: { thread_id: "loud" } }))?.checkpoint.id, next.id);
    });

    test('under onCorrupt "raise" the saver refuses to serve an older checkpoint', async () => {
      const ids = await corruptThread("strict");
      const logger = new Recorder();
      await assert.rejects(saverOf({ onCorrupt: "raise", logger }).getTuple({ configurable: { thread_id: "strict" } }), (error: unknown) => {
        assert.ok(error instanceof CorruptCheckpoints, String(error));
        assert.deepEqual(error.fallback.skippedIds, [ids[3], ids[2]]);
        assert.equal(error.reason, "CHECKPOINT_CORRUPT");
        return true;
      });
      assert.ok(logger.lines.some((l) => l.startsWith("error ")), JSON.stringify(logger.lines));
    });

    test("every read below quarantined checkpoints is loud, by every new saver, until a newer checkpoint is saved", async () => {
      const ids = await corruptThread("every-reader");
      const config = { configurable: { thread_id: "every-reader" } };
      for (let reader = 0; reader < 3; reader++) {
        const logger = new Recorder();
        const tuple = await saverOf({ logger }).getTuple(config);
        assert.equal(tuple?.checkpoint.id, ids[1]);
        assert.deepEqual((tuple?.metadata as Record<string, unknown>)[FALLBACK_KEY],
          { skipped_ids: [ids[3], ids[2]], skipped_langgraph_steps: [2, 1], skipped_steps: [3, 2], served_id: ids[1] }, `reader ${reader}`);
        const line = logger.lines.find((l) => l.startsWith("warn ") && l.includes("skipped corrupt checkpoints")) ?? "";
        assert.ok(line.includes('thread "every-reader" ns ""') && line.includes(ids[3] as string), `reader ${reader}: ${JSON.stringify(logger.lines)}`);
        await assert.rejects(saverOf({ onCorrupt: "raise", logger: new Recorder() }).getTuple(config), CorruptCheckpoints, `raiser ${reader}`);
      }
      // A checkpoint saved after the fallback lands above the quarantined ones: the thread is
      // whole again and every later read is quiet, even under "raise".
      const top = checkpoint({ counter: 10 });
      await saverOf().put({ configurable: { thread_id: "every-reader", checkpoint_ns: "", checkpoint_id: ids[1] } }, top, meta(1), top.channel_versions);
      const quiet = new Recorder();
      const tuple = await saverOf({ logger: quiet, onCorrupt: "raise" }).getTuple(config);
      assert.equal(tuple?.checkpoint.id, top.id);
      assert.equal((tuple?.metadata as Record<string, unknown>)[FALLBACK_KEY], undefined);
      assert.deepEqual(quiet.lines, []);
    });

    test("a corrupt checkpoint asked for by id throws CorruptCheckpoints under either policy", async () => {
      const ids = await corruptThread("by-id");
      for (const onCorrupt of ["warn", "raise"] as const) {
        const logger = new Recorder();
        await assert.rejects(saverOf({ onCorrupt, logger }).getTuple({ configurable: { thread_id: "by-id", checkpoint_id: ids[3] } }), (error: unknown) => {
          assert.ok(error instanceof CorruptCheckpoints, String(error));
          assert.equal(error.code, Code.DataLoss);
          assert.deepEqual([error.fallback.skippedIds, error.fallback.skippedLanggraphSteps, error.fallback.skippedSteps], [[ids[3]], [2], [3]]);
          assert.equal(error.fallback.requestedId, ids[3]);
          return true;
        });
        assert.ok(logger.lines.some((l) => l.startsWith("error ") && l.includes(ids[3] as string)), JSON.stringify(logger.lines));
      }
      // An intact one by id is served as it is, without a fallback.
      const tuple = await saverOf().getTuple({ configurable: { thread_id: "by-id", checkpoint_id: ids[1] } });
      assert.equal(tuple?.checkpoint.id, ids[1]);
    });

    test("pending writes that come before their checkpoint's put are held and journalled by the put", async () => {
      const saver = saverOf();
      // A new thread: the graph loads it first (finding nothing), then runs the first checkpoint's
      // tasks while its put is still on the way.
      assert.equal(await saver.getTuple({ configurable: { thread_id: "early" } }), undefined);
      const first = checkpoint({ n: 0 });
      const config = { configurable: { thread_id: "early", checkpoint_ns: "", checkpoint_id: first.id } };
      await saver.putWrites(config, [["n", 1], ["__error__", "boom"]], "task-1", "~path");
      await assert.rejects(client.getRun({ runId: runId("early", "") }), (error: unknown) =>
        error instanceof CheckpointdError && error.code === Code.NotFound, "nothing may land before the put");
      await saver.put({ configurable: { thread_id: "early", checkpoint_ns: "" } }, first, meta(0), first.channel_versions);

      // A known thread: writes for the next checkpoint race its put.
      const second = checkpoint({ n: 1 });
      const secondConfig = { configurable: { thread_id: "early", checkpoint_ns: "", checkpoint_id: second.id } };
      await Promise.all([
        saver.putWrites(secondConfig, [["n", 2]], "task-2"),
        saver.put(config, second, meta(1), second.channel_versions),
      ]);

      // Once the puts returned, the writes are durable: another process reads them.
      const fresh = saverOf();
      // In LangGraph's order (task path, task id, idx): the error channel's idx is -1.
      assert.deepEqual((await fresh.getTuple(config))?.pendingWrites, [["task-1", "__error__", "boom"], ["task-1", "n", 1]]);
      assert.deepEqual((await fresh.getTuple(secondConfig))?.pendingWrites, [["task-2", "n", 2]]);
      // A write for a stored checkpoint goes straight out; a retried regular write is kept once.
      await saver.putWrites(secondConfig, [["n", 3]], "task-2");
      assert.deepEqual((await fresh.getTuple(secondConfig))?.pendingWrites, [["task-2", "n", 2]]);
    });

    test("writes journalled beside a save refused by another writer are journalled again where the checkpoint lands", async () => {
      const thread = "race";
      const run = runId(thread, "");
      const root = { configurable: { thread_id: thread, checkpoint_ns: "" } };
      const calls: string[] = [];
      const a0 = checkpoint({ n: 0 });
      const a0Config = { configurable: { ...root.configurable, checkpoint_id: a0.id } };
      let late: Promise<void> | undefined;
      const watched: CheckpointClient = {
        ...client,
        getRun: (request) => (calls.push("getRun"), client.getRun(request)),
        recordToolResults: (request) => (calls.push(`record@${(request.results ?? []).map((r) => r.step).join(",")}`), client.recordToolResults(request)),
        save: async (request) => {
          calls.push(`save@${request.step}`);
          // A write that comes while the first save is on its way goes out beside it.
          if (late === undefined) await (late = saver.putWrites(a0Config, [["m", "late"]], "task-b"));
          return client.save(request);
        },
      };
      const saver = new CheckpointdSaver({ client: watched });
      const other = saverOf();
      assert.equal(await saver.getTuple(root), undefined); // the thread is empty
      const b0 = checkpoint({ n: 10 });
      await other.put(root, b0, meta(0), b0.channel_versions); // another writer takes step 0
      await saver.putWrites(a0Config, [["n", 1], ["__error__", "boom"]], "task-a"); // held for a0's put
      await saver.put(root, a0, meta(0), a0.channel_versions);

      // No GetRun for the empty thread; the held and the late writes went out beside the save at
      // step 0, which was refused; after a sync both went out again beside the save at step 1.
      assert.deepEqual([...calls.slice(0, 2).sort(), ...calls.slice(2, 4), ...calls.slice(4).sort()],
        ["record@0,0", "save@0", "record@0", "getRun", "record@1,1,1", "save@1"], calls.join(" "));
      const journal = (await client.getJournal({ runId: run })).entries.filter((e) => e.callId.startsWith(`${a0.id}/`));
      assert.deepEqual(journal.map((e) => e.step), [0n, 0n, 0n, 1n, 1n, 1n]);
      // Readers find the writes at the step the checkpoint landed at, and never the orphans.
      const fresh = saverOf();
      assert.equal((await fresh.getTuple(root))?.checkpoint.id, a0.id);
      assert.deepEqual((await fresh.getTuple(a0Config))?.pendingWrites,
        [["task-a", "__error__", "boom"], ["task-a", "n", 1], ["task-b", "m", "late"]]);
      assert.deepEqual((await fresh.getTuple({ configurable: { ...root.configurable, checkpoint_id: b0.id } }))?.pendingWrites, []);
    });

    test("the messages channel is stored once: each save sends only the new messages", async () => {
      const saver = saverOf();
      const run = runId("chat", "");
      const m1 = new HumanMessage({ content: "hello", id: "m1" });
      const m2 = new AIMessage({ content: "hi there", id: "m2" });
      const m3 = new HumanMessage({ content: "plan a trip", id: "m3" });
      let config = { configurable: { thread_id: "chat", checkpoint_ns: "" } } as { configurable: Record<string, unknown> };
      const counts: bigint[] = [];
      for (const messages of [[m1], [m1, m2], [m1, m2, m3]]) {
        const cp = checkpoint({ messages, topic: "trip" });
        config = await saver.put(config, cp, meta(counts.length), cp.channel_versions) as typeof config;
        counts.push((await client.getRun({ runId: run })).run?.messageCount ?? -1n);
      }
      assert.deepEqual(counts, [1n, 2n, 3n]);
      // The state does not hold the messages a second time.
      const stored = await client.loadLatest({ runId: run, messageOffset: 0n });
      assert.equal(stored.checkpoint?.messages.length, 3);
      assert.ok(!Buffer.from(stored.checkpoint?.state ?? []).toString().includes("plan a trip"));

      const fresh = await saverOf().getTuple({ configurable: { thread_id: "chat" } });
      const read = fresh?.checkpoint.channel_values["messages"] as Array<HumanMessage | AIMessage>;
      assert.deepEqual(read.map((m) => [m.getType(), m.content, m.id]), [["human", "hello", "m1"], ["ai", "hi there", "m2"], ["human", "plan a trip", "m3"]]);
      assert.equal(fresh?.checkpoint.channel_values["topic"], "trip");

      // A list that does not extend the log (a removal, a fork) stays in the state; the log keeps its 3.
      const forked = checkpoint({ messages: [m1, m3] });
      await saver.put(config, forked, meta(3), forked.channel_versions);
      assert.equal((await client.getRun({ runId: run })).run?.messageCount, 3n);
      const back = await saverOf().getTuple({ configurable: { thread_id: "chat" } });
      assert.deepEqual((back?.checkpoint.channel_values["messages"] as HumanMessage[]).map((m) => m.id), ["m1", "m3"]);
    });

    test("exclusive: a saver superseded by another exclusive one is refused; a shared one adopts the epoch", async () => {
      const first = new CheckpointdSaver({ baseUrl: server.baseUrl, tenant, exclusive: true });
      const shared = saverOf();
      const [a, b, c, d] = [checkpoint({ n: 0 }), checkpoint({ n: 1 }), checkpoint({ n: 2 }), checkpoint({ n: 3 })];
      const root = { configurable: { thread_id: "owned", checkpoint_ns: "" } };
      const childOf = (id: string) => ({ configurable: { thread_id: "owned", checkpoint_ns: "", checkpoint_id: id } });
      await first.put(root, a, meta(0), a.channel_versions);
      await shared.put(childOf(a.id), b, meta(1), b.channel_versions);
      const second = new CheckpointdSaver({ baseUrl: server.baseUrl, tenant, exclusive: true });
      await second.put(childOf(b.id), c, meta(2), c.channel_versions);
      await assert.rejects(first.put(childOf(c.id), d, meta(3), d.channel_versions), (error: unknown) => error instanceof ThreadTakenOver);
      // LangGraph's default: any process may write a thread in turn, adopting the new epoch.
      await shared.put(childOf(c.id), d, meta(3), d.channel_versions);
      assert.equal((await saverOf().getTuple(root))?.checkpoint.id, d.id);
    });

    test("with a server without RecordToolResults, writes go one by one and saves checksum the whole journal", async () => {
      let single = 0;
      let refused = false;
      const legacy: CheckpointClient = {
        ...client,
        recordToolResults: () => {
          refused = true;
          return Promise.reject(new CheckpointdError(new ConnectError("not here", Code.Unimplemented)));
        },
        recordToolResult: (request) => (single++, client.recordToolResult(request)),
        save: (request) => {
          // Once the saver learnt what the server lacks, it sends no tool_count.
          if (refused) assert.equal(request.toolCount, undefined, "such a server knows no tool_count");
          return client.save(request);
        },
      };
      const saver = new CheckpointdSaver({ client: legacy });
      const [a, b] = [checkpoint({ n: 0 }), checkpoint({ n: 1 })];
      const first = await saver.put({ configurable: { thread_id: "legacy", checkpoint_ns: "" } }, a, meta(0), a.channel_versions);
      await saver.putWrites(first, [["n", 1], ["n", 2]], "task-1");
      await saver.put(first, b, meta(1), b.channel_versions);
      assert.equal(single, 2);
      assert.deepEqual((await saverOf().getTuple(first))?.pendingWrites, [["task-1", "n", 1], ["task-1", "n", 2]]);
    });

    test("deleteThread removes every namespace; prune keeps the newest checkpoint", async () => {
      const saver = saverOf();
      const ids = await chain(saver, "gone", 3);
      const child = checkpoint({ x: 1 });
      await saver.put({ configurable: { thread_id: "gone", checkpoint_ns: "sub:1" } }, child, meta(0), child.channel_versions);
      await saver.prune(["gone"]);
      const left = [];
      for await (const tuple of saver.list({ configurable: { thread_id: "gone" } })) left.push(tuple.checkpoint.id);
      assert.deepEqual(left.sort(), [ids[2], child.id].sort());
      await saver.deleteThread("gone");
      assert.equal(await saver.getTuple({ configurable: { thread_id: "gone" } }), undefined);
      assert.equal(await saver.getTuple({ configurable: { thread_id: "gone", checkpoint_ns: "sub:1" } }), undefined);
    });
  });
}
