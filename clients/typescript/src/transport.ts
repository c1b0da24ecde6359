/**
 * The gRPC transport: unary calls go straight onto an HTTP/2 stream, server-streaming calls
 * through Connect's own gRPC transport, both over one connection kept by Connect's
 * `Http2SessionManager` (connect, reconnect, keep-alive pings, idle close).
 *
 * Why not Connect's transport for everything: its unary path runs each call through the
 * async-iterable pipeline it uses for streams (serialize, envelope, join, split, parse, each an
 * async generator), which costs about 0.35 ms of CPU per call in Node 20, more than the server
 * spends on a Save. A unary call is one request envelope and one response envelope, so this
 * path writes one buffer and reads the response whole. Request headers, response and trailer
 * validation and the errors are Connect's. With interceptors, Connect's `runUnaryCall` runs
 * them and keeps the deadline; without any (the usual case: the credential and tenant headers
 * and the TLS error wording are applied here directly) a call keeps its deadline with one
 * timer, skipping the linked AbortControllers `runUnaryCall` makes and aborts on every call.
 */

import * as http2 from "node:http2";

import { create, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type ContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createMethodUrl, runUnaryCall } from "@connectrpc/connect/protocol";
import { requestHeader, validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";

import { fromSignal, withDeadline, type Cancellation } from "./cancellation.js";
import { ServerReadiness } from "./readiness.js";

/** What the transport needs; the public options are mapped onto this in client.ts. */
export interface GrpcTransportSettings {
  baseUrl: string;
  defaultTimeoutMs: number | undefined;
  readMaxBytes: number;
  writeMaxBytes: number;
  /** Headers every call carries unless it sets them itself: the credential and the tenant. */
  callHeaders: Readonly<Record<string, string>>;
  /** The error a caller sees for a failure (a failed TLS handshake becomes UNAVAILABLE). */
  mapError: (error: unknown) => unknown;
  /** The caller's own interceptors, run inside the two above. */
  interceptors: Interceptor[];
  /** How long a call waits for a server that is not up yet (see readiness.ts); 0 for not at all. */
  connectTimeoutMs: number;
  nodeOptions?: http2.ClientSessionOptions | http2.SecureClientSessionOptions;
}

/** The header and error handling of the settings as interceptors, then the caller's own. */
function interceptorChain(settings: GrpcTransportSettings): Interceptor[] {
  const errors: Interceptor = (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      throw settings.mapError(error);
    }
  };
  const headers: Interceptor = (next) => (request) => {
    setMissing(request.header, settings.callHeaders);
    return next(request);
  };
  return [errors, headers, ...settings.interceptors];
}

function setMissing(header: Headers, values: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(values)) {
    if (!header.has(key)) header.set(key, value);
  }
}

/** A gRPC transport with the fast unary path, sharing one HTTP/2 connection. */
export function createFastGrpcTransport(settings: GrpcTransportSettings): Transport {
  const sessionManager = new Http2SessionManager(settings.baseUrl, {}, settings.nodeOptions);
  const interceptors = interceptorChain(settings);
  const streaming = createGrpcTransport({
    baseUrl: settings.baseUrl,
    defaultTimeoutMs: settings.defaultTimeoutMs,
    readMaxBytes: settings.readMaxBytes,
    writeMaxBytes: settings.writeMaxBytes,
    interceptors,
    sessionManager,
  });
  const readiness = new ServerReadiness(sessionManager, new URL(settings.baseUrl).host, settings.connectTimeoutMs);
  /**
   * Runs `call` with the deadline left (Connect's rule: undefined takes the default, zero or
   * less means none) once the connection is open, waiting for a server still starting first.
   * An open connection, the usual case, costs one state check and no extra promise.
   */
  function whenReady<T>(timeoutMs: number | undefined, signal: AbortSignal | undefined, call: (timeoutMs: number | undefined) => Promise<T>): Promise<T> {
    const deadline =
      timeoutMs === undefined ? settings.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
    if (settings.connectTimeoutMs <= 0 || readiness.ready()) return call(deadline ?? 0);
    return readiness.wait(deadline, signal).then(
      // A deadline spent to the last millisecond still has one: never "none" by rounding.
      (waited) => call(deadline === undefined ? 0 : Math.max(1, Math.round(deadline - waited))),
      (error: unknown) => {
        throw settings.mapError(error);
      },
    );
  }
  const transport: Transport = {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      // Connect's rule: undefined takes the default, zero or less means no deadline.
      const deadline =
        timeoutMs === undefined ? settings.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const req = {
        stream: false as const,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: createMethodUrl(settings.baseUrl, method),
        header: requestHeader(true, deadline, header),
        contextValues: contextValues ?? createContextValues(),
      };
      if (settings.interceptors.length > 0) {
        return runUnaryCall<I, O>({
          interceptors,
          signal,
          timeoutMs: deadline,
          req: { ...req, message: input },
          next: (request) => callUnary(sessionManager, settings, request, fromSignal(request.signal)),
        });
      }
      setMissing(req.header, settings.callHeaders);
      const message = isMessage(input, method.input) ? input : create(method.input, input);
      return callUnary(sessionManager, settings, { ...req, message }, withDeadline(deadline, signal)).catch(
        (error: unknown) => {
          throw settings.mapError(ConnectError.from(error));
        },
      );
    },
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      streaming.stream(method, signal, timeoutMs, header, input, contextValues),
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) =>
      whenReady(timeoutMs, signal, (left) => transport.unary(method, signal, left, header, input, contextValues)),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      whenReady(timeoutMs, signal, (left) => transport.stream(method, signal, left, header, input, contextValues)),
  };
}

/** The bytes of one gRPC message envelope (uncompressed) around `payload`. */
function envelope(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + payload.byteLength);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(payload.byteLength, 1);
  frame.set(payload, 5);
  return frame;
}

function toNodeHeaders(header: Headers, path: string): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": path };
  header.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function toWebHeaders(incoming: http2.IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [key, value] of Object.entries(incoming)) {
    if (key.startsWith(":") || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) out.append(key, String(item));
  }
  return out;
}

/** What a unary call needs of its request: Connect's, with or without the signal. */
type UnaryCall<I extends DescMessage, O extends DescMessage> = Omit<UnaryRequest<I, O>, "signal">;

/** One unary call on its own HTTP/2 stream: the request envelope out, the answer read whole. */
async function callUnary<I extends DescMessage, O extends DescMessage>(
  sessionManager: Http2SessionManager,
  settings: GrpcTransportSettings,
  req: UnaryCall<I, O>,
  cancellation: Cancellation,
): Promise<UnaryResponse<I, O>> {
  try {
    const message = isMessage(req.message, req.method.input)
      ? req.message
      : create(req.method.input, req.message as MessageInitShape<I>);
    const payload = toBinary(req.method.input, message);
    if (payload.byteLength > settings.writeMaxBytes) {
      throw new ConnectError(
        `message size ${payload.byteLength} is larger than configured writeMaxBytes ${settings.writeMaxBytes}`,
        Code.ResourceExhausted,
      );
    }
    cancellation.throwIfStopped();
    const path = new URL(req.url).pathname;
    const answer = await exchange(sessionManager, path, toNodeHeaders(req.header, path), envelope(payload), {
      readMaxBytes: settings.readMaxBytes,
      cancellation,
    });
    const { headerError } = validateResponse(answer.status, answer.header);
    if (answer.body.byteLength === 0) {
      // A trailers-only answer: the status is in the headers (or the trailers, if any).
      validateTrailer(answer.trailer, answer.header);
      throw headerError ?? new ConnectError("protocol error: missing output message for unary method", Code.Unknown);
    }
    validateTrailer(answer.trailer, answer.header);
    if (headerError !== undefined) throw headerError;
    return {
      stream: false,
      service: req.method.parent,
      method: req.method,
      header: answer.header,
      message: fromBinary(req.method.output, unwrapEnvelope(answer.body, settings.readMaxBytes)),
      trailer: answer.trailer,
    };
  } finally {
    cancellation.end();
  }
}

/** The one message in a unary answer's body. */
function unwrapEnvelope(body: Buffer, readMaxBytes: number): Uint8Array {
  if (body.byteLength < 5) {
    throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  }
  if ((body.readUInt8(0) & 0b1) !== 0) {
    // The client never offers compression, so a compressed answer is the server's mistake.
    throw new ConnectError("protocol error: received compressed message without compression", Code.Internal);
  }
  const length = body.readUInt32BE(1);
  if (length > readMaxBytes) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
      Code.ResourceExhausted,
    );
  }
  if (body.byteLength !== 5 + length) {
    throw new ConnectError(
      body.byteLength < 5 + length
        ? "protocol error: incomplete envelope"
        : "protocol error: received extra output message for unary method",
      Code.Unimplemented,
    );
  }
  return body.subarray(5);
}

interface Answer {
  status: number;
  header: Headers;
  trailer: Headers;
  body: Buffer;
}

/**
 * Opens a stream, sends `frame` and collects the answer. A call that must stop (deadline,
 * abort) rejects at once, while waiting for the connection too, and resets its stream.
 */
function exchange(
  sessionManager: Http2SessionManager,
  path: string,
  headers: http2.OutgoingHttpHeaders,
  frame: Buffer,
  limits: { readMaxBytes: number; cancellation: Cancellation },
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let stream: http2.ClientHttp2Stream | undefined;
    let settled = false;
    const fail = (error: unknown): void => {
      settled = true;
      stream?.close(http2.constants.NGHTTP2_CANCEL);
      reject(ConnectError.from(error, Code.Unavailable));
    };
    limits.cancellation.onStop(fail);
    sessionManager.request("POST", path, headers, {}).then((opened) => {
      if (settled) {
        opened.close(http2.constants.NGHTTP2_CANCEL);
        return;
      }
      stream = opened;
      readInto(opened, sessionManager, limits.readMaxBytes, fail, (answer) => {
        settled = true;
        resolve(answer);
      });
      opened.end(frame);
    }, fail);
  });
}

/** Collects a stream's answer: its status, headers, trailers and body (at most the limit). */
function readInto(
  stream: http2.ClientHttp2Stream,
  sessionManager: Http2SessionManager,
  readMaxBytes: number,
  fail: (error: unknown) => void,
  done: (answer: Answer) => void,
): void {
  let status = 0;
  let header = new Headers();
  let trailer = new Headers();
  const chunks: Buffer[] = [];
  let received = 0;
  stream.on("response", (headers) => {
    status = Number(headers[":status"] ?? 0);
    header = toWebHeaders(headers);
  });
  stream.on("trailers", (headers) => {
    trailer = toWebHeaders(headers);
  });
  stream.on("data", (chunk: Buffer) => {
    sessionManager.notifyResponseByteRead(stream);
    received += chunk.byteLength;
    // The envelope's 5 bytes on top of the largest message allowed.
    if (received > readMaxBytes + 5) {
      fail(new ConnectError(`message size is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted));
      return;
    }
    chunks.push(chunk);
  });
  stream.on("error", fail);
  stream.on("close", () => {
    if (stream.rstCode !== undefined && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR && status === 0) {
      fail(new ConnectError(`http/2 stream closed with error code ${stream.rstCode}`, Code.Unavailable));
      return;
    }
    done({ status, header, trailer, body: Buffer.concat(chunks, received) });
  });
}
