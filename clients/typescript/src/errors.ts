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
  override readonly name = "CheckpointdError";
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

  /** Any thrown value as a CheckpointdError (a non-Connect error becomes code UNKNOWN). */
  static from(reason: unknown): CheckpointdError {
    return reason instanceof CheckpointdError ? reason : new CheckpointdError(ConnectError.from(reason));
  }
}
