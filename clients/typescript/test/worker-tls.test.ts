/**
 * `checkpointd-worker`'s TLS flags against a real `checkpointd serve` asking for client
 * certificates (mTLS), with certificates made by openssl for the test: the worker completes a
 * task given `--ca-cert/--client-cert/--client-key` or their CHECKPOINTD_* variables, and
 * without a client certificate it claims nothing and says why.
 */

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, afterEach, before, test } from "node:test";

import { TaskState, createTaskClient, type CheckpointdTlsOptions, type TaskClient } from "../src/index.js";
import { makeCerts, type TestCerts } from "./certs.js";
import { startServer, type TestServer } from "./server.js";
import { agentDir, startWorker, waitUntil, type WorkerProcess } from "./worker-harness.js";

let certs: TestCerts;
let server: TestServer;
const started: WorkerProcess[] = [];
const dirs: string[] = [];

before(async () => {
  certs = makeCerts();
  const mtls: CheckpointdTlsOptions = { caCert: certs.caCert, clientCert: certs.clientCert, clientKey: certs.clientKey };
  server = await startServer({
    args: ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-client-ca", certs.caCert],
    tls: mtls,
  });
});

after(async () => {
  await server?.stop();
  certs?.remove();
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.kill()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tasksOf(tenant: string): TaskClient {
  const tls = { caCert: certs.caCert, clientCert: certs.clientCert, clientKey: certs.clientKey };
  return createTaskClient({ baseUrl: server.baseUrl, tenant, tls });
}

/** Enqueues a task of `runId` in its own tenant and starts a worker there with `args` and `env`. */
async function workerFor(runId: string, args: string[], env: Record<string, string> = {}) {
  const tasks = tasksOf(runId);
  const input = new TextEncoder().encode(JSON.stringify({ goal: runId }));
  const taskId = (await tasks.enqueue({ runId, input })).task!.taskId;
  const dir = agentDir();
  dirs.push(dir);
  const worker = startWorker(server, runId, dir, args, env);
  started.push(worker);
  return { tasks, taskId, worker };
}

test("the worker completes a task over mTLS with --ca-cert, --client-cert and --client-key", async () => {
  assert.ok(server.baseUrl.startsWith("https://"));
  const tls = ["--ca-cert", certs.caCert, "--client-cert", certs.clientCert, "--client-key", certs.clientKey];
  const { tasks, taskId, worker } = await workerFor("ts-worker-tls-flags", [...tls, "--exit-after", "1"]);
  const out = await worker.finish();
  assert.equal((await tasks.get({ taskId })).task!.state, TaskState.COMPLETED, out);
});

test("the worker takes the certificates from CHECKPOINTD_CA_CERT, _CLIENT_CERT and _CLIENT_KEY", async () => {
  const env = { CHECKPOINTD_CA_CERT: certs.caCert, CHECKPOINTD_CLIENT_CERT: certs.clientCert, CHECKPOINTD_CLIENT_KEY: certs.clientKey };
  const { tasks, taskId, worker } = await workerFor("ts-worker-tls-env", ["--exit-after", "1"], env);
  const out = await worker.finish();
  assert.equal((await tasks.get({ taskId })).task!.state, TaskState.COMPLETED, out);
});

test("a worker without a client certificate claims nothing and says why", async () => {
  const { tasks, taskId, worker } = await workerFor("ts-worker-tls-no-cert", ["--ca-cert", certs.caCert]);
  await waitUntil(() => /claim failed/.test(worker.stderr()), "the worker to report its failed claim");
  assert.match(worker.stderr(), /certificate required.*pass tls\.clientCert and tls\.clientKey/s);
  assert.equal(worker.child.exitCode, null, "a failed claim is retried, not fatal");
  assert.equal((await tasks.get({ taskId })).task!.state, TaskState.PENDING);
});
