/**
 * CheckpointdError: every refusal from checkpointd as one typed error carrying the gRPC code and
 * the machine-readable `google.rpc.ErrorInfo` reason, so callers branch on the reason, never on
 * message text (the reasons are listed in proto/checkpoint/v1/checkpoint.proto, "Errors").
 */

import { Code, ConnectError } from "@connectrpc/connect";

import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

export { Code };

/** The domain of every ErrorInfo checkpointd sends. */
export const ERROR_DOMAIN = "checkpointd";

/** `InvalidArgument` -> `INVALID_ARGUMENT`: the gRPC name of a code, as the docs write it. */
function grpcCodeName(code: Code): string {
  const name = Code[code] ?? "Unknown";
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A call that checkpointd (or the transport on the way to it) refused. */
export class CheckpointdError extends Error {
  override readonly name: string = "CheckpointdError";
  /** The gRPC status code; Connect's `Code` numbers are gRPC's. */
  readonly code: Code;
  /** The code's gRPC name, e.g. `INVALID_ARGUMENT`. */
  readonly codeName: string;
  /** The ErrorInfo reason, e.g. `CHECKSUM_MISMATCH`; undefined when the refusal carried none. */
  readonly reason: string | undefined;
  /** The ErrorInfo domain, `checkpointd` for the server's own refusals. */
  readonly domain: string | undefined;
  /** The ErrorInfo metadata, e.g. `field` naming a bad field. */
  readonly metadata: Readonly<Record<string, string>>;
  /** The message as the server wrote it, without the code in front. */
  readonly rawMessage: string;

  constructor(error: ConnectError) {
    const info = error.findDetails(ErrorInfoSchema)[0];
    const codeName = grpcCodeName(error.code);
    super(
      info?.reason
        ? `${codeName} (${info.reason}): ${error.rawMessage}`
        : `${codeName}: ${error.rawMessage}`,
      { cause: error },
    );
    this.code = error.code;
    this.codeName = codeName;
    this.reason = info?.reason || undefined;
    this.domain = info?.domain || undefined;
    this.metadata = { ...(info?.metadata ?? {}) };
    this.rawMessage = error.rawMessage;
  }

  /**
   * Any thrown value as a CheckpointdError (a non-Connect error becomes code UNKNOWN); a refusal
   * with reason ARGUMENTS_MISMATCH as its own class, {@link ReplayMismatch}.
   */
  static from(reason: unknown): CheckpointdError {
    if (reason instanceof CheckpointdError) return reason;
    const error = ConnectError.from(reason);
    const info = error.findDetails(ErrorInfoSchema)[0];
    return info?.reason === ARGUMENTS_MISMATCH ? new ReplayMismatch(error) : new CheckpointdError(error);
  }
}

/** The ErrorInfo reason of a journal write whose call id is journalled with other arguments. */
export const ARGUMENTS_MISMATCH = "ARGUMENTS_MISMATCH";

/**
 * A journalled call was about to be reused for a call with the same id but other arguments
 * (DESIGN contract 14): a model that reuses a tool call id, a step whose calls changed order.
 * Replaying the first call's result would be a silent wrong answer, so nothing is replayed and
 * the tool is not called. Thrown by the client when it compares a stored digest with the call's,
 * and for the server's refusal (ALREADY_EXISTS, reason ARGUMENTS_MISMATCH), so both read alike.
 * Fatal to the recovery loop: a retry makes the same call.
 */
export class ReplayMismatch extends CheckpointdError {
  override readonly name: string = "ReplayMismatch";
  /** The call id journalled with other arguments. */
  readonly callId: string;
  /** The arguments digest journalled with the call id. */
  readonly storedDigest: string;
  /** The arguments digest of the call that was refused. */
  readonly requestDigest: string;

  constructor(error: ConnectError) {
    super(error);
    this.callId = this.metadata["call_id"] ?? "";
    this.storedDigest = this.metadata["stored_digest"] ?? "";
    this.requestDigest = this.metadata["request_digest"] ?? "";
  }

  /** The client's own refusal, shaped as the server's. */
  static of(callId: string, storedDigest: string, requestDigest: string): ReplayMismatch {
    const message = `call ${callId} is journalled with arguments digest ${storedDigest}, but this call's arguments ` +
      `digest to ${requestDigest}: a journalled result is replayed only for the same arguments`;
    return new ReplayMismatch(new ConnectError(message, Code.AlreadyExists, undefined, [{
      desc: ErrorInfoSchema,
      value: {
        reason: ARGUMENTS_MISMATCH,
        domain: ERROR_DOMAIN,
        metadata: { call_id: callId, stored_digest: storedDigest, request_digest: requestDigest },
      },
    }]));
  }
}

/**
 * Throws {@link ReplayMismatch} when a stored digest and the call's are both given and differ.
 * An empty stored digest (a row journalled before digests, or by a client that sends none)
 * replays as before; so does a call that has no digest of its own.
 */
export function checkReplay(callId: string, storedDigest: string | undefined, requestDigest: string | undefined): void {
  if (storedDigest && requestDigest && storedDigest !== requestDigest) {
    throw ReplayMismatch.of(callId, storedDigest, requestDigest);
  }
}
