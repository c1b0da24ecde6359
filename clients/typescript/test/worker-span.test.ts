/**
 * An OpenTelemetry span per save: the worker, run in this process against a real server on
 * SQLite and Postgres, records exactly one `checkpoint.save` span per checkpoint it wrote (the
 * store's), with the run, step, size and latency, on whatever tracer provider the host
 * registered through `@opentelemetry/api` (here a tiny recording one written for the test: the
 * package has no SDK).
 */

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import {
  context,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";

import { CheckpointStore, Worker, createCheckpointClient, createTaskClient } from "../src/index.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";
import { FIXTURE_AGENT, agentDir } from "./worker-harness.js";

interface Recorded {
  name: string;
  attributes: Attributes;
  status: SpanStatus | undefined;
  ended: boolean;
}

/** A span that remembers its name, attributes, status and whether it ended. */
class RecordingSpan implements Span {
  constructor(readonly record: Recorded) {}
  spanContext(): SpanContext {
    return { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 };
  }
  setAttribute(key: string, value: Attributes[string]): this {
    if (value !== undefined) this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.record.name = name;
    return this;
  }
  end(): void {
    this.record.ended = true;
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(): void {}
}

/** A tracer (and its provider) that keeps every span it started. */
class RecordingTracer implements Tracer, TracerProvider {
  readonly spans: Recorded[] = [];
  getTracer(): Tracer {
    return this;
  }
  startSpan(name: string, options: SpanOptions = {}): Span {
    const record: Recorded = { name, attributes: { ...options.attributes }, status: undefined, ended: false };
    this.spans.push(record);
    return new RecordingSpan(record);
  }
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F;
    const [options, parent] = rest as [SpanOptions | undefined, Context | undefined];
    const span = this.startSpan(name, options);
    return context.with(trace.setSpan(parent ?? context.active(), span), () => fn(span)) as ReturnType<F>;
  }
}

const tracer = new RecordingTracer();
trace.setGlobalTracerProvider(tracer);

for (const backend of BACKENDS) {
  describe(`worker spans on ${backend}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    test("every save the worker makes is one ended checkpoint.save span with the run, step, size and latency", async () => {
      const dir = agentDir();
      process.env["AGENT_DIR"] = dir;
      try {
        const options = { baseUrl: server.baseUrl };
        const tasks = createTaskClient(options);
        const checkpoints = createCheckpointClient(options);
        await tasks.enqueue({ runId: `ts-span-${backend}`, input: new TextEncoder().encode("{}") });
        const { agent } = (await import(FIXTURE_AGENT)) as { agent: ConstructorParameters<typeof Worker>[0] };
        const store = new CheckpointStore({ backend: checkpoints });
        tracer.spans.length = 0;
        const report = await new Worker(agent, tasks, store, { exitAfter: 1, pollIntervalMs: 50 }).run();
        assert.deepEqual(report.ends.map((e) => e.end), ["completed"]);

        const saved = (await checkpoints.listCheckpoints({ runId: `ts-span-${backend}` })).checkpoints;
        const spans = tracer.spans.filter((s) => s.name === "checkpoint.save");
        assert.equal(spans.length, saved.length);
        assert.deepEqual(spans.map((s) => s.attributes["checkpoint.step"]), saved.map((c) => Number(c.step)));
        for (const span of spans) {
          assert.equal(span.ended, true);
          assert.equal(span.attributes["checkpoint.run_id"], `ts-span-${backend}`);
          assert.ok(Number(span.attributes["checkpoint.bytes"]) > 0);
          assert.equal(typeof span.attributes["checkpoint.save.latency_ms"], "number");
          assert.equal(span.status, undefined);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
