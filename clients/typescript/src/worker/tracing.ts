/**
 * An OpenTelemetry span per save, through `@opentelemetry/api` only: `checkpoint.save` (kind
 * CLIENT) with the Python client's attributes (`checkpoint.run_id`, `checkpoint.step`,
 * `checkpoint.bytes`, `checkpoint.save.latency_ms`), and a refused save recorded as an error.
 * The spans go to whatever tracer provider the host process registered; with none they cost
 * nothing, so the package carries no SDK.
 */

import { SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";

import type { CheckpointClient } from "../client.js";

/** The instrumentation scope the spans are recorded under. */
export const TRACER_NAME = "checkpointd";

type Save = CheckpointClient["save"];

/** `backend` with every `save` call wrapped in a `checkpoint.save` span; other calls untouched. */
export function withSaveSpans<B extends { save: Save }>(backend: B, tracer: Tracer = trace.getTracer(TRACER_NAME)): B {
  const save: Save = (request, options) =>
    tracer.startActiveSpan(
      "checkpoint.save",
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "checkpoint.run_id": request.runId ?? "",
          "checkpoint.step": Number(request.step ?? 0n),
          "checkpoint.bytes": request.state?.length ?? 0,
        },
      },
      async (span) => {
        const started = performance.now();
        try {
          return await backend.save(request, options);
        } catch (error) {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          span.setAttribute("checkpoint.save.latency_ms", performance.now() - started);
          span.end();
        }
      },
    );
  // A proxy rather than a copy: every other call reaches the backend itself, bound as it was.
  return new Proxy(backend, { get: (target, key, receiver) => (key === "save" ? save : Reflect.get(target, key, receiver)) });
}
