/**
 * The flags (and environment variables) of `checkpointd-worker`, the same as the Python
 * worker's, read into the client options and the worker's options.
 */

import { parseArgs } from "node:util";

import type { CheckpointdClientOptions } from "../client.js";
import { resolveBaseUrl } from "../address.js";
import { DEFAULT_FATAL_PATTERNS, ErrorClassifier } from "../classify.js";
import { Strategy } from "../strategy.js";
import { parseDuration } from "./duration.js";

export const USAGE = `usage: checkpointd-worker MODULE[:EXPORT] [options]

Claims tasks from checkpointd's queue and drives the agent MODULE exports (a step function, or
an object with step(ctx) and optionally initialState(task)) through the recovery loop.

  --server URL              CHECKPOINTD_SERVER (http://127.0.0.1:50051)
  --tenant T                CHECKPOINTD_TENANT
  --token TOKEN             CHECKPOINTD_TOKEN, sent as authorization: Bearer
  --ca-cert, --client-cert, --client-key PEM paths for TLS and mTLS (CHECKPOINTD_CA_CERT, ...)
  --worker-id ID            CHECKPOINTD_WORKER_ID (host-pid)
  --concurrency N           CHECKPOINTD_WORKER_CONCURRENCY (4)
  --lease D                 CHECKPOINTD_WORKER_LEASE (30s)
  --poll-interval D         (500ms)
  --strategy S              CHECKPOINTD_STRATEGY (every_n:3)
  --max-resurrections N     CHECKPOINTD_MAX_RESURRECTIONS (3)
  --cooldown D              CHECKPOINTD_RESURRECTION_COOLDOWN (2s)
  --drain-deadline D        (10s)
  --max-steps N
  --fatal-pattern TEXT      message fragment of fatal errors (repeatable)
  --exit-after N            stop after N tasks ended here
Durations: 500ms, 30s, 2m, 1h or seconds.`;

function integer(name: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`--${name} expects a whole number, not ${JSON.stringify(text)}`);
  return Number(text);
}

/** The flags and environment read into the worker's pieces; throws naming a bad value. */
export function parseWorkerArgs(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      server: { type: "string", default: env["CHECKPOINTD_SERVER"] ?? "http://127.0.0.1:50051" },
      tenant: { type: "string" },
      token: { type: "string" },
      "ca-cert": { type: "string" },
      "client-cert": { type: "string" },
      "client-key": { type: "string" },
      "worker-id": { type: "string" },
      concurrency: { type: "string", default: env["CHECKPOINTD_WORKER_CONCURRENCY"] ?? "4" },
      lease: { type: "string", default: env["CHECKPOINTD_WORKER_LEASE"] ?? "30s" },
      "poll-interval": { type: "string", default: "500ms" },
      strategy: { type: "string", default: env["CHECKPOINTD_STRATEGY"] ?? "every_n:3" },
      "max-resurrections": { type: "string", default: env["CHECKPOINTD_MAX_RESURRECTIONS"] ?? "3" },
      cooldown: { type: "string", default: env["CHECKPOINTD_RESURRECTION_COOLDOWN"] ?? "2s" },
      "drain-deadline": { type: "string", default: "10s" },
      "max-steps": { type: "string" },
      "fatal-pattern": { type: "string", multiple: true, default: [] },
      "exit-after": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return undefined;
  if (positionals.length !== 1) throw new Error("expected one agent, MODULE[:EXPORT]");
  const agent = positionals[0]!;
  const caCert = values["ca-cert"] ?? env["CHECKPOINTD_CA_CERT"];
  const clientCert = values["client-cert"] ?? env["CHECKPOINTD_CLIENT_CERT"];
  const clientKey = values["client-key"] ?? env["CHECKPOINTD_CLIENT_KEY"];
  const tenant = values.tenant ?? env["CHECKPOINTD_TENANT"];
  const token = values.token ?? env["CHECKPOINTD_TOKEN"];
  const workerId = values["worker-id"] ?? env["CHECKPOINTD_WORKER_ID"];
  const client: CheckpointdClientOptions = {
    // host:port is plaintext unless a TLS option is given, as the Python worker's --server.
    baseUrl: resolveBaseUrl(values.server, caCert !== undefined || clientCert !== undefined || clientKey !== undefined, "--server"),
    ...(tenant === undefined ? {} : { tenant }),
    ...(token === undefined ? {} : { token }),
    ...(caCert === undefined && clientCert === undefined && clientKey === undefined
      ? {}
      : {
          tls: {
            ...(caCert === undefined ? {} : { caCert }),
            ...(clientCert === undefined ? {} : { clientCert }),
            ...(clientKey === undefined ? {} : { clientKey }),
          },
        }),
  };
  const maxSteps = values["max-steps"];
  const exitAfter = values["exit-after"];
  return {
    agent,
    client,
    worker: {
      ...(workerId === undefined ? {} : { workerId }),
      concurrency: integer("concurrency", values.concurrency),
      leaseMs: parseDuration(values.lease),
      pollIntervalMs: parseDuration(values["poll-interval"]),
      ...(exitAfter === undefined ? {} : { exitAfter: integer("exit-after", exitAfter) }),
      recovery: {
        strategy: Strategy.parse(values.strategy),
        maxResurrections: integer("max-resurrections", values["max-resurrections"]),
        cooldownMs: parseDuration(values.cooldown),
        classifier: new ErrorClassifier([...DEFAULT_FATAL_PATTERNS, ...values["fatal-pattern"]]),
        drainDeadlineMs: parseDuration(values["drain-deadline"]),
        ...(maxSteps === undefined ? {} : { maxSteps: integer("max-steps", maxSteps) }),
      },
    },
  };
}
