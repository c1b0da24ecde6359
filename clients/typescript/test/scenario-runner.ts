/**
 * The runner of the shared client scenarios (tests/scenarios/*.json, format in its README.md)
 * for this package: each step's RPC goes through the typed clients of src/client.ts, so the
 * scenarios hold this client's errors, checksum v1 and verification to what every client must
 * show. The Python package runs the same files (clients/python/tests/scenarios.py).
 */

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { fromJson, toJson, type DescMethod, type JsonValue } from "@bufbuild/protobuf";

import {
  CheckpointService,
  CheckpointdError,
  MessageChain,
  TaskService,
  checkpointChecksum,
  createCheckpointClient,
  createCheckpointdTransport,
  createTaskClient,
  idempotencyKey,
  verifyCheckpoint,
  type Checkpoint,
  type CheckpointClient,
  type CheckpointdClientOptions,
  type LoadLatestResponse,
  type RecordToolIntentResponse,
  type RecordToolResultResponse,
  type ResumeResponse,
  type SaveRequest,
  type TaskClient,
  type ToolIntent,
  type ToolResult,
} from "../src/index.js";
import { repoRoot } from "./repo.js";
import { python, referenceExample, sideEffectAgent } from "./scenario-agents.js";
import { journalOf, toolChainOf, type JournalEntry } from "./scenario-journal.js";
import type { TestServer } from "./server.js";

/** The tenant a call without a credential acts in. */
const DEFAULT_TENANT = "default";

type Json = JsonValue;
type JsonObject = { [key: string]: Json };

/** One step of a scenario; exactly one of call, corrupt, cli, continue and agent is set. */
export interface Step {
  call?: string;
  request?: JsonObject;
  as?: string;
  token?: string;
  tenant?: string;
  checksum?: "client" | "wrong" | "upper";
  verify?: boolean;
  bind?: Record<string, string>;
  corrupt?: { runId: string; step?: number; callId?: string };
  cli?: string[];
  continue?: { runId: string };
  agent?: "reference-example" | "side-effect-agent";
  runId?: string;
  kill?: string;
  by?: "other";
  expect?: JsonObject;
}

export interface Scenario {
  summary: string;
  requires?: string[];
  server?: { args?: string[]; auth?: string; keys?: Record<string, { tenant: string; role: string }> };
  steps: Step[];
}

/** Every scenario, by its file's stem. */
export function loadScenarios(): Map<string, Scenario> {
  const dir = join(repoRoot(), "tests", "scenarios");
  const names = readdirSync(dir).filter((name) => name.endsWith(".json")).sort();
  return new Map(
    names.map((name) => [name.slice(0, -5), JSON.parse(readFileSync(join(dir, name), "utf8")) as Scenario]),
  );
}

/** The checkpointd binary the test servers run. */
export function checkpointdBin(): string {
  return process.env["CHECKPOINTD_BIN"] ?? join(repoRoot(), "target", "release", "checkpointd");
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `{"$utf8": TEXT}` anywhere becomes TEXT's UTF-8 bytes in base64, as proto JSON writes bytes. */
export function expandBytes(value: Json): Json {
  if (Array.isArray(value)) return value.map(expandBytes);
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "$utf8") return Buffer.from(String(value["$utf8"]), "utf8").toString("base64");
  return Object.fromEntries(keys.map((key) => [key, expandBytes(value[key] as Json)]));
}

/** A scalar as the spec compares it: 3 and "3" (proto JSON's int64) are the same. */
function scalar(value: Json | undefined): string {
  return String(value);
}

/** What proto JSON leaves out: zero, false, empty and the UNSPECIFIED enum value. */
function isDefault(value: Json): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  const text = scalar(value);
  return text === "0" || text === "false" || text === "" || text.endsWith("_UNSPECIFIED");
}

/** Fails unless `actual` holds `expected`: objects by subset, arrays whole, scalars by text. */
export function match(expected: Json, actual: Json | undefined, where = ""): void {
  if (isObject(expected)) {
    const got = actual ?? {};
    assert.ok(isObject(got), `${where}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in got)) {
        assert.ok(isDefault(value), `${where}.${key}: expected ${JSON.stringify(value)}, absent`);
        continue;
      }
      match(value, got[key], `${where}.${key}`);
    }
  } else if (Array.isArray(expected)) {
    const got = actual ?? [];
    assert.ok(Array.isArray(got), `${where}: expected a list, got ${JSON.stringify(actual)}`);
    const items = `${where}: expected ${expected.length} items, got ${JSON.stringify(got)}`;
    assert.equal(got.length, expected.length, items);
    expected.forEach((want, index) => match(want, got[index], `${where}[${index}]`));
  } else {
    const differs = `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    assert.equal(scalar(actual), scalar(expected), differs);
  }
}

/** The value at a dotted path (`tasks.0.attempt`) of a response's proto JSON. */
function lookup(value: Json, path: string): Json {
  let current: Json | undefined = value;
  for (const part of path.split(".")) {
    current = Array.isArray(current) ? current[Number(part)] : isObject(current) ? current[part] : undefined;
  }
  assert.ok(current !== undefined, `no ${path} in ${JSON.stringify(value)}`);
  return current;
}

/** What this runner saw of a run: its message log and journal, for client checksums. */
class RunView {
  messages: Array<{ role: string; content: Uint8Array }> = [];
  journal = new Map<bigint, JournalEntry>();

  /** A load or Resume returned the run as the server holds it: start over from that. */
  restored(checkpoint: Checkpoint | undefined, results: ToolResult[], intents: ToolIntent[], scratch: boolean): void {
    if (checkpoint !== undefined && checkpoint.messagesOffset === 0n) this.messages = [...checkpoint.messages];
    else if (scratch) this.messages = [];
    this.journal = new Map(journalOf(results, intents).map((entry) => [entry.entry.seq, entry]));
  }
}

/** One RPC of either service, by its proto name (the two services' names are disjoint). */
function methodOf(name: string): { service: "checkpoints" | "tasks"; method: DescMethod } {
  const inCheckpoints = CheckpointService.methods.find((m) => m.name === name);
  if (inCheckpoints !== undefined) return { service: "checkpoints", method: inCheckpoints };
  const inTasks = TaskService.methods.find((m) => m.name === name);
  assert.ok(inTasks !== undefined, `no RPC named ${name}`);
  return { service: "tasks", method: inTasks };
}

/** Runs one scenario's steps against a server. */
export class Runner {
  private readonly vars = new Map<string, Json>();
  private readonly runs = new Map<string, RunView>();
  private readonly connections = new Map<string, { checkpoints: CheckpointClient; tasks: TaskClient }>();

  /** `work`: a scratch folder for the agent programs' logs. */
  constructor(
    private readonly server: TestServer,
    private readonly keys: ReadonlyMap<string, { token: string; tenant: string }>,
    private readonly work: string,
  ) {}

  async run(scenario: Scenario): Promise<void> {
    for (const [index, step] of scenario.steps.entries()) {
      const kind = (["call", "corrupt", "cli", "continue", "agent"] as const).find((k) => k in step);
      try {
        if (kind === "call") await this.call(step);
        else if (kind === "corrupt") this.corrupt(step);
        else if (kind === "cli") this.cli(step);
        else if (kind === "continue") this.continueRun(step);
        else if (kind === "agent") await this.agent(step);
        else throw new Error(`step ${index}: ${kind ?? "no kind"} steps are not run by this runner`);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new Error(`step ${index} (${kind} ${JSON.stringify(step[kind!])}): ${detail}`, { cause: error });
      }
    }
  }

  /**
   * `${name}` becomes a bound value (kept whole when it is the entire string);
   * `${idempotencyKey:RUN:CALL}` the key v1 of that call in the default tenant.
   */
  private substitute(value: Json): Json {
    if (Array.isArray(value)) return value.map((v) => this.substitute(v));
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.substitute(v)]));
    if (typeof value !== "string") return value;
    const whole = /^\$\{([^}]+)\}$/.exec(value);
    if (whole) return this.variable(whole[1]!);
    return value.replace(/\$\{([^}]+)\}/g, (_, name: string) => scalar(this.variable(name)));
  }

  private variable(name: string): Json {
    if (name.startsWith("idempotencyKey:")) {
      const [, runId, ...call] = name.split(":");
      return idempotencyKey(DEFAULT_TENANT, runId!, call.join(":"));
    }
    const value = this.vars.get(name);
    assert.ok(value !== undefined, `\${${name}} is not bound yet (bound: ${[...this.vars.keys()].join(", ")})`);
    return value;
  }

  private view(runId: string): RunView {
    let view = this.runs.get(runId);
    if (view === undefined) this.runs.set(runId, (view = new RunView()));
    return view;
  }

  /** The step's clients of both services on one connection, made once per credential and tenant. */
  private clients(step: Step): { checkpoints: CheckpointClient; tasks: TaskClient } {
    const options = this.clientOptions(step);
    const key = `${options.token ?? ""}\n${options.tenant ?? ""}`;
    let clients = this.connections.get(key);
    if (clients === undefined) {
      const transport = createCheckpointdTransport(options);
      clients = { checkpoints: createCheckpointClient(options, transport), tasks: createTaskClient(options, transport) };
      this.connections.set(key, clients);
    }
    return clients;
  }

  private clientOptions(step: Step): CheckpointdClientOptions {
    let token = step.token;
    let tenant = step.tenant;
    if (step.as !== undefined) {
      const key = this.keys.get(step.as);
      assert.ok(key, `no key named ${step.as}`);
      token = key.token;
      tenant = tenant ?? key.tenant;
    }
    return {
      baseUrl: this.server.baseUrl,
      ...(token === undefined ? {} : { token }),
      ...(tenant === undefined ? {} : { tenant }),
    };
  }

  private async call(step: Step): Promise<void> {
    const name = step.call!;
    const { service, method } = methodOf(name);
    const body = this.substitute(expandBytes(step.request ?? {}));
    const request = fromJson(method.input, body);
    if (step.checksum !== undefined) this.withChecksum(request as SaveRequest, step.checksum);
    const clients = this.clients(step);
    // Called by the method's name: the request was built from the method's own descriptor.
    const client = clients[service] as unknown as Record<string, (request: unknown) => Promise<unknown>>;
    const expect: JsonObject = step.expect ?? { ok: {} };
    let response: unknown;
    try {
      response = await client[method.localName]!(request);
    } catch (error) {
      if (!(error instanceof CheckpointdError)) throw error;
      assert.ok("error" in expect, `expected success, got ${error.message}`);
      const want = this.substitute(expect["error"] as Json) as JsonObject;
      assert.equal(error.codeName, want["code"], `expected ${String(want["code"])}, got ${error.message}`);
      assert.equal(error.reason, want["reason"], `expected reason ${String(want["reason"])}, got ${error.message}`);
      for (const [key, value] of Object.entries((want["metadata"] as JsonObject | undefined) ?? {})) {
        assert.equal(error.metadata[key], value, `metadata ${key}: ${JSON.stringify(error.metadata)}`);
      }
      return;
    }
    assert.ok("ok" in expect, `expected ${JSON.stringify(expect["error"])}, the call succeeded`);
    const answer = toJson(method.output, response as never);
    this.observe(name, request, response);
    if (step.verify) {
      const loaded = response as { checkpoint?: Checkpoint; toolResults: ToolResult[]; toolIntents: ToolIntent[] };
      assert.ok(loaded.checkpoint, "no checkpoint to verify");
      const verified = verifyCheckpoint(loaded.checkpoint, loaded.toolResults, loaded.toolIntents);
      assert.ok(verified.valid, `not verified: ${verified.problem}`);
    }
    match(this.substitute(expandBytes(expect["ok"] as Json)), answer, name);
    for (const [variable, path] of Object.entries(step.bind ?? {})) this.vars.set(variable, lookup(answer, path));
  }

  /**
   * Sets a Save's checksum: `client` computes v1 over this runner's view of the run, `upper`
   * is that in upper case, `wrong` a well-formed checksum of nothing.
   */
  private withChecksum(request: SaveRequest, kind: "client" | "wrong" | "upper"): void {
    const view = this.view(request.runId);
    const before = view.messages.slice(0, Number(request.messageOffset));
    const right = checkpointChecksum(
      request,
      MessageChain.over(before).extend(request.messages),
      toolChainOf([...view.journal.values()], request.toolCount),
    );
    this.vars.set("clientChecksum", right);
    request.checksum = { client: right, upper: right.toUpperCase(), wrong: "0".repeat(64) }[kind];
  }

  /** Keeps the runner's view of the run in step with what the server acknowledged. */
  private observe(name: string, request: unknown, response: unknown): void {
    const view = this.view((request as { runId: string }).runId);
    if (name === "Save") {
      const save = request as SaveRequest;
      view.messages = [...view.messages.slice(0, Number(save.messageOffset)), ...save.messages];
    } else if (name === "RecordToolResult") {
      const result = (response as RecordToolResultResponse).result!;
      view.journal.set(result.seq, { kind: "result", entry: result });
    } else if (name === "RecordToolIntent") {
      const intent = (response as RecordToolIntentResponse).intent!;
      view.journal.set(intent.seq, { kind: "intent", entry: intent });
    } else if (name === "LoadLatest" || name === "Resume") {
      const loaded = response as LoadLatestResponse | ResumeResponse;
      const scratch = "restartedFromScratch" in loaded && loaded.restartedFromScratch;
      view.restored(loaded.checkpoint, loaded.toolResults, loaded.toolIntents, scratch);
    }
  }

  /**
   * Damages a stored checkpoint's state (`step`: its first byte flipped, as a bad disk would)
   * or a journalled result's output (`callId`), straight in the server's database.
   */
  private corrupt(target: Step): void {
    const { runId, step, callId } = target.corrupt!;
    assert.match(`${runId}${callId ?? ""}`, /^[\w/-]+$/, "corrupt takes plain ids");
    const sqlite = this.server.database.startsWith("sqlite://");
    let sql: string;
    if (step !== undefined) {
      const flip = sqlite
        ? "state = CAST(CASE WHEN length(state) = 0 THEN X'00' ELSE " +
          "(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(state, 2) END AS BLOB)"
        : "state = CASE WHEN length(state) = 0 THEN '\\x00'::bytea " +
          "ELSE set_byte(state, 0, (get_byte(state, 0) + 1) % 256) END";
      sql = `UPDATE checkpoints SET ${flip} WHERE run_id = '${runId}' AND step = ${Number(step)}`;
    } else {
      const [flip, notIntent] = sqlite
        ? ["output = CAST(X'00' || substr(output, 2) AS BLOB)", "intent = 0"]
        : ["output = set_byte(output, 0, 0)", "NOT intent"];
      sql = `UPDATE tool_results SET ${flip} WHERE run_id = '${runId}' AND call_id = '${callId}' AND ${notIntent}`;
    }
    if (sqlite) {
      // Python's bundled sqlite3: the suite needs that Python anyway (the continuation program).
      const script =
        "import sqlite3, sys\nwith sqlite3.connect(sys.argv[1], timeout=10) as db:\n    db.execute(sys.argv[2])\n";
      execFileSync(python(), ["-c", script, this.server.database.slice("sqlite://".length), sql]);
    } else {
      execFileSync("psql", [this.server.database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql]);
    }
  }

  private cli(step: Step): void {
    const args = (this.substitute(step.cli!) as Json[]).map(scalar);
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("CHECKPOINTD_")));
    const done = spawnSync(checkpointdBin(), [...args, "--server", this.server.baseUrl], {
      encoding: "utf8",
      env,
      timeout: 60_000,
    });
    const expect: JsonObject = step.expect ?? { exit: 0 };
    assert.equal(done.status, expect["exit"] ?? 0, `exit ${done.status}: ${done.stderr}`);
    for (const stream of ["stdout", "stderr"] as const) {
      for (const text of (this.substitute(expect[stream] ?? []) as Json[]).map(scalar)) {
        assert.ok(done[stream].includes(text), `${stream} lacks ${text}: ${done[stream]}`);
      }
    }
  }

  /**
   * Runs a program on a client package's recovery loop (README: "agent"): this package's, or
   * with `"by": "other"` the Python package's, so a run crosses languages.
   */
  private async agent(step: Step): Promise<void> {
    const runId = step.runId;
    assert.ok(runId !== undefined, "an agent step names its runId");
    const language = step.by === "other" ? "python" : "typescript";
    let answer: Record<string, unknown> | undefined;
    if (step.agent === "reference-example") {
      assert.ok(language === "typescript" && step.kill === undefined, "the reference example runs as it is");
      answer = referenceExample(this.server.baseUrl, runId);
    } else if (step.agent === "side-effect-agent") {
      answer = await sideEffectAgent(language, this.server.baseUrl, runId, this.work, step.kill);
    } else {
      throw new Error(`no agent program named ${String(step.agent)}`);
    }
    if (answer !== undefined) match(step.expect ?? {}, answer as Json, step.agent);
    else assert.ok(step.expect === undefined, "a killed agent reports nothing to expect");
  }

  /** Hands the run to the Python client's continuation program (README: "continue"). */
  private continueRun(step: Step): void {
    const script = join(repoRoot(), "clients", "python", "tests", "fixtures", "continue_run.py");
    assert.ok(existsSync(script), `no ${script}`);
    const done = spawnSync(python(), [script, this.server.baseUrl, step.continue!.runId], {
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(
      done.status,
      0,
      `the Python continuation failed (${python()}; ` +
        `set CHECKPOINTD_PYTHON to a Python with the checkpointd package): ` +
        `${done.error?.message ?? ""}${done.stderr}`,
    );
    const answer = JSON.parse(done.stdout.trim().split("\n").at(-1)!) as JsonObject;
    assert.equal(answer["language"], "python");
    match(step.expect ?? {}, answer, "continue");
  }
}
