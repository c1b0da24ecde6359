/**
 * Typed clients for checkpointd over gRPC (Connect-ES's gRPC transport on Node's HTTP/2): a base
 * URL, an optional bearer token and tenant sent on every call, a default deadline, and every
 * refusal thrown as a {@link CheckpointdError} with its gRPC code and ErrorInfo reason.
 */

import { readFileSync } from "node:fs";

import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import type { GrpcTransportOptions } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";

import { CheckpointService } from "./gen/checkpoint/v1/checkpoint_pb.js";
import { TaskService } from "./gen/checkpoint/v1/task_pb.js";
import { CheckpointdError } from "./errors.js";
import { createFastGrpcTransport } from "./transport.js";
import { resolveBaseUrl } from "./address.js";
import { DEFAULT_CONNECT_TIMEOUT_MS } from "./readiness.js";

export { DEFAULT_CONNECT_TIMEOUT_MS } from "./readiness.js";
export { resolveBaseUrl } from "./address.js";

/** The deadline of a call that names none, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The largest answer message read, in bytes: above the server's unpaged answer limit (16 MiB of
 * messages by default) with room for state and journal, so a large load is never cut short here.
 */
export const DEFAULT_READ_MAX_BYTES = 64 * 1024 * 1024;
/**
 * The largest request message written, in bytes: the server's default `--max-request-bytes`
 * (16 MiB) and more, so the server, not the client, is the one to refuse a large Save.
 */
export const DEFAULT_WRITE_MAX_BYTES = 64 * 1024 * 1024;

/** A PEM file's path, or its contents (a string that holds `-----BEGIN`, or bytes). */
export type PemSource = string | Uint8Array;

/** TLS towards an `https://` base URL: the CA to trust and, for mTLS, the client's identity. */
export interface CheckpointdTlsOptions {
  /** PEM CA bundle that signed the server's certificate; Node's default roots when absent. */
  caCert?: PemSource;
  /** PEM certificate chain presented to a server that asks for one (`--tls-client-ca`). */
  clientCert?: PemSource;
  /** PEM private key of `clientCert`. */
  clientKey?: PemSource;
}

export interface CheckpointdClientOptions {
  /**
   * The server: `http://127.0.0.1:50051`, `https://host:50443` (a TLS port), or `host:port`
   * (plaintext, or TLS when `tls` is given), as the Python client takes it.
   */
  baseUrl: string;
  /** A bearer credential (API key or JWT), sent as `authorization: Bearer <token>`. */
  token?: string;
  /** The tenant, sent as `x-tenant-id`; with auth on, the credential's tenant decides. */
  tenant?: string;
  /** Deadline of a call that sets none itself; defaults to {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /**
   * How long a call waits for a server that is not up yet (connection refused), within its own
   * deadline, before it fails with UNAVAILABLE; defaults to {@link DEFAULT_CONNECT_TIMEOUT_MS}
   * (5 s, as the Python client). 0 fails at once.
   */
  connectTimeoutMs?: number;
  /** Largest answer message accepted; defaults to {@link DEFAULT_READ_MAX_BYTES}. */
  readMaxBytes?: number;
  /** Largest request message sent; defaults to {@link DEFAULT_WRITE_MAX_BYTES}. */
  writeMaxBytes?: number;
  /** TLS (and mTLS) towards an `https://` base URL; merged over `nodeOptions`. */
  tls?: CheckpointdTlsOptions;
  /** Node's HTTP/2 session options, passed as they are (`tls` sets `ca`, `cert` and `key`). */
  nodeOptions?: GrpcTransportOptions["nodeOptions"];
  /**
   * Connect interceptors around every call, after the credential and tenant headers are set.
   * Without any, unary calls take a shorter path (see transport.ts).
   */
  interceptors?: Interceptor[];
}

/** The headers that carry the credential and the tenant on every call that does not set them. */
export function credentialHeaders(token?: string, tenant?: string): Record<string, string> {
  return {
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...(tenant === undefined ? {} : { "x-tenant-id": tenant }),
  };
}

/** Node's code of a TLS failure somewhere in an error's causes, or undefined. */
function tlsErrorCode(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    if (/^ERR_(SSL|TLS)_/.test(code) || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) return code;
  }
  return undefined;
}

function tlsHint(code: string): string {
  if (/CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA/.test(code)) {
    return "the server asks for a client certificate it trusts: pass tls.clientCert and tls.clientKey";
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return "the server's certificate does not name the base URL's host";
  if (/SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) {
    return "the server's certificate is not signed by a trusted CA: pass tls.caCert, the CA that signed it";
  }
  return "check the TLS options";
}

/**
 * Turns a failed TLS handshake (which Connect reports as INTERNAL) into UNAVAILABLE, as gRPC
 * reports it, with a message naming the server and what to fix; other errors pass unchanged.
 */
export function tlsFailure(baseUrl: string): (error: unknown) => unknown {
  return (error) => {
    const code = tlsErrorCode(error);
    if (code === undefined) return error;
    const detail = error instanceof ConnectError ? error.rawMessage : String(error);
    return new ConnectError(`TLS handshake with ${baseUrl} failed: ${detail} (${code}; ${tlsHint(code)})`,
      Code.Unavailable, undefined, undefined, error);
  };
}

/** The PEM text of a path or of contents given as they are. */
export function readPem(source: PemSource, what: string): string | Buffer {
  if (typeof source !== "string") return Buffer.from(source);
  if (source.includes("-----BEGIN")) return source;
  try {
    return readFileSync(source);
  } catch (error) {
    throw new Error(`checkpointd client: cannot read the ${what} at ${source}: ${String(error)}`, { cause: error });
  }
}

/** `nodeOptions` with the `tls` options merged in; throws on options that cannot work. */
function sessionOptions(options: CheckpointdClientOptions, baseUrl: string): GrpcTransportOptions["nodeOptions"] {
  const tls = options.tls;
  if (tls === undefined) return options.nodeOptions;
  if (!baseUrl.startsWith("https://")) {
    throw new Error(`checkpointd client: TLS options need an https:// base URL, not ${baseUrl}`);
  }
  if ((tls.clientCert === undefined) !== (tls.clientKey === undefined)) {
    throw new Error("checkpointd client: clientCert and clientKey go together (mTLS needs both)");
  }
  return {
    ...(options.nodeOptions ?? {}),
    ...(tls.caCert === undefined ? {} : { ca: readPem(tls.caCert, "CA certificate") }),
    ...(tls.clientCert === undefined ? {} : { cert: readPem(tls.clientCert, "client certificate") }),
    ...(tls.clientKey === undefined ? {} : { key: readPem(tls.clientKey, "client key") }),
  };
}

/** One gRPC transport (one HTTP/2 connection) that several service clients may share. */
export function createCheckpointdTransport(options: CheckpointdClientOptions): Transport {
  const baseUrl = resolveBaseUrl(options.baseUrl, options.tls !== undefined);
  const nodeOptions = sessionOptions(options, baseUrl);
  return createFastGrpcTransport({
    baseUrl,
    defaultTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    readMaxBytes: options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
    writeMaxBytes: options.writeMaxBytes ?? DEFAULT_WRITE_MAX_BYTES,
    callHeaders: credentialHeaders(options.token, options.tenant),
    mapError: tlsFailure(baseUrl),
    interceptors: options.interceptors ?? [],
    ...(nodeOptions === undefined ? {} : { nodeOptions }),
  });
}

async function* rethrowingStream<T>(stream: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (error) {
    throw CheckpointdError.from(error);
  }
}

/**
 * A Connect client of `service` whose calls throw {@link CheckpointdError} instead of Connect's
 * own error, unary and server-streaming alike.
 */
function typedErrors<S extends DescService>(service: S, client: Client<S>): Client<S> {
  const wrapped: Record<string, unknown> = {};
  const methods = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of service.methods) {
    const call = methods[method.localName];
    if (call === undefined) continue;
    wrapped[method.localName] =
      method.methodKind === "server_streaming"
        ? (...args: unknown[]) => rethrowingStream(call(...args) as AsyncIterable<unknown>)
        : async (...args: unknown[]) => {
            try {
              return await call(...args);
            } catch (error) {
              throw CheckpointdError.from(error);
            }
          };
  }
  return wrapped as Client<S>;
}

/** A client of CheckpointService: save, load, resume, the tool journal and the run's admin. */
export type CheckpointClient = Client<typeof CheckpointService>;
/** A client of TaskService: the durable task queue. */
export type TaskClient = Client<typeof TaskService>;

/** A CheckpointService client, on its own transport or on a shared one. */
export function createCheckpointClient(
  options: CheckpointdClientOptions,
  transport: Transport = createCheckpointdTransport(options),
): CheckpointClient {
  return typedErrors(CheckpointService, createClient(CheckpointService, transport));
}

/** A TaskService client, on its own transport or on a shared one. */
export function createTaskClient(
  options: CheckpointdClientOptions,
  transport: Transport = createCheckpointdTransport(options),
): TaskClient {
  return typedErrors(TaskService, createClient(TaskService, transport));
}
