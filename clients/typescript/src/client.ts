/**
 * Typed clients for checkpointd over gRPC (Connect-ES's gRPC transport on Node's HTTP/2): a base
 * URL, an optional bearer token and tenant sent on every call, a default deadline, and every
 * refusal thrown as a {@link CheckpointdError} with its gRPC code and ErrorInfo reason.
 */

import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, type GrpcTransportOptions } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";

import { CheckpointService } from "./gen/checkpoint/v1/checkpoint_pb.js";
import { TaskService } from "./gen/checkpoint/v1/task_pb.js";
import { CheckpointdError } from "./errors.js";

/** The deadline of a call that names none, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The largest answer message read, in bytes: above the server's unpaged answer limit (16 MiB of
 * messages by default) with room for state and journal, so a large load is never cut short here.
 */
export const DEFAULT_READ_MAX_BYTES = 64 * 1024 * 1024;

export interface CheckpointdClientOptions {
  /** The server's URL, e.g. `http://127.0.0.1:50051` (`https://` for a TLS port). */
  baseUrl: string;
  /** A bearer credential (API key or JWT), sent as `authorization: Bearer <token>`. */
  token?: string;
  /** The tenant, sent as `x-tenant-id`; with auth on, the credential's tenant decides. */
  tenant?: string;
  /** Deadline of a call that sets none itself; defaults to {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Largest answer message accepted; defaults to {@link DEFAULT_READ_MAX_BYTES}. */
  readMaxBytes?: number;
  /** Node's HTTP/2 session options, e.g. `ca`, `cert` and `key` for TLS and mTLS. */
  nodeOptions?: GrpcTransportOptions["nodeOptions"];
  /** More interceptors, run after the one that sets the credential and tenant headers. */
  interceptors?: Interceptor[];
}

/** The interceptor that puts the credential and the tenant on every call. */
export function credentialInterceptor(token?: string, tenant?: string): Interceptor {
  return (next) => async (request) => {
    if (token !== undefined && !request.header.has("authorization")) {
      request.header.set("authorization", `Bearer ${token}`);
    }
    if (tenant !== undefined && !request.header.has("x-tenant-id")) {
      request.header.set("x-tenant-id", tenant);
    }
    return next(request);
  };
}

/** One gRPC transport (one HTTP/2 connection) that several service clients may share. */
export function createCheckpointdTransport(options: CheckpointdClientOptions): Transport {
  return createGrpcTransport({
    baseUrl: options.baseUrl,
    defaultTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    readMaxBytes: options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
    interceptors: [credentialInterceptor(options.token, options.tenant), ...(options.interceptors ?? [])],
    ...(options.nodeOptions === undefined ? {} : { nodeOptions: options.nodeOptions }),
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
