// checkpointd's public contract: checksummed checkpoints for long-running agents.
//
// Every RPC is scoped to a tenant. The tenant is read from the `x-tenant-id`
// request metadata header and is `default` when the header is absent.
//
// # Checksum v1
//
// A checkpoint's checksum is the lower-case hex of a full SHA-256 over the byte
// framing below. It never covers a serializer's output, so any language can
// reproduce it. Notation: `u64(x)` is x as 8 bytes big-endian; `u8(x)` is x
// as one byte (so `u8(is_error)` is 0x00 for false and 0x01 for true);
// `lp(b)` is `u64(len(b)) || b`; `||` is concatenation; strings are UTF-8
// bytes; `H(x)` is SHA-256 of x (32 raw bytes).
//
//   message leaf   m_i = H( lp(role) || lp(content) )
//   message chain  d_0 = 32 zero bytes
//                  d_i = H( d_(i-1) || m_i )             for the i-th message, i >= 1
//   tool leaf      r_j = H( lp(call_id) || lp(tool_name) || u64(step) || lp(output) || u8(is_error) )
//   intent leaf    r_j = H( u8(0x01) || lp(call_id) || lp(tool_name) || u64(step) )
//   tool chain     t_0 = 32 zero bytes
//                  t_j = H( t_(j-1) || r_j )             for the j-th journal entry, a tool
//                                                        result or a tool intent, in journal
//                                                        order (`ToolResult.seq` or
//                                                        `ToolIntent.seq` = j)
//   checksum       H( lp("checkpointd.checksum.v1") || lp(run_id) || u64(step)
//                     || lp(content_type) || lp(state)
//                     || u64(n_metadata) || for each metadata entry in ascending
//                        order of its key's UTF-8 bytes: lp(key) || lp(value)
//                     || u64(message_count) || d_(message_count)
//                     || u64(tool_count) || t_(tool_count) )
//
// `message_count` is the length of the run's message log once the checkpoint's
// messages are appended. `tool_count` is the number of journal entries (tool
// results and tool intents) the checkpoint covers: the first `tool_count`
// entries by `seq`. It is SaveRequest.tool_count when the Save names one, so a
// client may save while its own journal writes still land (it names the
// entries its state reflects, and hashes `t_(tool_count)` over just those);
// without it, the whole journal at the time of the save. Both chains are
// append-only, so a save costs what changed, not the history's length.
//
// Metadata keys sort by their UTF-8 bytes, compared as unsigned bytes: not by
// UTF-16 code units (the native string order of Java, JavaScript and C#),
// and not by any locale. The two orders differ for keys beyond U+FFFF, e.g.
// "\uff61" sorts before "\U0001F600" as UTF-8 but after it as UTF-16.
//
// Verifying a loaded checkpoint: a load returns every journal entry of the
// run, also those recorded after the checkpoint was saved. Its checksum
// covers only the first `tool_count` journal entries (by `seq`) and the first
// `message_count` messages of the log, so a client recomputes `t_(tool_count)`
// over those entries alone. With a message offset (`message_offset` on the
// loads) the client already holds the first `messages_offset` messages and
// continues the chain `d` from them. The checkpoint's `label` is not covered:
// put it in the metadata as well when it must be.
//
// Checksums and idempotency keys are lower-case hex, and the server refuses a
// client checksum with upper-case hex digits (INVALID_ARGUMENT, reason
// INVALID_ARGUMENT, field `checksum`). A result leaf's preimage always opens with a zero byte (the high byte
// of its call id's length), an intent leaf's with 0x01, so the two kinds of
// entry can never hash alike. Test vectors live in
// `tests/vectors/checksum_v1.json`.
//
// # Idempotency key v1
//
// Every tool intent carries an idempotency key that the tool receives and
// honours: a call with a key it has seen before must not repeat its side
// effect. The server derives it, and any client can recompute it, as the
// lower-case hex of
//
//   H( lp("checkpointd.idempotency.v1") || lp(tenant) || lp(run_id) || lp(call_id) )
//
// with the notation above. Vectors are in `tests/vectors/checksum_v1.json`
// under `idempotency_keys`.
//
// # Errors
//
// Every refusal carries a `google.rpc.ErrorInfo` detail with domain
// `checkpointd` and a machine-readable `reason`; branch on the reason, never
// on the message text. The reasons, with their gRPC codes:
//
//   INVALID_ARGUMENT         INVALID_ARGUMENT     bad input, e.g. a
//                                                 `message_offset` below the
//                                                 log's length; metadata
//                                                 `field` names the field when
//                                                 known
//   CHECKSUM_MISMATCH        INVALID_ARGUMENT     Save's client checksum differs
//                                                 from the server's
//   RUN_NOT_FOUND            NOT_FOUND            the run was never seen
//   CHECKPOINT_NOT_FOUND     NOT_FOUND            no checkpoint at that step,
//                                                 with that label, or at all
//   TASK_NOT_FOUND           NOT_FOUND            unknown task id
//   WEBHOOK_ENDPOINT_NOT_FOUND NOT_FOUND          unknown webhook endpoint (or another tenant's)
//   STEP_CONFLICT            ALREADY_EXISTS       different content at a step
//   LABEL_TAKEN              ALREADY_EXISTS       the label names another step
//   ARGUMENTS_MISMATCH       ALREADY_EXISTS       the call id is journalled with
//                                                 other arguments (another
//                                                 `arguments_digest`); metadata
//                                                 `call_id`, `stored_digest` and
//                                                 `request_digest` name them
//   CONFLICT                 ALREADY_EXISTS       any other conflict, e.g. a
//                                                 concurrent write; retry
//   STALE_EPOCH              FAILED_PRECONDITION  the epoch is older than the
//                                                 run's: another writer resumed
//   EPOCH_NOT_ISSUED         FAILED_PRECONDITION  the epoch is newer than any
//                                                 Resume handed out
//   STEP_BEHIND_LATEST       FAILED_PRECONDITION  a new step below the latest
//   MESSAGE_LOG_BEHIND       FAILED_PRECONDITION  Save's `message_offset` is
//                                                 past the stored log's end:
//                                                 messages saved before are
//                                                 gone (e.g. a failover lost
//                                                 an acknowledged Save); call
//                                                 Resume and continue from
//                                                 what it restores
//   JOURNAL_BEHIND           FAILED_PRECONDITION  Save's `tool_count` is past
//                                                 the stored journal's end:
//                                                 the client saw entries the
//                                                 server does not hold; call
//                                                 Resume, as for
//                                                 MESSAGE_LOG_BEHIND
//   CAPABILITY_REQUIRED      FAILED_PRECONDITION  the answer needs a
//                                                 ClientCapability the request
//                                                 did not declare; metadata
//                                                 `capability` names it
//   CHECKPOINT_CHANGED       FAILED_PRECONDITION  a continuation's checkpoint
//                                                 was rewritten, deleted or
//                                                 rewound since its first
//                                                 page: load again
//   LEASE_LOST               FAILED_PRECONDITION  the task's lease moved on
//   TASK_STATE               FAILED_PRECONDITION  the task's state forbids it
//   JOURNAL_STATE            FAILED_PRECONDITION  the call is not in a state
//                                                 that the repair settles
//   TOO_LARGE                RESOURCE_EXHAUSTED   over a size limit, or a
//                                                 repeated or map field over
//                                                 its count cap
//   ANSWER_TOO_LARGE         RESOURCE_EXHAUSTED   the history asked for is over
//                                                 the unpaged answer limit and
//                                                 the request did not declare
//                                                 CLIENT_CAPABILITY_PAGED_MESSAGES
//   BODY_TIMEOUT             DEADLINE_EXCEEDED    the request body did not
//                                                 arrive within the server's
//                                                 request body timeout
//   CREDENTIAL_INVALID       UNAUTHENTICATED      no credential, or one that
//                                                 does not verify
//   ROLE_FORBIDDEN           PERMISSION_DENIED    the credential's role may
//                                                 not make the call
//   TENANT_MISMATCH          PERMISSION_DENIED    `x-tenant-id` names another
//                                                 tenant than the credential's
//   CHECKPOINT_CORRUPT       DATA_LOSS            the checkpoint or journal
//                                                 fails its checksum (also a
//                                                 Resume over a corrupt journal
//                                                 entry that does not declare
//                                                 CLIENT_CAPABILITY_IN_DOUBT_CALLS)
//   ALL_CHECKPOINTS_CORRUPT  DATA_LOSS            every checkpoint is corrupt
//   UNAVAILABLE              UNAVAILABLE          storage down; retry later
//   OVERLOADED               UNAVAILABLE          the server's request budget
//                                                 is spent; retry later
//   INTERNAL                 INTERNAL             a server fault
//
// New reasons may be added; a client treats an unknown reason by its gRPC
// code.

// @generated by protoc-gen-es v2.13.0 with parameter "target=ts,import_extension=js"
// @generated from file checkpoint/v1/checkpoint.proto (package checkpoint.v1, syntax proto3)
/* eslint-disable */

import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import { enumDesc, fileDesc, messageDesc, serviceDesc } from "@bufbuild/protobuf/codegenv2";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { file_google_protobuf_timestamp } from "@bufbuild/protobuf/wkt";
import type { Message as Message$1 } from "@bufbuild/protobuf";

/**
 * Describes the file checkpoint/v1/checkpoint.proto.
 */
export const file_checkpoint_v1_checkpoint: GenFile = /*@__PURE__*/
  fileDesc("Ch5jaGVja3BvaW50L3YxL2NoZWNrcG9pbnQucHJvdG8SDWNoZWNrcG9pbnQudjEiKAoHTWVzc2FnZRIMCgRyb2xlGAEgASgJEg8KB2NvbnRlbnQYAiABKAwiuAEKClRvb2xSZXN1bHQSDwoHY2FsbF9pZBgBIAEoCRIRCgl0b29sX25hbWUYAiABKAkSDAoEc3RlcBgDIAEoAxIOCgZvdXRwdXQYBCABKAwSEAoIaXNfZXJyb3IYBSABKAgSCwoDc2VxGAYgASgEEi8KC3JlY29yZGVkX2F0GAcgASgLMhouZ29vZ2xlLnByb3RvYnVmLlRpbWVzdGFtcBIYChBhcmd1bWVudHNfZGlnZXN0GAggASgJIq8BCgpUb29sSW50ZW50Eg8KB2NhbGxfaWQYASABKAkSEQoJdG9vbF9uYW1lGAIgASgJEgwKBHN0ZXAYAyABKAMSFwoPaWRlbXBvdGVuY3lfa2V5GAQgASgJEgsKA3NlcRgFIAEoBBIvCgtyZWNvcmRlZF9hdBgGIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASGAoQYXJndW1lbnRzX2RpZ2VzdBgHIAEoCSJpCgtJbkRvdWJ0Q2FsbBIPCgdjYWxsX2lkGAEgASgJEhEKCXRvb2xfbmFtZRgCIAEoCRIMCgRzdGVwGAMgASgDEhcKD2lkZW1wb3RlbmN5X2tleRgEIAEoCRIPCgdjb3JydXB0GAUgASgIIqADCgpDaGVja3BvaW50EhUKDWNoZWNrcG9pbnRfaWQYASABKAkSDgoGcnVuX2lkGAIgASgJEgwKBHN0ZXAYAyABKAMSFAoMY29udGVudF90eXBlGAQgASgJEg0KBXN0YXRlGAUgASgMEigKCG1lc3NhZ2VzGAYgAygLMhYuY2hlY2twb2ludC52MS5NZXNzYWdlEjkKCG1ldGFkYXRhGAcgAygLMicuY2hlY2twb2ludC52MS5DaGVja3BvaW50Lk1ldGFkYXRhRW50cnkSDQoFZXBvY2gYCCABKAQSEAoIY2hlY2tzdW0YCSABKAkSLgoKY3JlYXRlZF9hdBgKIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASFQoNbWVzc2FnZV9jb3VudBgLIAEoBBISCgp0b29sX2NvdW50GAwgASgEEhcKD21lc3NhZ2VzX29mZnNldBgNIAEoBBINCgVsYWJlbBgOIAEoCRovCg1NZXRhZGF0YUVudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1ZRgCIAEoCToCOAEi+AIKC1NhdmVSZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIMCgRzdGVwGAIgASgDEhQKDGNvbnRlbnRfdHlwZRgDIAEoCRINCgVzdGF0ZRgEIAEoDBIoCghtZXNzYWdlcxgFIAMoCzIWLmNoZWNrcG9pbnQudjEuTWVzc2FnZRIWCg5tZXNzYWdlX29mZnNldBgGIAEoBBI6CghtZXRhZGF0YRgHIAMoCzIoLmNoZWNrcG9pbnQudjEuU2F2ZVJlcXVlc3QuTWV0YWRhdGFFbnRyeRISCgVlcG9jaBgIIAEoBEgAiAEBEhUKCGNoZWNrc3VtGAkgASgJSAGIAQESDQoFbGFiZWwYCiABKAkSFwoKdG9vbF9jb3VudBgLIAEoBEgCiAEBGi8KDU1ldGFkYXRhRW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgJOgI4AUIICgZfZXBvY2hCCwoJX2NoZWNrc3VtQg0KC190b29sX2NvdW50IoABCgxTYXZlUmVzcG9uc2USFQoNY2hlY2twb2ludF9pZBgBIAEoCRIQCghjaGVja3N1bRgCIAEoCRIuCgpjcmVhdGVkX2F0GAMgASgLMhouZ29vZ2xlLnByb3RvYnVmLlRpbWVzdGFtcBIXCg9hbHJlYWR5X2V4aXN0ZWQYBCABKAgioAEKEUxvYWRMYXRlc3RSZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIWCg5tZXNzYWdlX29mZnNldBgCIAEoBBIsCgdqb3VybmFsGAMgASgOMhsuY2hlY2twb2ludC52MS5Kb3VybmFsU2NvcGUSNQoMY2FwYWJpbGl0aWVzGAQgAygOMh8uY2hlY2twb2ludC52MS5DbGllbnRDYXBhYmlsaXR5IowCChJMb2FkTGF0ZXN0UmVzcG9uc2USLQoKY2hlY2twb2ludBgBIAEoCzIZLmNoZWNrcG9pbnQudjEuQ2hlY2twb2ludBIvCgx0b29sX3Jlc3VsdHMYAiADKAsyGS5jaGVja3BvaW50LnYxLlRvb2xSZXN1bHQSFQoNc2tpcHBlZF9zdGVwcxgDIAMoAxIvCgx0b29sX2ludGVudHMYBCADKAsyGS5jaGVja3BvaW50LnYxLlRvb2xJbnRlbnQSFAoMY29udGludWF0aW9uGAUgASgMEjgKC3Bhc3NlZF9vdmVyGAYgAygLMiMuY2hlY2twb2ludC52MS5QYXNzZWRPdmVyQ2hlY2twb2ludCLTAQoRTG9hZEF0U3RlcFJlcXVlc3QSDgoGcnVuX2lkGAEgASgJEgwKBHN0ZXAYAiABKAMSFgoObWVzc2FnZV9vZmZzZXQYAyABKAQSDQoFbGFiZWwYBCABKAkSLAoHam91cm5hbBgFIAEoDjIbLmNoZWNrcG9pbnQudjEuSm91cm5hbFNjb3BlEjUKDGNhcGFiaWxpdGllcxgGIAMoDjIfLmNoZWNrcG9pbnQudjEuQ2xpZW50Q2FwYWJpbGl0eRIUCgxjb250aW51YXRpb24YByABKAwiuwEKEkxvYWRBdFN0ZXBSZXNwb25zZRItCgpjaGVja3BvaW50GAEgASgLMhkuY2hlY2twb2ludC52MS5DaGVja3BvaW50Ei8KDHRvb2xfcmVzdWx0cxgCIAMoCzIZLmNoZWNrcG9pbnQudjEuVG9vbFJlc3VsdBIvCgx0b29sX2ludGVudHMYAyADKAsyGS5jaGVja3BvaW50LnYxLlRvb2xJbnRlbnQSFAoMY29udGludWF0aW9uGAQgASgMIj0KD1ZhbGlkYXRlUmVxdWVzdBIOCgZydW5faWQYASABKAkSEQoEc3RlcBgCIAEoA0gAiAEBQgcKBV9zdGVwIm4KEUNoZWNrcG9pbnRWZXJkaWN0EgwKBHN0ZXAYASABKAMSDQoFdmFsaWQYAiABKAgSDgoGcmVhc29uGAMgASgJEhcKD3N0b3JlZF9jaGVja3N1bRgEIAEoCRITCgtxdWFyYW50aW5lZBgFIAEoCCJGChBWYWxpZGF0ZVJlc3BvbnNlEjIKCHZlcmRpY3RzGAEgAygLMiAuY2hlY2twb2ludC52MS5DaGVja3BvaW50VmVyZGljdCKIAQoNUmVzdW1lUmVxdWVzdBIOCgZydW5faWQYASABKAkSFgoObWVzc2FnZV9vZmZzZXQYAiABKAQSGAoQcmVxdWlyZV9leGlzdGluZxgDIAEoCBI1CgxjYXBhYmlsaXRpZXMYBCADKA4yHy5jaGVja3BvaW50LnYxLkNsaWVudENhcGFiaWxpdHkinAMKDlJlc3VtZVJlc3BvbnNlEi0KCmNoZWNrcG9pbnQYASABKAsyGS5jaGVja3BvaW50LnYxLkNoZWNrcG9pbnQSGwoTcmVjb3ZlcmVkX2Zyb21fc3RlcBgCIAEoAxIVCg1za2lwcGVkX3N0ZXBzGAMgAygDEi8KDHRvb2xfcmVzdWx0cxgEIAMoCzIZLmNoZWNrcG9pbnQudjEuVG9vbFJlc3VsdBINCgVlcG9jaBgFIAEoBBIeChZyZXN0YXJ0ZWRfZnJvbV9zY3JhdGNoGAYgASgIEi8KDHRvb2xfaW50ZW50cxgHIAMoCzIZLmNoZWNrcG9pbnQudjEuVG9vbEludGVudBIsCghpbl9kb3VidBgIIAMoCzIaLmNoZWNrcG9pbnQudjEuSW5Eb3VidENhbGwSGAoQY29ycnVwdF9jYWxsX2lkcxgJIAMoCRIUCgxjb250aW51YXRpb24YCiABKAwSOAoLcGFzc2VkX292ZXIYCyADKAsyIy5jaGVja3BvaW50LnYxLlBhc3NlZE92ZXJDaGVja3BvaW50IoQCChRQYXNzZWRPdmVyQ2hlY2twb2ludBIMCgRzdGVwGAEgASgDEhUKDWNoZWNrcG9pbnRfaWQYAiABKAkSDQoFbGFiZWwYAyABKAkSQwoIbWV0YWRhdGEYBCADKAsyMS5jaGVja3BvaW50LnYxLlBhc3NlZE92ZXJDaGVja3BvaW50Lk1ldGFkYXRhRW50cnkSMgoOcXVhcmFudGluZWRfYXQYBSABKAsyGi5nb29nbGUucHJvdG9idWYuVGltZXN0YW1wEg4KBnJlYXNvbhgGIAEoCRovCg1NZXRhZGF0YUVudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1ZRgCIAEoCToCOAEitQEKF1JlY29yZFRvb2xSZXN1bHRSZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIPCgdjYWxsX2lkGAIgASgJEhEKCXRvb2xfbmFtZRgDIAEoCRIMCgRzdGVwGAQgASgDEg4KBm91dHB1dBgFIAEoDBIQCghpc19lcnJvchgGIAEoCBISCgVlcG9jaBgHIAEoBEgAiAEBEhgKEGFyZ3VtZW50c19kaWdlc3QYCCABKAlCCAoGX2Vwb2NoIl8KGFJlY29yZFRvb2xSZXN1bHRSZXNwb25zZRIpCgZyZXN1bHQYASABKAsyGS5jaGVja3BvaW50LnYxLlRvb2xSZXN1bHQSGAoQYWxyZWFkeV9yZWNvcmRlZBgCIAEoCCJ/Cg9Ub29sUmVzdWx0SW5wdXQSDwoHY2FsbF9pZBgBIAEoCRIRCgl0b29sX25hbWUYAiABKAkSDAoEc3RlcBgDIAEoAxIOCgZvdXRwdXQYBCABKAwSEAoIaXNfZXJyb3IYBSABKAgSGAoQYXJndW1lbnRzX2RpZ2VzdBgGIAEoCSJ5ChhSZWNvcmRUb29sUmVzdWx0c1JlcXVlc3QSDgoGcnVuX2lkGAEgASgJEhIKBWVwb2NoGAIgASgESACIAQESLwoHcmVzdWx0cxgDIAMoCzIeLmNoZWNrcG9pbnQudjEuVG9vbFJlc3VsdElucHV0QggKBl9lcG9jaCJVChlSZWNvcmRUb29sUmVzdWx0c1Jlc3BvbnNlEjgKB3Jlc3VsdHMYASADKAsyJy5jaGVja3BvaW50LnYxLlJlY29yZFRvb2xSZXN1bHRSZXNwb25zZSKTAQoXUmVjb3JkVG9vbEludGVudFJlcXVlc3QSDgoGcnVuX2lkGAEgASgJEg8KB2NhbGxfaWQYAiABKAkSEQoJdG9vbF9uYW1lGAMgASgJEgwKBHN0ZXAYBCABKAMSEgoFZXBvY2gYBSABKARIAIgBARIYChBhcmd1bWVudHNfZGlnZXN0GAYgASgJQggKBl9lcG9jaCKKAQoYUmVjb3JkVG9vbEludGVudFJlc3BvbnNlEikKBmludGVudBgBIAEoCzIZLmNoZWNrcG9pbnQudjEuVG9vbEludGVudBIYChBhbHJlYWR5X3JlY29yZGVkGAIgASgIEikKBnJlc3VsdBgDIAEoCzIZLmNoZWNrcG9pbnQudjEuVG9vbFJlc3VsdCLgAQoMSm91cm5hbEVudHJ5EgsKA3NlcRgBIAEoBBItCgRraW5kGAIgASgOMh8uY2hlY2twb2ludC52MS5Kb3VybmFsRW50cnlLaW5kEg8KB2NhbGxfaWQYAyABKAkSEQoJdG9vbF9uYW1lGAQgASgJEgwKBHN0ZXAYBSABKAMSDgoGb3V0cHV0GAYgASgMEhAKCGlzX2Vycm9yGAcgASgIEi8KC3JlY29yZGVkX2F0GAggASgLMhouZ29vZ2xlLnByb3RvYnVmLlRpbWVzdGFtcBIPCgdjb3JydXB0GAkgASgIIn0KDUpvdXJuYWxBY3Rpb24SDwoHY2FsbF9pZBgBIAEoCRIOCgZhY3Rpb24YAiABKAkSDQoFYWN0b3IYAyABKAkSLAoIYWN0ZWRfYXQYBCABKAsyGi5nb29nbGUucHJvdG9idWYuVGltZXN0YW1wEg4KBmRldGFpbBgFIAEoCSIjChFHZXRKb3VybmFsUmVxdWVzdBIOCgZydW5faWQYASABKAkiuQEKEkdldEpvdXJuYWxSZXNwb25zZRIsCgdlbnRyaWVzGAEgAygLMhsuY2hlY2twb2ludC52MS5Kb3VybmFsRW50cnkSLAoIaW5fZG91YnQYAiADKAsyGi5jaGVja3BvaW50LnYxLkluRG91YnRDYWxsEhgKEGNvcnJ1cHRfY2FsbF9pZHMYAyADKAkSLQoHYWN0aW9ucxgEIAMoCzIcLmNoZWNrcG9pbnQudjEuSm91cm5hbEFjdGlvbiJ8ChRSZXBhaXJKb3VybmFsUmVxdWVzdBIOCgZydW5faWQYASABKAkSDwoHY2FsbF9pZBgCIAEoCRINCgVhY3RvchgDIAEoCRIaChBtYXJrX2RvbmVfb3V0cHV0GAQgASgMSAASDgoEZHJvcBgFIAEoCEgAQggKBnJlcGFpciJgChVSZXBhaXJKb3VybmFsUmVzcG9uc2USLAoGYWN0aW9uGAEgASgLMhwuY2hlY2twb2ludC52MS5Kb3VybmFsQWN0aW9uEhkKEXF1YXJhbnRpbmVkX3N0ZXBzGAIgAygDIpgCChZMaXN0Q2hlY2twb2ludHNSZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIRCglwYWdlX3NpemUYAiABKA0SEgoKcGFnZV90b2tlbhgDIAEoCRISCgpkZXNjZW5kaW5nGAQgASgIEhgKC2JlZm9yZV9zdGVwGAUgASgDSACIAQESUgoPbWV0YWRhdGFfZmlsdGVyGAYgAygLMjkuY2hlY2twb2ludC52MS5MaXN0Q2hlY2twb2ludHNSZXF1ZXN0Lk1ldGFkYXRhRmlsdGVyRW50cnkaNQoTTWV0YWRhdGFGaWx0ZXJFbnRyeRILCgNrZXkYASABKAkSDQoFdmFsdWUYAiABKAk6AjgBQg4KDF9iZWZvcmVfc3RlcCLcAgoRQ2hlY2twb2ludFN1bW1hcnkSDAoEc3RlcBgBIAEoAxISCgpzaXplX2J5dGVzGAIgASgEEg0KBXZhbGlkGAMgASgIEhkKEXF1YXJhbnRpbmVfcmVhc29uGAQgASgJEi4KCmNyZWF0ZWRfYXQYBSABKAsyGi5nb29nbGUucHJvdG9idWYuVGltZXN0YW1wEhAKCGNoZWNrc3VtGAYgASgJEg0KBWVwb2NoGAcgASgEEhUKDW1lc3NhZ2VfY291bnQYCCABKAQSEQoJcGlubmVkX2J5GAkgAygJEg0KBWxhYmVsGAogASgJEkAKCG1ldGFkYXRhGAsgAygLMi4uY2hlY2twb2ludC52MS5DaGVja3BvaW50U3VtbWFyeS5NZXRhZGF0YUVudHJ5Gi8KDU1ldGFkYXRhRW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgJOgI4ASJpChdMaXN0Q2hlY2twb2ludHNSZXNwb25zZRI1CgtjaGVja3BvaW50cxgBIAMoCzIgLmNoZWNrcG9pbnQudjEuQ2hlY2twb2ludFN1bW1hcnkSFwoPbmV4dF9wYWdlX3Rva2VuGAIgASgJIv0BCgdSdW5IZWFkEg4KBnJ1bl9pZBgBIAEoCRINCgVlcG9jaBgCIAEoBBIYCgtsYXRlc3Rfc3RlcBgDIAEoA0gAiAEBEh4KEWxhdGVzdF92YWxpZF9zdGVwGAQgASgDSAGIAQESFQoNbWVzc2FnZV9jb3VudBgFIAEoBBISCgp0b29sX2NvdW50GAYgASgEEhgKEGNoZWNrcG9pbnRfY291bnQYByABKAQSLgoKdXBkYXRlZF9hdBgIIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXBCDgoMX2xhdGVzdF9zdGVwQhQKEl9sYXRlc3RfdmFsaWRfc3RlcCIfCg1HZXRSdW5SZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCSI1Cg5HZXRSdW5SZXNwb25zZRIjCgNydW4YASABKAsyFi5jaGVja3BvaW50LnYxLlJ1bkhlYWQiTwoPTGlzdFJ1bnNSZXF1ZXN0EhEKCXBhZ2Vfc2l6ZRgBIAEoDRISCgpwYWdlX3Rva2VuGAIgASgJEhUKDXJ1bl9pZF9wcmVmaXgYAyABKAkiUQoQTGlzdFJ1bnNSZXNwb25zZRIkCgRydW5zGAEgAygLMhYuY2hlY2twb2ludC52MS5SdW5IZWFkEhcKD25leHRfcGFnZV90b2tlbhgCIAEoCSIiChBEZWxldGVSdW5SZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCSIwChFEZWxldGVSdW5SZXNwb25zZRIbChNkZWxldGVkX2NoZWNrcG9pbnRzGAEgASgEIlcKGERlbGV0ZUNoZWNrcG9pbnRzUmVxdWVzdBIOCgZydW5faWQYASABKAkSDQoFc3RlcHMYAiADKAMSEgoFZXBvY2gYAyABKARIAIgBAUIICgZfZXBvY2giTgoZRGVsZXRlQ2hlY2twb2ludHNSZXNwb25zZRIbChNkZWxldGVkX2NoZWNrcG9pbnRzGAEgASgEEhQKDHBpbm5lZF9zdGVwcxgCIAMoAyI1ChNTZXRSZXRlbnRpb25SZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIOCgZwb2xpY3kYAiABKAkiJgoUU2V0UmV0ZW50aW9uUmVzcG9uc2USDgoGcG9saWN5GAEgASgJIjQKFFBpbkNoZWNrcG9pbnRSZXF1ZXN0Eg4KBnJ1bl9pZBgBIAEoCRIMCgRzdGVwGAIgASgDIiUKFVBpbkNoZWNrcG9pbnRSZXNwb25zZRIMCgRzdGVwGAEgASgDIksKFlVucGluQ2hlY2twb2ludFJlcXVlc3QSDgoGcnVuX2lkGAEgASgJEgwKBHN0ZXAYAiABKAMSEwoLYWxsX3NvdXJjZXMYAyABKAgiKwoXVW5waW5DaGVja3BvaW50UmVzcG9uc2USEAoIdW5waW5uZWQYASABKAgiKgoVVmFsaWRhdGVUZW5hbnRSZXF1ZXN0EhEKCXBhZ2Vfc2l6ZRgBIAEoDSJbChZWYWxpZGF0ZVRlbmFudFJlc3BvbnNlEg4KBnJ1bl9pZBgBIAEoCRIxCgd2ZXJkaWN0GAIgASgLMiAuY2hlY2twb2ludC52MS5DaGVja3BvaW50VmVyZGljdCp0CgxKb3VybmFsU2NvcGUSHQoZSk9VUk5BTF9TQ09QRV9VTlNQRUNJRklFRBAAEhUKEUpPVVJOQUxfU0NPUEVfQUxMEAESFgoSSk9VUk5BTF9TQ09QRV9TVEVQEAISFgoSSk9VUk5BTF9TQ09QRV9OT05FEAMqgQEKEENsaWVudENhcGFiaWxpdHkSIQodQ0xJRU5UX0NBUEFCSUxJVFlfVU5TUEVDSUZJRUQQABIkCiBDTElFTlRfQ0FQQUJJTElUWV9JTl9ET1VCVF9DQUxMUxABEiQKIENMSUVOVF9DQVBBQklMSVRZX1BBR0VEX01FU1NBR0VTEAIqdAoQSm91cm5hbEVudHJ5S2luZBIiCh5KT1VSTkFMX0VOVFJZX0tJTkRfVU5TUEVDSUZJRUQQABIdChlKT1VSTkFMX0VOVFJZX0tJTkRfUkVTVUxUEAESHQoZSk9VUk5BTF9FTlRSWV9LSU5EX0lOVEVOVBACMpUNChFDaGVja3BvaW50U2VydmljZRI/CgRTYXZlEhouY2hlY2twb2ludC52MS5TYXZlUmVxdWVzdBobLmNoZWNrcG9pbnQudjEuU2F2ZVJlc3BvbnNlElEKCkxvYWRMYXRlc3QSIC5jaGVja3BvaW50LnYxLkxvYWRMYXRlc3RSZXF1ZXN0GiEuY2hlY2twb2ludC52MS5Mb2FkTGF0ZXN0UmVzcG9uc2USUQoKTG9hZEF0U3RlcBIgLmNoZWNrcG9pbnQudjEuTG9hZEF0U3RlcFJlcXVlc3QaIS5jaGVja3BvaW50LnYxLkxvYWRBdFN0ZXBSZXNwb25zZRJLCghWYWxpZGF0ZRIeLmNoZWNrcG9pbnQudjEuVmFsaWRhdGVSZXF1ZXN0Gh8uY2hlY2twb2ludC52MS5WYWxpZGF0ZVJlc3BvbnNlEkUKBlJlc3VtZRIcLmNoZWNrcG9pbnQudjEuUmVzdW1lUmVxdWVzdBodLmNoZWNrcG9pbnQudjEuUmVzdW1lUmVzcG9uc2USYwoQUmVjb3JkVG9vbFJlc3VsdBImLmNoZWNrcG9pbnQudjEuUmVjb3JkVG9vbFJlc3VsdFJlcXVlc3QaJy5jaGVja3BvaW50LnYxLlJlY29yZFRvb2xSZXN1bHRSZXNwb25zZRJmChFSZWNvcmRUb29sUmVzdWx0cxInLmNoZWNrcG9pbnQudjEuUmVjb3JkVG9vbFJlc3VsdHNSZXF1ZXN0GiguY2hlY2twb2ludC52MS5SZWNvcmRUb29sUmVzdWx0c1Jlc3BvbnNlEmMKEFJlY29yZFRvb2xJbnRlbnQSJi5jaGVja3BvaW50LnYxLlJlY29yZFRvb2xJbnRlbnRSZXF1ZXN0GicuY2hlY2twb2ludC52MS5SZWNvcmRUb29sSW50ZW50UmVzcG9uc2USUQoKR2V0Sm91cm5hbBIgLmNoZWNrcG9pbnQudjEuR2V0Sm91cm5hbFJlcXVlc3QaIS5jaGVja3BvaW50LnYxLkdldEpvdXJuYWxSZXNwb25zZRJaCg1SZXBhaXJKb3VybmFsEiMuY2hlY2twb2ludC52MS5SZXBhaXJKb3VybmFsUmVxdWVzdBokLmNoZWNrcG9pbnQudjEuUmVwYWlySm91cm5hbFJlc3BvbnNlEmAKD0xpc3RDaGVja3BvaW50cxIlLmNoZWNrcG9pbnQudjEuTGlzdENoZWNrcG9pbnRzUmVxdWVzdBomLmNoZWNrcG9pbnQudjEuTGlzdENoZWNrcG9pbnRzUmVzcG9uc2USRQoGR2V0UnVuEhwuY2hlY2twb2ludC52MS5HZXRSdW5SZXF1ZXN0Gh0uY2hlY2twb2ludC52MS5HZXRSdW5SZXNwb25zZRJLCghMaXN0UnVucxIeLmNoZWNrcG9pbnQudjEuTGlzdFJ1bnNSZXF1ZXN0Gh8uY2hlY2twb2ludC52MS5MaXN0UnVuc1Jlc3BvbnNlEk4KCURlbGV0ZVJ1bhIfLmNoZWNrcG9pbnQudjEuRGVsZXRlUnVuUmVxdWVzdBogLmNoZWNrcG9pbnQudjEuRGVsZXRlUnVuUmVzcG9uc2USZgoRRGVsZXRlQ2hlY2twb2ludHMSJy5jaGVja3BvaW50LnYxLkRlbGV0ZUNoZWNrcG9pbnRzUmVxdWVzdBooLmNoZWNrcG9pbnQudjEuRGVsZXRlQ2hlY2twb2ludHNSZXNwb25zZRJXCgxTZXRSZXRlbnRpb24SIi5jaGVja3BvaW50LnYxLlNldFJldGVudGlvblJlcXVlc3QaIy5jaGVja3BvaW50LnYxLlNldFJldGVudGlvblJlc3BvbnNlEloKDVBpbkNoZWNrcG9pbnQSIy5jaGVja3BvaW50LnYxLlBpbkNoZWNrcG9pbnRSZXF1ZXN0GiQuY2hlY2twb2ludC52MS5QaW5DaGVja3BvaW50UmVzcG9uc2USYAoPVW5waW5DaGVja3BvaW50EiUuY2hlY2twb2ludC52MS5VbnBpbkNoZWNrcG9pbnRSZXF1ZXN0GiYuY2hlY2twb2ludC52MS5VbnBpbkNoZWNrcG9pbnRSZXNwb25zZRJfCg5WYWxpZGF0ZVRlbmFudBIkLmNoZWNrcG9pbnQudjEuVmFsaWRhdGVUZW5hbnRSZXF1ZXN0GiUuY2hlY2twb2ludC52MS5WYWxpZGF0ZVRlbmFudFJlc3BvbnNlMAFiBnByb3RvMw", [file_google_protobuf_timestamp]);

/**
 * Message is one entry of a run's append-only message log.
 *
 * @generated from message checkpoint.v1.Message
 */
export type Message = Message$1<"checkpoint.v1.Message"> & {
  /**
   * Who produced the message, for example `user`, `assistant` or `tool`.
   *
   * @generated from field: string role = 1;
   */
  role: string;

  /**
   * The message body, opaque to checkpointd (text, JSON, ...).
   *
   * @generated from field: bytes content = 2;
   */
  content: Uint8Array;
};

/**
 * Describes the message checkpoint.v1.Message.
 * Use `create(MessageSchema)` to create a new message.
 */
export const MessageSchema: GenMessage<Message> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 0);

/**
 * ToolResult is one journalled tool call.
 *
 * @generated from message checkpoint.v1.ToolResult
 */
export type ToolResult = Message$1<"checkpoint.v1.ToolResult"> & {
  /**
   * Deterministic id of the call, unique within the run, for example
   * `step-4/send_email/0`. At most 256 bytes.
   *
   * @generated from field: string call_id = 1;
   */
  callId: string;

  /**
   * Name of the tool that ran.
   *
   * @generated from field: string tool_name = 2;
   */
  toolName: string;

  /**
   * Step during which the tool ran.
   *
   * @generated from field: int64 step = 3;
   */
  step: bigint;

  /**
   * What the tool returned, opaque to checkpointd.
   *
   * @generated from field: bytes output = 4;
   */
  output: Uint8Array;

  /**
   * True when `output` describes an error the tool returned.
   *
   * @generated from field: bool is_error = 5;
   */
  isError: boolean;

  /**
   * Position in the run's tool journal, starting at 1 (`j` in checksum v1).
   *
   * @generated from field: uint64 seq = 6;
   */
  seq: bigint;

  /**
   * When the result was journalled.
   *
   * @generated from field: google.protobuf.Timestamp recorded_at = 7;
   */
  recordedAt?: Timestamp | undefined;

  /**
   * The call's arguments digest as the client sent it when journalling (see
   * RecordToolResultRequest.arguments_digest); empty when it sent none. A
   * client reuses this result only for a call whose arguments have the same
   * digest, and otherwise refuses the replay (ARGUMENTS_MISMATCH). Not
   * covered by checksum v1.
   *
   * @generated from field: string arguments_digest = 8;
   */
  argumentsDigest: string;
};

/**
 * Describes the message checkpoint.v1.ToolResult.
 * Use `create(ToolResultSchema)` to create a new message.
 */
export const ToolResultSchema: GenMessage<ToolResult> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 1);

/**
 * ToolIntent journals that a side-effecting tool call is about to run.
 *
 * @generated from message checkpoint.v1.ToolIntent
 */
export type ToolIntent = Message$1<"checkpoint.v1.ToolIntent"> & {
  /**
   * Deterministic id of the call, unique within the run; the result that
   * completes the intent carries the same id.
   *
   * @generated from field: string call_id = 1;
   */
  callId: string;

  /**
   * Name of the tool about to run.
   *
   * @generated from field: string tool_name = 2;
   */
  toolName: string;

  /**
   * Step during which the tool runs.
   *
   * @generated from field: int64 step = 3;
   */
  step: bigint;

  /**
   * Idempotency key v1 (see the top of this file), lower-case hex: the tool
   * must not repeat its side effect for a key it has seen.
   *
   * @generated from field: string idempotency_key = 4;
   */
  idempotencyKey: string;

  /**
   * Position in the run's tool journal (`j` in checksum v1), shared with the
   * results: intents and results are numbered in one sequence.
   *
   * @generated from field: uint64 seq = 5;
   */
  seq: bigint;

  /**
   * When the intent was journalled.
   *
   * @generated from field: google.protobuf.Timestamp recorded_at = 6;
   */
  recordedAt?: Timestamp | undefined;

  /**
   * The call's arguments digest, as on ToolResult; empty when none was sent.
   *
   * @generated from field: string arguments_digest = 7;
   */
  argumentsDigest: string;
};

/**
 * Describes the message checkpoint.v1.ToolIntent.
 * Use `create(ToolIntentSchema)` to create a new message.
 */
export const ToolIntentSchema: GenMessage<ToolIntent> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 2);

/**
 * InDoubtCall is a side-effecting call whose outcome is unknown: its intent
 * was journalled but no valid result was, or its journal entry is corrupt. It
 * must never be re-run silently: retry it with its idempotency key, ask a
 * human, or fail, as the tool declares.
 *
 * @generated from message checkpoint.v1.InDoubtCall
 */
export type InDoubtCall = Message$1<"checkpoint.v1.InDoubtCall"> & {
  /**
   * The call's id.
   *
   * @generated from field: string call_id = 1;
   */
  callId: string;

  /**
   * Name of the tool; empty when a corrupt entry hides it.
   *
   * @generated from field: string tool_name = 2;
   */
  toolName: string;

  /**
   * Step of the call; 0 when a corrupt entry hides it.
   *
   * @generated from field: int64 step = 3;
   */
  step: bigint;

  /**
   * Idempotency key v1 of the call, lower-case hex.
   *
   * @generated from field: string idempotency_key = 4;
   */
  idempotencyKey: string;

  /**
   * True when the call is in doubt because its journal entry is corrupt,
   * false when its intent simply has no result.
   *
   * @generated from field: bool corrupt = 5;
   */
  corrupt: boolean;
};

/**
 * Describes the message checkpoint.v1.InDoubtCall.
 * Use `create(InDoubtCallSchema)` to create a new message.
 */
export const InDoubtCallSchema: GenMessage<InDoubtCall> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 3);

/**
 * Checkpoint is a restorable snapshot of an agent.
 *
 * @generated from message checkpoint.v1.Checkpoint
 */
export type Checkpoint = Message$1<"checkpoint.v1.Checkpoint"> & {
  /**
   * Server-assigned id, unique across the service.
   *
   * @generated from field: string checkpoint_id = 1;
   */
  checkpointId: string;

  /**
   * The run this checkpoint belongs to.
   *
   * @generated from field: string run_id = 2;
   */
  runId: string;

  /**
   * The agent's step at the time of the checkpoint.
   *
   * @generated from field: int64 step = 3;
   */
  step: bigint;

  /**
   * Media type of `state`, for example `application/json`.
   *
   * @generated from field: string content_type = 4;
   */
  contentType: string;

  /**
   * The agent's state, opaque to checkpointd.
   *
   * @generated from field: bytes state = 5;
   */
  state: Uint8Array;

  /**
   * The message history up to this checkpoint: its entries from position
   * `messages_offset` to `message_count`, all of them unless the request asked
   * for a message offset.
   *
   * @generated from field: repeated checkpoint.v1.Message messages = 6;
   */
  messages: Message[];

  /**
   * Free-form key/value metadata supplied on Save.
   *
   * @generated from field: map<string, string> metadata = 7;
   */
  metadata: { [key: string]: string };

  /**
   * Fencing epoch the checkpoint was written under.
   *
   * @generated from field: uint64 epoch = 8;
   */
  epoch: bigint;

  /**
   * Checksum v1, lower-case hex.
   *
   * @generated from field: string checksum = 9;
   */
  checksum: string;

  /**
   * When the checkpoint was committed.
   *
   * @generated from field: google.protobuf.Timestamp created_at = 10;
   */
  createdAt?: Timestamp | undefined;

  /**
   * Length of the message log at this checkpoint.
   *
   * @generated from field: uint64 message_count = 11;
   */
  messageCount: bigint;

  /**
   * Number of journal entries (tool results and intents) when this
   * checkpoint was saved; the checksum covers only these.
   *
   * @generated from field: uint64 tool_count = 12;
   */
  toolCount: bigint;

  /**
   * Position in the message log of the first entry of `messages`: the
   * request's `message_offset`, clamped to `message_count`; 0 when the full
   * history is returned.
   *
   * @generated from field: uint64 messages_offset = 13;
   */
  messagesOffset: bigint;

  /**
   * The client-chosen label given on Save; empty when none. Not covered by
   * the checksum.
   *
   * @generated from field: string label = 14;
   */
  label: string;
};

/**
 * Describes the message checkpoint.v1.Checkpoint.
 * Use `create(CheckpointSchema)` to create a new message.
 */
export const CheckpointSchema: GenMessage<Checkpoint> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 4);

/**
 * SaveRequest stores a checkpoint.
 *
 * @generated from message checkpoint.v1.SaveRequest
 */
export type SaveRequest = Message$1<"checkpoint.v1.SaveRequest"> & {
  /**
   * Run to save into; 1 to 256 bytes of printable text.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The agent's step; must be >= 0.
   *
   * @generated from field: int64 step = 2;
   */
  step: bigint;

  /**
   * Media type of `state`; at most 256 bytes. May be empty.
   *
   * @generated from field: string content_type = 3;
   */
  contentType: string;

  /**
   * The agent's state.
   *
   * @generated from field: bytes state = 4;
   */
  state: Uint8Array;

  /**
   * Only the messages appended since the previous checkpoint. At most
   * `--max-messages-per-save` (default 10000); more are RESOURCE_EXHAUSTED,
   * reason TOO_LARGE, refused before the request is decoded.
   *
   * @generated from field: repeated checkpoint.v1.Message messages = 5;
   */
  messages: Message[];

  /**
   * Position in the run's message log where `messages` start. It must equal
   * the log's current length. A smaller value is INVALID_ARGUMENT (a client
   * bug: it would overwrite the log). A larger value means messages this run
   * saved before are no longer stored, for example acknowledged by a primary
   * that died before its asynchronous standby took over: FAILED_PRECONDITION,
   * reason MESSAGE_LOG_BEHIND; the client resyncs with Resume.
   *
   * @generated from field: uint64 message_offset = 6;
   */
  messageOffset: bigint;

  /**
   * Free-form metadata, covered by the checksum. At most
   * `--max-metadata-entries` (default 1000) entries; more are
   * RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before decoding.
   *
   * @generated from field: map<string, string> metadata = 7;
   */
  metadata: { [key: string]: string };

  /**
   * Fencing epoch from the last Resume. Absent means 0, the epoch of a run
   * that was never resumed. A different epoch than the run's is rejected with
   * FAILED_PRECONDITION.
   *
   * @generated from field: optional uint64 epoch = 8;
   */
  epoch?: bigint | undefined;

  /**
   * Optional client-computed checksum v1: 64 lower-case hex digits
   * (upper-case is refused as INVALID_ARGUMENT). When present the server
   * rejects the save with INVALID_ARGUMENT, reason CHECKSUM_MISMATCH, if its
   * own differs.
   *
   * @generated from field: optional string checksum = 9;
   */
  checksum?: string | undefined;

  /**
   * Optional client-chosen name of the checkpoint, unique within the run:
   * printable text of at most 256 bytes; empty means none. A save at another
   * step with a label the run already uses is ALREADY_EXISTS, reason
   * LABEL_TAKEN; an identical retry succeeds. Not covered by the checksum.
   *
   * @generated from field: string label = 10;
   */
  label: string;

  /**
   * How many journal entries the checkpoint covers: the journal's first
   * `tool_count` entries by `seq` (checksum v1 hashes `t_(tool_count)`).
   * Absent: the whole journal at the time of the save, as before this field
   * existed. A client whose tool results are still being journalled names the
   * entries its state reflects, so its Save need not wait for the others. More
   * than the journal holds is FAILED_PRECONDITION, reason JOURNAL_BEHIND (the
   * client saw entries the server lost or never stored: Resume). It may be
   * fewer than an earlier checkpoint of the run covers: every checkpoint is
   * verified against its own `tool_count`, Resume returns the whole journal
   * whatever the restored checkpoint covers, a journal repair quarantines by
   * each checkpoint's own count, and retention keeps what the entries past
   * the latest checkpoint's count depend on. An identical retry (same content
   * and `tool_count`) succeeds even after the journal grew.
   *
   * @generated from field: optional uint64 tool_count = 11;
   */
  toolCount?: bigint | undefined;
};

/**
 * Describes the message checkpoint.v1.SaveRequest.
 * Use `create(SaveRequestSchema)` to create a new message.
 */
export const SaveRequestSchema: GenMessage<SaveRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 5);

/**
 * SaveResponse acknowledges a durable checkpoint.
 *
 * @generated from message checkpoint.v1.SaveResponse
 */
export type SaveResponse = Message$1<"checkpoint.v1.SaveResponse"> & {
  /**
   * Id of the stored checkpoint.
   *
   * @generated from field: string checkpoint_id = 1;
   */
  checkpointId: string;

  /**
   * Checksum v1 of the stored checkpoint, lower-case hex.
   *
   * @generated from field: string checksum = 2;
   */
  checksum: string;

  /**
   * Commit time of the checkpoint.
   *
   * @generated from field: google.protobuf.Timestamp created_at = 3;
   */
  createdAt?: Timestamp | undefined;

  /**
   * True when an identical checkpoint already existed and nothing changed.
   *
   * @generated from field: bool already_existed = 4;
   */
  alreadyExisted: boolean;
};

/**
 * Describes the message checkpoint.v1.SaveResponse.
 * Use `create(SaveResponseSchema)` to create a new message.
 */
export const SaveResponseSchema: GenMessage<SaveResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 6);

/**
 * LoadLatestRequest names the run to load.
 *
 * @generated from message checkpoint.v1.LoadLatestRequest
 */
export type LoadLatestRequest = Message$1<"checkpoint.v1.LoadLatestRequest"> & {
  /**
   * The run to load.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * Return only the messages at log positions >= this offset (clamped to the
   * checkpoint's `message_count`): a client that holds the log's prefix asks
   * for the rest. 0 returns the whole history.
   *
   * The server then reads and verifies only what it returns: it recomputes
   * the message chain from the chain value stored with message offset-1 over
   * the returned messages and checks the result against the checkpoint's
   * checksum, so a load costs what it returns, not the run's age. This is as
   * strong as hashing the prefix: a damaged or forged stored value makes the
   * recomputed head disagree with the checksum (DATA_LOSS, the checkpoint is
   * quarantined), exactly as a damaged message would. It does not check the
   * prefix the client already holds; Validate and the scrub still verify the
   * whole log from its first message.
   *
   * @generated from field: uint64 message_offset = 2;
   */
  messageOffset: bigint;

  /**
   * Which journal entries to return, read and verify (see JournalScope);
   * every entry by default.
   *
   * @generated from field: checkpoint.v1.JournalScope journal = 3;
   */
  journal: JournalScope;

  /**
   * What the client understands of the answer; see ClientCapability. With
   * CLIENT_CAPABILITY_PAGED_MESSAGES a history larger than one page comes
   * back a page at a time: `continuation` is set and LoadAtStep with it
   * returns the next page. Without it, a history from `message_offset` larger
   * than the server's unpaged answer limit (--max-unpaged-answer-bytes) is
   * RESOURCE_EXHAUSTED, reason ANSWER_TOO_LARGE, never silently cut short.
   *
   * @generated from field: repeated checkpoint.v1.ClientCapability capabilities = 4;
   */
  capabilities: ClientCapability[];
};

/**
 * Describes the message checkpoint.v1.LoadLatestRequest.
 * Use `create(LoadLatestRequestSchema)` to create a new message.
 */
export const LoadLatestRequestSchema: GenMessage<LoadLatestRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 7);

/**
 * LoadLatestResponse carries the latest valid checkpoint.
 *
 * @generated from message checkpoint.v1.LoadLatestResponse
 */
export type LoadLatestResponse = Message$1<"checkpoint.v1.LoadLatestResponse"> & {
  /**
   * The checkpoint, with its message history from the requested offset.
   *
   * @generated from field: checkpoint.v1.Checkpoint checkpoint = 1;
   */
  checkpoint?: Checkpoint | undefined;

  /**
   * The tool results journalled for the run within the requested journal
   * scope (every one by default), in journal order.
   *
   * @generated from field: repeated checkpoint.v1.ToolResult tool_results = 2;
   */
  toolResults: ToolResult[];

  /**
   * Steps found corrupt on this read and quarantined, newest first.
   *
   * @generated from field: repeated int64 skipped_steps = 3;
   */
  skippedSteps: bigint[];

  /**
   * The tool intents within the requested journal scope, in journal order.
   *
   * @generated from field: repeated checkpoint.v1.ToolIntent tool_intents = 4;
   */
  toolIntents: ToolIntent[];

  /**
   * Set when the checkpoint's messages continue past this answer (only for a
   * client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
   * LoadAtStepRequest.continuation for the next page. Empty on the last page.
   * Opaque to clients.
   *
   * @generated from field: bytes continuation = 5;
   */
  continuation: Uint8Array;

  /**
   * Every quarantined checkpoint newer than the one returned, newest first,
   * whether it was found corrupt on this read or before: the answer is a
   * fallback exactly when this is non-empty. Sent on every read until an
   * operator repairs the run (drops the quarantined checkpoints, or a newer
   * valid checkpoint is saved above them). `skipped_steps` keeps its older
   * meaning for older clients.
   *
   * @generated from field: repeated checkpoint.v1.PassedOverCheckpoint passed_over = 6;
   */
  passedOver: PassedOverCheckpoint[];
};

/**
 * Describes the message checkpoint.v1.LoadLatestResponse.
 * Use `create(LoadLatestResponseSchema)` to create a new message.
 */
export const LoadLatestResponseSchema: GenMessage<LoadLatestResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 8);

/**
 * LoadAtStepRequest names one checkpoint, by step or by label.
 *
 * @generated from message checkpoint.v1.LoadAtStepRequest
 */
export type LoadAtStepRequest = Message$1<"checkpoint.v1.LoadAtStepRequest"> & {
  /**
   * The run to load from.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The step to load; ignored when `label` is set.
   *
   * @generated from field: int64 step = 2;
   */
  step: bigint;

  /**
   * As on LoadLatestRequest: only messages at positions >= this offset, read
   * and verified from the chain value stored before them.
   *
   * @generated from field: uint64 message_offset = 3;
   */
  messageOffset: bigint;

  /**
   * When non-empty, load the checkpoint with this label instead of `step`;
   * NOT_FOUND (reason CHECKPOINT_NOT_FOUND) when no checkpoint has it.
   *
   * @generated from field: string label = 4;
   */
  label: string;

  /**
   * Which journal entries to return, read and verify (see JournalScope);
   * every entry by default.
   *
   * @generated from field: checkpoint.v1.JournalScope journal = 5;
   */
  journal: JournalScope;

  /**
   * As on LoadLatestRequest.
   *
   * @generated from field: repeated checkpoint.v1.ClientCapability capabilities = 6;
   */
  capabilities: ClientCapability[];

  /**
   * The `continuation` of an earlier answer for the same run: the answer is
   * then the next page of that checkpoint's messages, verified against the
   * stored chain digests that link it to the pages before and, on the last
   * page, to the checkpoint's checksum. `step`, `label`, `message_offset` and
   * `journal` are ignored; the checkpoint carries its messages from
   * `messages_offset` and its identity (step, id, checksum, counts) but not
   * its state or metadata again, and no journal entries come with it.
   * FAILED_PRECONDITION, reason CHECKPOINT_CHANGED, when the checkpoint was
   * rewritten, deleted or rewound since: load again from the start.
   *
   * @generated from field: bytes continuation = 7;
   */
  continuation: Uint8Array;
};

/**
 * Describes the message checkpoint.v1.LoadAtStepRequest.
 * Use `create(LoadAtStepRequestSchema)` to create a new message.
 */
export const LoadAtStepRequestSchema: GenMessage<LoadAtStepRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 9);

/**
 * LoadAtStepResponse carries one checkpoint.
 *
 * @generated from message checkpoint.v1.LoadAtStepResponse
 */
export type LoadAtStepResponse = Message$1<"checkpoint.v1.LoadAtStepResponse"> & {
  /**
   * The checkpoint, with its message history from the requested offset.
   *
   * @generated from field: checkpoint.v1.Checkpoint checkpoint = 1;
   */
  checkpoint?: Checkpoint | undefined;

  /**
   * The tool results within the requested journal scope, in journal order.
   *
   * @generated from field: repeated checkpoint.v1.ToolResult tool_results = 2;
   */
  toolResults: ToolResult[];

  /**
   * The tool intents within the requested journal scope, in journal order.
   *
   * @generated from field: repeated checkpoint.v1.ToolIntent tool_intents = 3;
   */
  toolIntents: ToolIntent[];

  /**
   * Set when the checkpoint's messages continue past this answer (only for a
   * client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
   * LoadAtStepRequest.continuation for the next page. Empty on the last page.
   * Opaque to clients.
   *
   * @generated from field: bytes continuation = 4;
   */
  continuation: Uint8Array;
};

/**
 * Describes the message checkpoint.v1.LoadAtStepResponse.
 * Use `create(LoadAtStepResponseSchema)` to create a new message.
 */
export const LoadAtStepResponseSchema: GenMessage<LoadAtStepResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 10);

/**
 * ValidateRequest names what to verify.
 *
 * @generated from message checkpoint.v1.ValidateRequest
 */
export type ValidateRequest = Message$1<"checkpoint.v1.ValidateRequest"> & {
  /**
   * The run to verify.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * One step to verify; every checkpoint of the run when absent.
   *
   * @generated from field: optional int64 step = 2;
   */
  step?: bigint | undefined;
};

/**
 * Describes the message checkpoint.v1.ValidateRequest.
 * Use `create(ValidateRequestSchema)` to create a new message.
 */
export const ValidateRequestSchema: GenMessage<ValidateRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 11);

/**
 * CheckpointVerdict is the outcome of verifying one checkpoint.
 *
 * @generated from message checkpoint.v1.CheckpointVerdict
 */
export type CheckpointVerdict = Message$1<"checkpoint.v1.CheckpointVerdict"> & {
  /**
   * The step verified.
   *
   * @generated from field: int64 step = 1;
   */
  step: bigint;

  /**
   * True when the recomputed checksum matches the stored one.
   *
   * @generated from field: bool valid = 2;
   */
  valid: boolean;

  /**
   * Why the checkpoint is invalid; empty when valid.
   *
   * @generated from field: string reason = 3;
   */
  reason: string;

  /**
   * The checksum stored with the checkpoint.
   *
   * @generated from field: string stored_checksum = 4;
   */
  storedChecksum: string;

  /**
   * True when the checkpoint is quarantined (now or earlier).
   *
   * @generated from field: bool quarantined = 5;
   */
  quarantined: boolean;
};

/**
 * Describes the message checkpoint.v1.CheckpointVerdict.
 * Use `create(CheckpointVerdictSchema)` to create a new message.
 */
export const CheckpointVerdictSchema: GenMessage<CheckpointVerdict> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 12);

/**
 * ValidateResponse lists one verdict per checkpoint, ascending by step.
 *
 * @generated from message checkpoint.v1.ValidateResponse
 */
export type ValidateResponse = Message$1<"checkpoint.v1.ValidateResponse"> & {
  /**
   * The verdicts.
   *
   * @generated from field: repeated checkpoint.v1.CheckpointVerdict verdicts = 1;
   */
  verdicts: CheckpointVerdict[];
};

/**
 * Describes the message checkpoint.v1.ValidateResponse.
 * Use `create(ValidateResponseSchema)` to create a new message.
 */
export const ValidateResponseSchema: GenMessage<ValidateResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 13);

/**
 * ResumeRequest names the run to recover.
 *
 * @generated from message checkpoint.v1.ResumeRequest
 */
export type ResumeRequest = Message$1<"checkpoint.v1.ResumeRequest"> & {
  /**
   * The run to recover.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * As on LoadLatestRequest: the restored checkpoint carries only messages
   * at positions >= this offset, read and verified from the chain value
   * stored before them. The tool journal is read and verified whole.
   *
   * @generated from field: uint64 message_offset = 2;
   */
  messageOffset: bigint;

  /**
   * Refuse with NOT_FOUND (reason RUN_NOT_FOUND) instead of starting a new
   * run when the run has never been seen, e.g. a mistyped run id.
   *
   * @generated from field: bool require_existing = 3;
   */
  requireExisting: boolean;

  /**
   * What the client understands of the answer beyond the fields every client
   * has always read. A behaviour an older client cannot see is only used for
   * a client that declares it; the others get the old, safe answer. Values
   * the server does not know are ignored, so a client may declare more than
   * an older server offers.
   *
   * Without CLIENT_CAPABILITY_IN_DOUBT_CALLS, Resume refuses a run whose
   * journal holds a call in doubt instead of restoring it and reporting the
   * call in a field the client cannot read (it would run the call again):
   * a corrupt journal entry is DATA_LOSS, reason CHECKPOINT_CORRUPT, as
   * before `in_doubt` existed; an intent without a result is
   * FAILED_PRECONDITION, reason CAPABILITY_REQUIRED. The epoch still goes
   * up, so older writers stay fenced, but nothing is quarantined or rewound.
   * An operator settles such calls with RepairJournal, or a client that
   * declares the capability resumes the run.
   *
   * At most 64 values here and on the loads (RESOURCE_EXHAUSTED, reason
   * TOO_LARGE, beyond, refused before decoding).
   *
   * Without CLIENT_CAPABILITY_PAGED_MESSAGES, a restored history from
   * `message_offset` over the server's unpaged answer limit is
   * RESOURCE_EXHAUSTED, reason ANSWER_TOO_LARGE, once the run has been fenced
   * and rewound: a retry fences again and restores the same checkpoint.
   *
   * @generated from field: repeated checkpoint.v1.ClientCapability capabilities = 4;
   */
  capabilities: ClientCapability[];
};

/**
 * Describes the message checkpoint.v1.ResumeRequest.
 * Use `create(ResumeRequestSchema)` to create a new message.
 */
export const ResumeRequestSchema: GenMessage<ResumeRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 14);

/**
 * ResumeResponse tells the agent where to continue.
 *
 * @generated from message checkpoint.v1.ResumeResponse
 */
export type ResumeResponse = Message$1<"checkpoint.v1.ResumeResponse"> & {
  /**
   * The restored checkpoint; absent when `restarted_from_scratch`.
   *
   * @generated from field: checkpoint.v1.Checkpoint checkpoint = 1;
   */
  checkpoint?: Checkpoint | undefined;

  /**
   * Step of the restored checkpoint; 0 when restarting from scratch.
   *
   * @generated from field: int64 recovered_from_step = 2;
   */
  recoveredFromStep: bigint;

  /**
   * Steps skipped as corrupt (and quarantined), newest first.
   *
   * @generated from field: repeated int64 skipped_steps = 3;
   */
  skippedSteps: bigint[];

  /**
   * Every tool result journalled for the run, including those recorded after
   * the restored checkpoint, in journal order. Reuse them instead of calling
   * the tool again.
   *
   * @generated from field: repeated checkpoint.v1.ToolResult tool_results = 4;
   */
  toolResults: ToolResult[];

  /**
   * The new fencing epoch. Every later Save and RecordToolResult must carry it.
   *
   * @generated from field: uint64 epoch = 5;
   */
  epoch: bigint;

  /**
   * True when no valid checkpoint exists and the agent restarts at step 0.
   *
   * @generated from field: bool restarted_from_scratch = 6;
   */
  restartedFromScratch: boolean;

  /**
   * Every tool intent journalled for the run, in journal order. An intent
   * whose call has a result in `tool_results` is complete.
   *
   * @generated from field: repeated checkpoint.v1.ToolIntent tool_intents = 7;
   */
  toolIntents: ToolIntent[];

  /**
   * The calls whose outcome is unknown: intents without a result, and calls
   * whose journal entry is corrupt. Follow the tool's in-doubt policy; never
   * re-run them silently.
   *
   * @generated from field: repeated checkpoint.v1.InDoubtCall in_doubt = 8;
   */
  inDoubt: InDoubtCall[];

  /**
   * Call ids of journal entries found corrupt. Resume then restores the newest
   * checkpoint that does not cover the first corrupt entry (instead of failing
   * with DATA_LOSS, which is what a request without
   * CLIENT_CAPABILITY_IN_DOUBT_CALLS still gets), quarantining the ones that
   * do, and leaves the corrupt
   * entries out of `tool_results` and `tool_intents`: they are in `in_doubt`.
   * An operator settles them with RepairJournal.
   *
   * @generated from field: repeated string corrupt_call_ids = 9;
   */
  corruptCallIds: string[];

  /**
   * Set when the checkpoint's messages continue past this answer (only for a
   * client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
   * LoadAtStepRequest.continuation for the next page of the restored
   * checkpoint's messages. Empty on the last page.
   * Opaque to clients.
   *
   * @generated from field: bytes continuation = 10;
   */
  continuation: Uint8Array;

  /**
   * Every quarantined checkpoint newer than the restored one (every one when
   * restarting from scratch), newest first, as on LoadLatestResponse.
   *
   * @generated from field: repeated checkpoint.v1.PassedOverCheckpoint passed_over = 11;
   */
  passedOver: PassedOverCheckpoint[];
};

/**
 * Describes the message checkpoint.v1.ResumeResponse.
 * Use `create(ResumeResponseSchema)` to create a new message.
 */
export const ResumeResponseSchema: GenMessage<ResumeResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 15);

/**
 * PassedOverCheckpoint is a quarantined checkpoint that a load or Resume
 * passed over on its way to an older one. Its fields other than `step` come
 * from a checkpoint that failed verification: they are for telling people
 * what was skipped, never for restoring anything.
 *
 * @generated from message checkpoint.v1.PassedOverCheckpoint
 */
export type PassedOverCheckpoint = Message$1<"checkpoint.v1.PassedOverCheckpoint"> & {
  /**
   * The quarantined checkpoint's step.
   *
   * @generated from field: int64 step = 1;
   */
  step: bigint;

  /**
   * Its server-assigned id.
   *
   * @generated from field: string checkpoint_id = 2;
   */
  checkpointId: string;

  /**
   * Its client-chosen label (a framework's own checkpoint id); empty when
   * none.
   *
   * @generated from field: string label = 3;
   */
  label: string;

  /**
   * Its metadata as stored (a framework's own step number, for instance).
   *
   * @generated from field: map<string, string> metadata = 4;
   */
  metadata: { [key: string]: string };

  /**
   * When it was quarantined; absent for checkpoints quarantined before the
   * server recorded the time.
   *
   * @generated from field: google.protobuf.Timestamp quarantined_at = 5;
   */
  quarantinedAt?: Timestamp | undefined;

  /**
   * Why it was quarantined.
   *
   * @generated from field: string reason = 6;
   */
  reason: string;
};

/**
 * Describes the message checkpoint.v1.PassedOverCheckpoint.
 * Use `create(PassedOverCheckpointSchema)` to create a new message.
 */
export const PassedOverCheckpointSchema: GenMessage<PassedOverCheckpoint> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 16);

/**
 * RecordToolResultRequest journals one tool call.
 *
 * @generated from message checkpoint.v1.RecordToolResultRequest
 */
export type RecordToolResultRequest = Message$1<"checkpoint.v1.RecordToolResultRequest"> & {
  /**
   * The run the call belongs to.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * Deterministic call id; 1 to 256 bytes.
   *
   * @generated from field: string call_id = 2;
   */
  callId: string;

  /**
   * Name of the tool; 1 to 256 bytes.
   *
   * @generated from field: string tool_name = 3;
   */
  toolName: string;

  /**
   * Step during which the tool ran; must be >= 0.
   *
   * @generated from field: int64 step = 4;
   */
  step: bigint;

  /**
   * What the tool returned.
   *
   * @generated from field: bytes output = 5;
   */
  output: Uint8Array;

  /**
   * True when `output` describes a tool error.
   *
   * @generated from field: bool is_error = 6;
   */
  isError: boolean;

  /**
   * Fencing epoch, as on SaveRequest.
   *
   * @generated from field: optional uint64 epoch = 7;
   */
  epoch?: bigint | undefined;

  /**
   * Lower-case hex SHA-256 (64 characters) of the call's arguments as the
   * client serializes them; empty when the client does not say. Each client
   * documents its serialization (canonical JSON in the packages). A retry
   * with the same call id but another non-empty digest than the stored one
   * is ALREADY_EXISTS, reason ARGUMENTS_MISMATCH, and changes nothing.
   *
   * @generated from field: string arguments_digest = 8;
   */
  argumentsDigest: string;
};

/**
 * Describes the message checkpoint.v1.RecordToolResultRequest.
 * Use `create(RecordToolResultRequestSchema)` to create a new message.
 */
export const RecordToolResultRequestSchema: GenMessage<RecordToolResultRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 17);

/**
 * RecordToolResultResponse returns the journalled result.
 *
 * @generated from message checkpoint.v1.RecordToolResultResponse
 */
export type RecordToolResultResponse = Message$1<"checkpoint.v1.RecordToolResultResponse"> & {
  /**
   * The stored result: the original one when the call id was already journalled.
   *
   * @generated from field: checkpoint.v1.ToolResult result = 1;
   */
  result?: ToolResult | undefined;

  /**
   * True when the call id was already journalled and nothing changed.
   *
   * @generated from field: bool already_recorded = 2;
   */
  alreadyRecorded: boolean;
};

/**
 * Describes the message checkpoint.v1.RecordToolResultResponse.
 * Use `create(RecordToolResultResponseSchema)` to create a new message.
 */
export const RecordToolResultResponseSchema: GenMessage<RecordToolResultResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 18);

/**
 * ToolResultInput is one entry of a RecordToolResultsRequest: the fields of
 * a RecordToolResultRequest that belong to one call, validated alike.
 *
 * @generated from message checkpoint.v1.ToolResultInput
 */
export type ToolResultInput = Message$1<"checkpoint.v1.ToolResultInput"> & {
  /**
   * Deterministic call id; 1 to 256 bytes.
   *
   * @generated from field: string call_id = 1;
   */
  callId: string;

  /**
   * Name of the tool; 1 to 256 bytes.
   *
   * @generated from field: string tool_name = 2;
   */
  toolName: string;

  /**
   * Step during which the tool ran; must be >= 0.
   *
   * @generated from field: int64 step = 3;
   */
  step: bigint;

  /**
   * What the tool returned.
   *
   * @generated from field: bytes output = 4;
   */
  output: Uint8Array;

  /**
   * True when `output` describes a tool error.
   *
   * @generated from field: bool is_error = 5;
   */
  isError: boolean;

  /**
   * As RecordToolResultRequest.arguments_digest.
   *
   * @generated from field: string arguments_digest = 6;
   */
  argumentsDigest: string;
};

/**
 * Describes the message checkpoint.v1.ToolResultInput.
 * Use `create(ToolResultInputSchema)` to create a new message.
 */
export const ToolResultInputSchema: GenMessage<ToolResultInput> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 19);

/**
 * RecordToolResultsRequest journals several tool calls of one run at once.
 *
 * @generated from message checkpoint.v1.RecordToolResultsRequest
 */
export type RecordToolResultsRequest = Message$1<"checkpoint.v1.RecordToolResultsRequest"> & {
  /**
   * The run the calls belong to.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * Fencing epoch, as on SaveRequest; checked once for the whole batch.
   *
   * @generated from field: optional uint64 epoch = 2;
   */
  epoch?: bigint | undefined;

  /**
   * The results, journalled in this order (each new one takes the journal's
   * next `seq`). At most 1000 (RESOURCE_EXHAUSTED, reason TOO_LARGE, beyond,
   * refused before decoding); empty journals nothing and answers nothing.
   *
   * @generated from field: repeated checkpoint.v1.ToolResultInput results = 3;
   */
  results: ToolResultInput[];
};

/**
 * Describes the message checkpoint.v1.RecordToolResultsRequest.
 * Use `create(RecordToolResultsRequestSchema)` to create a new message.
 */
export const RecordToolResultsRequestSchema: GenMessage<RecordToolResultsRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 20);

/**
 * RecordToolResultsResponse answers a RecordToolResultsRequest.
 *
 * @generated from message checkpoint.v1.RecordToolResultsResponse
 */
export type RecordToolResultsResponse = Message$1<"checkpoint.v1.RecordToolResultsResponse"> & {
  /**
   * One answer per entry of the request, in the request's order, each as
   * RecordToolResult would have answered it. A call id that appears twice in
   * one batch is journalled from its first entry; the later entry answers
   * with that result and `already_recorded` true.
   *
   * @generated from field: repeated checkpoint.v1.RecordToolResultResponse results = 1;
   */
  results: RecordToolResultResponse[];
};

/**
 * Describes the message checkpoint.v1.RecordToolResultsResponse.
 * Use `create(RecordToolResultsResponseSchema)` to create a new message.
 */
export const RecordToolResultsResponseSchema: GenMessage<RecordToolResultsResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 21);

/**
 * RecordToolIntentRequest journals that a side-effecting call is about to run.
 *
 * @generated from message checkpoint.v1.RecordToolIntentRequest
 */
export type RecordToolIntentRequest = Message$1<"checkpoint.v1.RecordToolIntentRequest"> & {
  /**
   * The run the call belongs to.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * Deterministic call id; 1 to 256 bytes.
   *
   * @generated from field: string call_id = 2;
   */
  callId: string;

  /**
   * Name of the tool; 1 to 256 bytes.
   *
   * @generated from field: string tool_name = 3;
   */
  toolName: string;

  /**
   * Step during which the tool runs; must be >= 0.
   *
   * @generated from field: int64 step = 4;
   */
  step: bigint;

  /**
   * Fencing epoch, as on SaveRequest.
   *
   * @generated from field: optional uint64 epoch = 5;
   */
  epoch?: bigint | undefined;

  /**
   * As RecordToolResultRequest.arguments_digest: a retry with another
   * non-empty digest than the stored intent's (or result's) is
   * ALREADY_EXISTS, reason ARGUMENTS_MISMATCH.
   *
   * @generated from field: string arguments_digest = 6;
   */
  argumentsDigest: string;
};

/**
 * Describes the message checkpoint.v1.RecordToolIntentRequest.
 * Use `create(RecordToolIntentRequestSchema)` to create a new message.
 */
export const RecordToolIntentRequestSchema: GenMessage<RecordToolIntentRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 22);

/**
 * RecordToolIntentResponse returns the journalled intent.
 *
 * @generated from message checkpoint.v1.RecordToolIntentResponse
 */
export type RecordToolIntentResponse = Message$1<"checkpoint.v1.RecordToolIntentResponse"> & {
  /**
   * The stored intent: the original one when the call id already had one.
   *
   * @generated from field: checkpoint.v1.ToolIntent intent = 1;
   */
  intent?: ToolIntent | undefined;

  /**
   * True when the call id already had an intent and nothing changed.
   *
   * @generated from field: bool already_recorded = 2;
   */
  alreadyRecorded: boolean;

  /**
   * The call's result when it is journalled already: the call completed and
   * must not run again.
   *
   * @generated from field: checkpoint.v1.ToolResult result = 3;
   */
  result?: ToolResult | undefined;
};

/**
 * Describes the message checkpoint.v1.RecordToolIntentResponse.
 * Use `create(RecordToolIntentResponseSchema)` to create a new message.
 */
export const RecordToolIntentResponseSchema: GenMessage<RecordToolIntentResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 23);

/**
 * JournalEntry is one entry of a run's tool journal as an operator sees it.
 *
 * @generated from message checkpoint.v1.JournalEntry
 */
export type JournalEntry = Message$1<"checkpoint.v1.JournalEntry"> & {
  /**
   * Position in the journal, from 1.
   *
   * @generated from field: uint64 seq = 1;
   */
  seq: bigint;

  /**
   * Result or intent.
   *
   * @generated from field: checkpoint.v1.JournalEntryKind kind = 2;
   */
  kind: JournalEntryKind;

  /**
   * The call's id.
   *
   * @generated from field: string call_id = 3;
   */
  callId: string;

  /**
   * Name of the tool.
   *
   * @generated from field: string tool_name = 4;
   */
  toolName: string;

  /**
   * Step of the call.
   *
   * @generated from field: int64 step = 5;
   */
  step: bigint;

  /**
   * The result's output; empty for an intent.
   *
   * @generated from field: bytes output = 6;
   */
  output: Uint8Array;

  /**
   * True when the result describes a tool error.
   *
   * @generated from field: bool is_error = 7;
   */
  isError: boolean;

  /**
   * When the entry was journalled.
   *
   * @generated from field: google.protobuf.Timestamp recorded_at = 8;
   */
  recordedAt?: Timestamp | undefined;

  /**
   * True when the entry does not match its digest in the tool chain.
   *
   * @generated from field: bool corrupt = 9;
   */
  corrupt: boolean;
};

/**
 * Describes the message checkpoint.v1.JournalEntry.
 * Use `create(JournalEntrySchema)` to create a new message.
 */
export const JournalEntrySchema: GenMessage<JournalEntry> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 24);

/**
 * JournalAction is one repair an operator made to a run's journal.
 *
 * @generated from message checkpoint.v1.JournalAction
 */
export type JournalAction = Message$1<"checkpoint.v1.JournalAction"> & {
  /**
   * The call repaired.
   *
   * @generated from field: string call_id = 1;
   */
  callId: string;

  /**
   * `mark_done` or `drop`.
   *
   * @generated from field: string action = 2;
   */
  action: string;

  /**
   * Who made the repair.
   *
   * @generated from field: string actor = 3;
   */
  actor: string;

  /**
   * When the repair was made.
   *
   * @generated from field: google.protobuf.Timestamp acted_at = 4;
   */
  actedAt?: Timestamp | undefined;

  /**
   * What the repair did, for people: the output given, the entry dropped.
   *
   * @generated from field: string detail = 5;
   */
  detail: string;
};

/**
 * Describes the message checkpoint.v1.JournalAction.
 * Use `create(JournalActionSchema)` to create a new message.
 */
export const JournalActionSchema: GenMessage<JournalAction> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 25);

/**
 * GetJournalRequest names the run whose journal to show.
 *
 * @generated from message checkpoint.v1.GetJournalRequest
 */
export type GetJournalRequest = Message$1<"checkpoint.v1.GetJournalRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;
};

/**
 * Describes the message checkpoint.v1.GetJournalRequest.
 * Use `create(GetJournalRequestSchema)` to create a new message.
 */
export const GetJournalRequestSchema: GenMessage<GetJournalRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 26);

/**
 * GetJournalResponse is a run's tool journal with its diagnosis.
 *
 * @generated from message checkpoint.v1.GetJournalResponse
 */
export type GetJournalResponse = Message$1<"checkpoint.v1.GetJournalResponse"> & {
  /**
   * Every journal entry, results and intents, in journal order.
   *
   * @generated from field: repeated checkpoint.v1.JournalEntry entries = 1;
   */
  entries: JournalEntry[];

  /**
   * The calls in doubt, as Resume reports them.
   *
   * @generated from field: repeated checkpoint.v1.InDoubtCall in_doubt = 2;
   */
  inDoubt: InDoubtCall[];

  /**
   * Call ids of the corrupt entries.
   *
   * @generated from field: repeated string corrupt_call_ids = 3;
   */
  corruptCallIds: string[];

  /**
   * Every repair made to the journal, oldest first.
   *
   * @generated from field: repeated checkpoint.v1.JournalAction actions = 4;
   */
  actions: JournalAction[];
};

/**
 * Describes the message checkpoint.v1.GetJournalResponse.
 * Use `create(GetJournalResponseSchema)` to create a new message.
 */
export const GetJournalResponseSchema: GenMessage<GetJournalResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 27);

/**
 * RepairJournalRequest settles one call of a run's journal.
 *
 * @generated from message checkpoint.v1.RepairJournalRequest
 */
export type RepairJournalRequest = Message$1<"checkpoint.v1.RepairJournalRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The call to settle; 1 to 256 bytes.
   *
   * @generated from field: string call_id = 2;
   */
  callId: string;

  /**
   * Who decides; 1 to 256 bytes. With authentication on, the credential's
   * identity (`key:<id>` or the JWT's `sub`) is recorded instead.
   *
   * @generated from field: string actor = 3;
   */
  actor: string;

  /**
   * The repair.
   *
   * @generated from oneof checkpoint.v1.RepairJournalRequest.repair
   */
  repair: {
    /**
     * Mark the call done with this output, as if the tool had returned it:
     * the call's result becomes this output and it never runs again.
     *
     * @generated from field: bytes mark_done_output = 4;
     */
    value: Uint8Array;
    case: "markDoneOutput";
  } | {
    /**
     * Drop the call's corrupt entry from the journal: the call is then
     * neither done nor in doubt and runs again when the agent reaches it.
     *
     * @generated from field: bool drop = 5;
     */
    value: boolean;
    case: "drop";
  } | { case: undefined; value?: undefined };
};

/**
 * Describes the message checkpoint.v1.RepairJournalRequest.
 * Use `create(RepairJournalRequestSchema)` to create a new message.
 */
export const RepairJournalRequestSchema: GenMessage<RepairJournalRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 28);

/**
 * RepairJournalResponse reports the repair.
 *
 * @generated from message checkpoint.v1.RepairJournalResponse
 */
export type RepairJournalResponse = Message$1<"checkpoint.v1.RepairJournalResponse"> & {
  /**
   * The recorded repair.
   *
   * @generated from field: checkpoint.v1.JournalAction action = 1;
   */
  action?: JournalAction | undefined;

  /**
   * Steps quarantined because they covered the journal as it was.
   *
   * @generated from field: repeated int64 quarantined_steps = 2;
   */
  quarantinedSteps: bigint[];
};

/**
 * Describes the message checkpoint.v1.RepairJournalResponse.
 * Use `create(RepairJournalResponseSchema)` to create a new message.
 */
export const RepairJournalResponseSchema: GenMessage<RepairJournalResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 29);

/**
 * ListCheckpointsRequest pages through a run's checkpoints.
 *
 * @generated from message checkpoint.v1.ListCheckpointsRequest
 */
export type ListCheckpointsRequest = Message$1<"checkpoint.v1.ListCheckpointsRequest"> & {
  /**
   * The run to list.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * Maximum entries to return: 1 to 1000, 100 when 0.
   *
   * @generated from field: uint32 page_size = 2;
   */
  pageSize: number;

  /**
   * `next_page_token` of the previous page; empty for the first page. Send
   * the other fields unchanged with it.
   *
   * @generated from field: string page_token = 3;
   */
  pageToken: string;

  /**
   * Newest step first instead of oldest first.
   *
   * @generated from field: bool descending = 4;
   */
  descending: boolean;

  /**
   * Only checkpoints at steps strictly below this one.
   *
   * @generated from field: optional int64 before_step = 5;
   */
  beforeStep?: bigint | undefined;

  /**
   * Only checkpoints whose metadata has every one of these entries with
   * exactly this value. At most `--max-metadata-entries` (default 1000)
   * entries, as a checkpoint's metadata, so a longer filter could never
   * match; more are RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before
   * decoding. The store applies the filter as it scans the run's
   * checkpoints, so a full page costs one query however rarely it matches.
   *
   * @generated from field: map<string, string> metadata_filter = 6;
   */
  metadataFilter: { [key: string]: string };
};

/**
 * Describes the message checkpoint.v1.ListCheckpointsRequest.
 * Use `create(ListCheckpointsRequestSchema)` to create a new message.
 */
export const ListCheckpointsRequestSchema: GenMessage<ListCheckpointsRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 30);

/**
 * CheckpointSummary describes one checkpoint without its payload.
 *
 * @generated from message checkpoint.v1.CheckpointSummary
 */
export type CheckpointSummary = Message$1<"checkpoint.v1.CheckpointSummary"> & {
  /**
   * The checkpoint's step.
   *
   * @generated from field: int64 step = 1;
   */
  step: bigint;

  /**
   * Size of the state in bytes.
   *
   * @generated from field: uint64 size_bytes = 2;
   */
  sizeBytes: bigint;

  /**
   * False once the checkpoint has been quarantined as corrupt.
   *
   * @generated from field: bool valid = 3;
   */
  valid: boolean;

  /**
   * Why it was quarantined; empty when valid.
   *
   * @generated from field: string quarantine_reason = 4;
   */
  quarantineReason: string;

  /**
   * Commit time.
   *
   * @generated from field: google.protobuf.Timestamp created_at = 5;
   */
  createdAt?: Timestamp | undefined;

  /**
   * Stored checksum v1, lower-case hex.
   *
   * @generated from field: string checksum = 6;
   */
  checksum: string;

  /**
   * Epoch the checkpoint was written under.
   *
   * @generated from field: uint64 epoch = 7;
   */
  epoch: bigint;

  /**
   * Length of the message log at this checkpoint.
   *
   * @generated from field: uint64 message_count = 8;
   */
  messageCount: bigint;

  /**
   * Who pins the checkpoint against retention, sorted: `operator` (PinCheckpoint) or
   * `approval:TASK_ID` (taken while that task waits for approval). Empty when unpinned.
   *
   * @generated from field: repeated string pinned_by = 9;
   */
  pinnedBy: string[];

  /**
   * The label given on Save; empty when none.
   *
   * @generated from field: string label = 10;
   */
  label: string;

  /**
   * The metadata given on Save.
   *
   * @generated from field: map<string, string> metadata = 11;
   */
  metadata: { [key: string]: string };
};

/**
 * Describes the message checkpoint.v1.CheckpointSummary.
 * Use `create(CheckpointSummarySchema)` to create a new message.
 */
export const CheckpointSummarySchema: GenMessage<CheckpointSummary> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 31);

/**
 * ListCheckpointsResponse is one page of checkpoints.
 *
 * @generated from message checkpoint.v1.ListCheckpointsResponse
 */
export type ListCheckpointsResponse = Message$1<"checkpoint.v1.ListCheckpointsResponse"> & {
  /**
   * The checkpoints, by step in the requested direction.
   *
   * @generated from field: repeated checkpoint.v1.CheckpointSummary checkpoints = 1;
   */
  checkpoints: CheckpointSummary[];

  /**
   * Token for the next page; empty on the last page.
   *
   * @generated from field: string next_page_token = 2;
   */
  nextPageToken: string;
};

/**
 * Describes the message checkpoint.v1.ListCheckpointsResponse.
 * Use `create(ListCheckpointsResponseSchema)` to create a new message.
 */
export const ListCheckpointsResponseSchema: GenMessage<ListCheckpointsResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 32);

/**
 * RunHead is a run's current position, without any payload.
 *
 * @generated from message checkpoint.v1.RunHead
 */
export type RunHead = Message$1<"checkpoint.v1.RunHead"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The run's current fencing epoch: the one the next write must carry.
   *
   * @generated from field: uint64 epoch = 2;
   */
  epoch: bigint;

  /**
   * Step of the newest checkpoint; absent when the run has none.
   *
   * @generated from field: optional int64 latest_step = 3;
   */
  latestStep?: bigint | undefined;

  /**
   * Step of the newest checkpoint not quarantined; absent when none. Read
   * without re-verifying the checksums.
   *
   * @generated from field: optional int64 latest_valid_step = 4;
   */
  latestValidStep?: bigint | undefined;

  /**
   * The message log's current length: the `message_offset` of the next Save.
   *
   * @generated from field: uint64 message_count = 5;
   */
  messageCount: bigint;

  /**
   * The tool journal's current length (results and intents).
   *
   * @generated from field: uint64 tool_count = 6;
   */
  toolCount: bigint;

  /**
   * Number of checkpoints stored, quarantined ones included.
   *
   * @generated from field: uint64 checkpoint_count = 7;
   */
  checkpointCount: bigint;

  /**
   * When the run last changed: a save, a journal entry, a resume.
   *
   * @generated from field: google.protobuf.Timestamp updated_at = 8;
   */
  updatedAt?: Timestamp | undefined;
};

/**
 * Describes the message checkpoint.v1.RunHead.
 * Use `create(RunHeadSchema)` to create a new message.
 */
export const RunHeadSchema: GenMessage<RunHead> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 33);

/**
 * GetRunRequest names the run to read.
 *
 * @generated from message checkpoint.v1.GetRunRequest
 */
export type GetRunRequest = Message$1<"checkpoint.v1.GetRunRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;
};

/**
 * Describes the message checkpoint.v1.GetRunRequest.
 * Use `create(GetRunRequestSchema)` to create a new message.
 */
export const GetRunRequestSchema: GenMessage<GetRunRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 34);

/**
 * GetRunResponse carries the run's head.
 *
 * @generated from message checkpoint.v1.GetRunResponse
 */
export type GetRunResponse = Message$1<"checkpoint.v1.GetRunResponse"> & {
  /**
   * The run's head.
   *
   * @generated from field: checkpoint.v1.RunHead run = 1;
   */
  run?: RunHead | undefined;
};

/**
 * Describes the message checkpoint.v1.GetRunResponse.
 * Use `create(GetRunResponseSchema)` to create a new message.
 */
export const GetRunResponseSchema: GenMessage<GetRunResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 35);

/**
 * ListRunsRequest pages through the caller's runs.
 *
 * @generated from message checkpoint.v1.ListRunsRequest
 */
export type ListRunsRequest = Message$1<"checkpoint.v1.ListRunsRequest"> & {
  /**
   * Maximum runs to return: 1 to 1000, 100 when 0.
   *
   * @generated from field: uint32 page_size = 1;
   */
  pageSize: number;

  /**
   * `next_page_token` of the previous page; empty for the first page. Send
   * `run_id_prefix` unchanged with it.
   *
   * @generated from field: string page_token = 2;
   */
  pageToken: string;

  /**
   * Only runs whose id starts with this text; empty for every run.
   *
   * @generated from field: string run_id_prefix = 3;
   */
  runIdPrefix: string;
};

/**
 * Describes the message checkpoint.v1.ListRunsRequest.
 * Use `create(ListRunsRequestSchema)` to create a new message.
 */
export const ListRunsRequestSchema: GenMessage<ListRunsRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 36);

/**
 * ListRunsResponse is one page of runs.
 *
 * @generated from message checkpoint.v1.ListRunsResponse
 */
export type ListRunsResponse = Message$1<"checkpoint.v1.ListRunsResponse"> & {
  /**
   * The runs, ascending by run id.
   *
   * @generated from field: repeated checkpoint.v1.RunHead runs = 1;
   */
  runs: RunHead[];

  /**
   * Token for the next page; empty on the last page.
   *
   * @generated from field: string next_page_token = 2;
   */
  nextPageToken: string;
};

/**
 * Describes the message checkpoint.v1.ListRunsResponse.
 * Use `create(ListRunsResponseSchema)` to create a new message.
 */
export const ListRunsResponseSchema: GenMessage<ListRunsResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 37);

/**
 * DeleteRunRequest names the run to delete.
 *
 * @generated from message checkpoint.v1.DeleteRunRequest
 */
export type DeleteRunRequest = Message$1<"checkpoint.v1.DeleteRunRequest"> & {
  /**
   * The run to delete.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;
};

/**
 * Describes the message checkpoint.v1.DeleteRunRequest.
 * Use `create(DeleteRunRequestSchema)` to create a new message.
 */
export const DeleteRunRequestSchema: GenMessage<DeleteRunRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 38);

/**
 * DeleteRunResponse reports what was deleted.
 *
 * @generated from message checkpoint.v1.DeleteRunResponse
 */
export type DeleteRunResponse = Message$1<"checkpoint.v1.DeleteRunResponse"> & {
  /**
   * Number of checkpoints removed.
   *
   * @generated from field: uint64 deleted_checkpoints = 1;
   */
  deletedCheckpoints: bigint;
};

/**
 * Describes the message checkpoint.v1.DeleteRunResponse.
 * Use `create(DeleteRunResponseSchema)` to create a new message.
 */
export const DeleteRunResponseSchema: GenMessage<DeleteRunResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 39);

/**
 * DeleteCheckpointsRequest names checkpoints of one run to delete now.
 *
 * What goes: each listed step's checkpoint row (state, metadata, checksum),
 * with its label (which a later Save may then give to another step) and its
 * cached copy, quarantined or not, the run's latest included. What stays:
 * - a checkpoint that any source pins (an operator's PinCheckpoint, or a task
 *   waiting for approval): a pin is someone else's promise that the
 *   checkpoint is kept, so it is never broken behind their back. Such steps
 *   are kept and listed in `pinned_steps`; unpin them first to delete them.
 * - the run itself, its epoch, its message log and its tool journal. Both are
 *   append-only logs that checkpoints only point into (a checkpoint covers
 *   the first `message_count` messages and `tool_count` journal entries, and
 *   its checksum covers exactly those), so removing a checkpoint leaves every
 *   other one whole: each still covers an unchanged prefix of the same logs
 *   and still verifies. The journal must stay in any case: it is what stops a
 *   side-effecting tool from running twice.
 *
 * After the delete the highest remaining checkpoint is the run's latest for
 * LoadLatest, Resume and GetRun (`latest_step`, `latest_valid_step` and
 * `checkpoint_count` count only what remains; `message_count` and
 * `tool_count` do not change). A later Save continues the log where it
 * stands: its `message_offset` is the log's length (GetRun's
 * `message_count`), which still includes the messages of a deleted latest
 * checkpoint, and its step must be above the highest remaining one. A Resume
 * truncates the log to what the checkpoint it restores covers, as always.
 *
 * Idempotent: a step without a checkpoint (never saved, or deleted already)
 * is ignored, and listing a step twice deletes it once, so a retry is
 * harmless and answers with what it deleted this time.
 *
 * @generated from message checkpoint.v1.DeleteCheckpointsRequest
 */
export type DeleteCheckpointsRequest = Message$1<"checkpoint.v1.DeleteCheckpointsRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The steps whose checkpoints to delete, in any order. At most 1000
   * (RESOURCE_EXHAUSTED, reason TOO_LARGE, beyond, refused before decoding:
   * send several requests); none is a no-op that still checks the run and
   * the epoch. A negative step is INVALID_ARGUMENT.
   *
   * @generated from field: repeated int64 steps = 2;
   */
  steps: bigint[];

  /**
   * Fencing epoch from the last Resume. When present, the delete happens only
   * while the run is still at this epoch (FAILED_PRECONDITION, reason
   * STALE_EPOCH or EPOCH_NOT_ISSUED, otherwise), so a writer that was
   * superseded cannot delete what the new owner relies on. Unlike Save,
   * absent means unfenced, not epoch 0: deleting is also done by whoever
   * manages a run's history (a framework's prune, an operator), which holds
   * no epoch.
   *
   * @generated from field: optional uint64 epoch = 3;
   */
  epoch?: bigint | undefined;
};

/**
 * Describes the message checkpoint.v1.DeleteCheckpointsRequest.
 * Use `create(DeleteCheckpointsRequestSchema)` to create a new message.
 */
export const DeleteCheckpointsRequestSchema: GenMessage<DeleteCheckpointsRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 40);

/**
 * DeleteCheckpointsResponse reports what was deleted.
 *
 * @generated from message checkpoint.v1.DeleteCheckpointsResponse
 */
export type DeleteCheckpointsResponse = Message$1<"checkpoint.v1.DeleteCheckpointsResponse"> & {
  /**
   * Number of checkpoints deleted by this call.
   *
   * @generated from field: uint64 deleted_checkpoints = 1;
   */
  deletedCheckpoints: bigint;

  /**
   * The listed steps kept because a source pins them, ascending.
   *
   * @generated from field: repeated int64 pinned_steps = 2;
   */
  pinnedSteps: bigint[];
};

/**
 * Describes the message checkpoint.v1.DeleteCheckpointsResponse.
 * Use `create(DeleteCheckpointsResponseSchema)` to create a new message.
 */
export const DeleteCheckpointsResponseSchema: GenMessage<DeleteCheckpointsResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 41);

/**
 * SetRetentionRequest sets a run's retention policy.
 *
 * @generated from message checkpoint.v1.SetRetentionRequest
 */
export type SetRetentionRequest = Message$1<"checkpoint.v1.SetRetentionRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * One of `all`, `latest_only`, `keep_last:N` (N >= 1) or
   * `max_age:DURATION` (e.g. `36h`, `7d`). Empty means the server default
   * (`--retention`).
   *
   * @generated from field: string policy = 2;
   */
  policy: string;
};

/**
 * Describes the message checkpoint.v1.SetRetentionRequest.
 * Use `create(SetRetentionRequestSchema)` to create a new message.
 */
export const SetRetentionRequestSchema: GenMessage<SetRetentionRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 42);

/**
 * SetRetentionResponse confirms the policy now in force.
 *
 * @generated from message checkpoint.v1.SetRetentionResponse
 */
export type SetRetentionResponse = Message$1<"checkpoint.v1.SetRetentionResponse"> & {
  /**
   * The run's policy in canonical form; empty when it follows the server
   * default.
   *
   * @generated from field: string policy = 1;
   */
  policy: string;
};

/**
 * Describes the message checkpoint.v1.SetRetentionResponse.
 * Use `create(SetRetentionResponseSchema)` to create a new message.
 */
export const SetRetentionResponseSchema: GenMessage<SetRetentionResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 43);

/**
 * PinCheckpointRequest names the checkpoint to keep.
 *
 * @generated from message checkpoint.v1.PinCheckpointRequest
 */
export type PinCheckpointRequest = Message$1<"checkpoint.v1.PinCheckpointRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The step to pin.
   *
   * @generated from field: int64 step = 2;
   */
  step: bigint;
};

/**
 * Describes the message checkpoint.v1.PinCheckpointRequest.
 * Use `create(PinCheckpointRequestSchema)` to create a new message.
 */
export const PinCheckpointRequestSchema: GenMessage<PinCheckpointRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 44);

/**
 * PinCheckpointResponse confirms the pin.
 *
 * @generated from message checkpoint.v1.PinCheckpointResponse
 */
export type PinCheckpointResponse = Message$1<"checkpoint.v1.PinCheckpointResponse"> & {
  /**
   * The pinned step.
   *
   * @generated from field: int64 step = 1;
   */
  step: bigint;
};

/**
 * Describes the message checkpoint.v1.PinCheckpointResponse.
 * Use `create(PinCheckpointResponseSchema)` to create a new message.
 */
export const PinCheckpointResponseSchema: GenMessage<PinCheckpointResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 45);

/**
 * UnpinCheckpointRequest names the checkpoint to release.
 *
 * @generated from message checkpoint.v1.UnpinCheckpointRequest
 */
export type UnpinCheckpointRequest = Message$1<"checkpoint.v1.UnpinCheckpointRequest"> & {
  /**
   * The run.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The step to unpin.
   *
   * @generated from field: int64 step = 2;
   */
  step: bigint;

  /**
   * Also remove the pins other sources hold on this step, such as the pin of
   * a task waiting for approval; by default only the operator's pin goes.
   *
   * @generated from field: bool all_sources = 3;
   */
  allSources: boolean;
};

/**
 * Describes the message checkpoint.v1.UnpinCheckpointRequest.
 * Use `create(UnpinCheckpointRequestSchema)` to create a new message.
 */
export const UnpinCheckpointRequestSchema: GenMessage<UnpinCheckpointRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 46);

/**
 * UnpinCheckpointResponse reports whether a pin was removed.
 *
 * @generated from message checkpoint.v1.UnpinCheckpointResponse
 */
export type UnpinCheckpointResponse = Message$1<"checkpoint.v1.UnpinCheckpointResponse"> & {
  /**
   * False when the step carried no pin that the request removes.
   *
   * @generated from field: bool unpinned = 1;
   */
  unpinned: boolean;
};

/**
 * Describes the message checkpoint.v1.UnpinCheckpointResponse.
 * Use `create(UnpinCheckpointResponseSchema)` to create a new message.
 */
export const UnpinCheckpointResponseSchema: GenMessage<UnpinCheckpointResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 47);

/**
 * ValidateTenantRequest starts a scrub of the caller's tenant.
 *
 * @generated from message checkpoint.v1.ValidateTenantRequest
 */
export type ValidateTenantRequest = Message$1<"checkpoint.v1.ValidateTenantRequest"> & {
  /**
   * How many checkpoint addresses the server reads per page; 0 means 100.
   * At most 1000.
   *
   * @generated from field: uint32 page_size = 1;
   */
  pageSize: number;
};

/**
 * Describes the message checkpoint.v1.ValidateTenantRequest.
 * Use `create(ValidateTenantRequestSchema)` to create a new message.
 */
export const ValidateTenantRequestSchema: GenMessage<ValidateTenantRequest> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 48);

/**
 * ValidateTenantResponse is one checkpoint's verdict.
 *
 * @generated from message checkpoint.v1.ValidateTenantResponse
 */
export type ValidateTenantResponse = Message$1<"checkpoint.v1.ValidateTenantResponse"> & {
  /**
   * The run the checkpoint belongs to.
   *
   * @generated from field: string run_id = 1;
   */
  runId: string;

  /**
   * The verdict.
   *
   * @generated from field: checkpoint.v1.CheckpointVerdict verdict = 2;
   */
  verdict?: CheckpointVerdict | undefined;
};

/**
 * Describes the message checkpoint.v1.ValidateTenantResponse.
 * Use `create(ValidateTenantResponseSchema)` to create a new message.
 */
export const ValidateTenantResponseSchema: GenMessage<ValidateTenantResponse> = /*@__PURE__*/
  messageDesc(file_checkpoint_v1_checkpoint, 49);

/**
 * JournalScope chooses which journal entries a load returns, and so what the
 * load reads and verifies. Every journal entry stores the tool chain's value
 * after it. JOURNAL_SCOPE_STEP reads the entries from the first one of the
 * checkpoint's step to the journal's end and verifies them by recomputing the
 * chain from the value stored just before that first entry: every returned
 * entry must match its stored value, and the value at the checkpoint's
 * `tool_count` goes into the checksum. JOURNAL_SCOPE_NONE reads no entry, only
 * the value stored at `tool_count`, which the checksum checks. This is as
 * strong as hashing the journal from its first entry for what is returned: a
 * damaged or forged stored value that a load starts from makes the recomputed
 * chain disagree with the next stored value or with the checksum, and the load
 * is DATA_LOSS (a damaged journal, refused as before; the checkpoint is not
 * quarantined for it). What it does not check is the entries it does not
 * return (those before the window): a damaged one there fails a load with
 * JOURNAL_SCOPE_ALL, Validate and the scrub, which still verify the whole
 * journal from its first entry. Resume always reads and verifies the whole
 * journal.
 *
 * @generated from enum checkpoint.v1.JournalScope
 */
export enum JournalScope {
  /**
   * The default: the same as JOURNAL_SCOPE_ALL.
   *
   * @generated from enum value: JOURNAL_SCOPE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Every journal entry of the run, including those recorded after the
   * checkpoint.
   *
   * @generated from enum value: JOURNAL_SCOPE_ALL = 1;
   */
  ALL = 1,

  /**
   * Only the entries whose `step` equals the loaded checkpoint's step.
   *
   * @generated from enum value: JOURNAL_SCOPE_STEP = 2;
   */
  STEP = 2,

  /**
   * No journal entries.
   *
   * @generated from enum value: JOURNAL_SCOPE_NONE = 3;
   */
  NONE = 3,
}

/**
 * Describes the enum checkpoint.v1.JournalScope.
 */
export const JournalScopeSchema: GenEnum<JournalScope> = /*@__PURE__*/
  enumDesc(file_checkpoint_v1_checkpoint, 0);

/**
 * ClientCapability is something a client declares it understands, so that
 * the server may answer with it. New values are added as the protocol grows;
 * each one documents the answer a client gets without it.
 *
 * @generated from enum checkpoint.v1.ClientCapability
 */
export enum ClientCapability {
  /**
   * Never meaningful; ignored.
   *
   * @generated from enum value: CLIENT_CAPABILITY_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The client reads ResumeResponse's `tool_intents`, `in_doubt` and
   * `corrupt_call_ids`, and never re-runs a call in doubt silently: Resume
   * may then restore past a corrupt journal entry and report calls in doubt.
   *
   * @generated from enum value: CLIENT_CAPABILITY_IN_DOUBT_CALLS = 1;
   */
  IN_DOUBT_CALLS = 1,

  /**
   * The client follows `continuation` on LoadLatest, LoadAtStep and Resume
   * answers, so a long message history may come back a page at a time
   * (--max-answer-message-bytes per page) instead of in one answer.
   *
   * @generated from enum value: CLIENT_CAPABILITY_PAGED_MESSAGES = 2;
   */
  PAGED_MESSAGES = 2,
}

/**
 * Describes the enum checkpoint.v1.ClientCapability.
 */
export const ClientCapabilitySchema: GenEnum<ClientCapability> = /*@__PURE__*/
  enumDesc(file_checkpoint_v1_checkpoint, 1);

/**
 * JournalEntryKind tells a result from an intent in the operator's view.
 *
 * @generated from enum checkpoint.v1.JournalEntryKind
 */
export enum JournalEntryKind {
  /**
   * Not set; never sent.
   *
   * @generated from enum value: JOURNAL_ENTRY_KIND_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * A tool result.
   *
   * @generated from enum value: JOURNAL_ENTRY_KIND_RESULT = 1;
   */
  RESULT = 1,

  /**
   * A tool intent.
   *
   * @generated from enum value: JOURNAL_ENTRY_KIND_INTENT = 2;
   */
  INTENT = 2,
}

/**
 * Describes the enum checkpoint.v1.JournalEntryKind.
 */
export const JournalEntryKindSchema: GenEnum<JournalEntryKind> = /*@__PURE__*/
  enumDesc(file_checkpoint_v1_checkpoint, 2);

/**
 * CheckpointService saves and restores agent checkpoints.
 *
 * @generated from service checkpoint.v1.CheckpointService
 */
export const CheckpointService: GenService<{
  /**
   * Save durably stores a checkpoint. It returns only after the database
   * commit. A retry with identical content at the same step succeeds and
   * changes nothing; different content at an existing step is ALREADY_EXISTS
   * unless the request carries a newer epoch than the stored checkpoint.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.Save
   */
  save: {
    methodKind: "unary";
    input: typeof SaveRequestSchema;
    output: typeof SaveResponseSchema;
  },
  /**
   * LoadLatest returns the latest valid checkpoint of a run, with its message
   * history (from `message_offset`) and the journalled tool calls (every one
   * unless `journal` narrows them). Corrupt checkpoints are quarantined and
   * skipped. NOT_FOUND (CHECKPOINT_NOT_FOUND) when the run has no checkpoint;
   * DATA_LOSS (ALL_CHECKPOINTS_CORRUPT) when every checkpoint is corrupt.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.LoadLatest
   */
  loadLatest: {
    methodKind: "unary";
    input: typeof LoadLatestRequestSchema;
    output: typeof LoadLatestResponseSchema;
  },
  /**
   * LoadAtStep returns the checkpoint at one step, or the one with a label.
   * DATA_LOSS (CHECKPOINT_CORRUPT) when it is corrupt or quarantined,
   * NOT_FOUND (CHECKPOINT_NOT_FOUND) when there is none.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.LoadAtStep
   */
  loadAtStep: {
    methodKind: "unary";
    input: typeof LoadAtStepRequestSchema;
    output: typeof LoadAtStepResponseSchema;
  },
  /**
   * Validate verifies the checksum of one checkpoint, or of every checkpoint
   * of a run, and quarantines the corrupt ones so they are never restored.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.Validate
   */
  validate: {
    methodKind: "unary";
    input: typeof ValidateRequestSchema;
    output: typeof ValidateResponseSchema;
  },
  /**
   * Resume is the recovery call. It hands out a new fencing epoch, restores
   * the latest valid checkpoint (skipping and quarantining corrupt ones),
   * truncates the message log to that checkpoint, and returns every
   * journalled tool result. A run with no valid checkpoint (including a run
   * never seen before, unless `require_existing`) restarts from scratch at
   * step 0. Calls in doubt are reported only to a client that declares
   * CLIENT_CAPABILITY_IN_DOUBT_CALLS; see ResumeRequest.capabilities.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.Resume
   */
  resume: {
    methodKind: "unary";
    input: typeof ResumeRequestSchema;
    output: typeof ResumeResponseSchema;
  },
  /**
   * RecordToolResult journals a tool call's result durably, keyed by a
   * deterministic call id. A retry with the same call id returns the stored
   * result unchanged.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.RecordToolResult
   */
  recordToolResult: {
    methodKind: "unary";
    input: typeof RecordToolResultRequestSchema;
    output: typeof RecordToolResultResponseSchema;
  },
  /**
   * RecordToolResults journals a batch of one run's tool results in one
   * database transaction: all of them or none. Fenced once by the request's
   * epoch, like RecordToolResult. Each entry behaves exactly as a
   * RecordToolResult of its own, in order: the first write of a call id wins,
   * and an entry whose call id is journalled already (before, or earlier in
   * the same batch) returns the stored result with `already_recorded`. At
   * most 1000 entries (RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before
   * the request is decoded); an invalid entry refuses the whole batch with
   * INVALID_ARGUMENT naming it, e.g. field `results[2].call_id`.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.RecordToolResults
   */
  recordToolResults: {
    methodKind: "unary";
    input: typeof RecordToolResultsRequestSchema;
    output: typeof RecordToolResultsResponseSchema;
  },
  /**
   * RecordToolIntent journals, before a side-effecting tool runs, that the
   * call is about to happen, and returns the idempotency key to hand the tool.
   * A later RecordToolResult with the same call id completes the intent. A
   * retry with the same call id returns the stored intent unchanged (and the
   * stored result, if the call completed). Fenced by epoch like
   * RecordToolResult. An intent without a result after a crash is in doubt:
   * Resume lists it in `in_doubt`.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.RecordToolIntent
   */
  recordToolIntent: {
    methodKind: "unary";
    input: typeof RecordToolIntentRequestSchema;
    output: typeof RecordToolIntentResponseSchema;
  },
  /**
   * GetJournal shows a run's whole tool journal for operators: results,
   * intents, calls in doubt, corrupt entries, and the repairs made so far.
   * NOT_FOUND for an unknown run.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.GetJournal
   */
  getJournal: {
    methodKind: "unary";
    input: typeof GetJournalRequestSchema;
    output: typeof GetJournalResponseSchema;
  },
  /**
   * RepairJournal settles one call of a run's journal by an operator's
   * decision: mark an in-doubt or corrupt call done with a given output, or
   * drop a corrupt entry. Entries after a repaired one are re-chained and the
   * checkpoints that covered the old journal are quarantined, so the run
   * resumes from a checkpoint that verifies. Every repair is recorded and
   * shown by GetJournal. FAILED_PRECONDITION when the call is neither in doubt
   * nor corrupt (or, for a drop, not corrupt).
   *
   * @generated from rpc checkpoint.v1.CheckpointService.RepairJournal
   */
  repairJournal: {
    methodKind: "unary";
    input: typeof RepairJournalRequestSchema;
    output: typeof RepairJournalResponseSchema;
  },
  /**
   * ListCheckpoints pages through a run's checkpoints by step, ascending by
   * default, optionally filtered by metadata.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.ListCheckpoints
   */
  listCheckpoints: {
    methodKind: "unary";
    input: typeof ListCheckpointsRequestSchema;
    output: typeof ListCheckpointsResponseSchema;
  },
  /**
   * GetRun reads a run's head (epoch, latest steps, log and journal lengths)
   * without its payload and without fencing anyone. NOT_FOUND (reason
   * RUN_NOT_FOUND) for an unknown run.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.GetRun
   */
  getRun: {
    methodKind: "unary";
    input: typeof GetRunRequestSchema;
    output: typeof GetRunResponseSchema;
  },
  /**
   * ListRuns pages through the caller's runs in ascending run id order.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.ListRuns
   */
  listRuns: {
    methodKind: "unary";
    input: typeof ListRunsRequestSchema;
    output: typeof ListRunsResponseSchema;
  },
  /**
   * DeleteRun removes a run with its checkpoints, messages and tool results.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.DeleteRun
   */
  deleteRun: {
    methodKind: "unary";
    input: typeof DeleteRunRequestSchema;
    output: typeof DeleteRunResponseSchema;
  },
  /**
   * DeleteCheckpoints deletes chosen checkpoints of a run now, in one
   * transaction: what a framework's own pruning needs (LangGraph's `prune`
   * and `delete_for_runs`), where SetRetention only prunes later, in the
   * background. See DeleteCheckpointsRequest for exactly what goes and what
   * stays. NOT_FOUND (RUN_NOT_FOUND) for an unknown run; INVALID_ARGUMENT for
   * a negative step or more than 1000 steps; with an `epoch`,
   * FAILED_PRECONDITION (STALE_EPOCH, EPOCH_NOT_ISSUED) when it is not the
   * run's, and then nothing is deleted.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.DeleteCheckpoints
   */
  deleteCheckpoints: {
    methodKind: "unary";
    input: typeof DeleteCheckpointsRequestSchema;
    output: typeof DeleteCheckpointsResponseSchema;
  },
  /**
   * SetRetention sets how many of a run's checkpoints are kept, creating the
   * run if needed. The pruner deletes the rest in the background; the latest
   * valid checkpoint, pinned ones and the one the journal's tail depends on
   * are always kept. INVALID_ARGUMENT for an unknown policy.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.SetRetention
   */
  setRetention: {
    methodKind: "unary";
    input: typeof SetRetentionRequestSchema;
    output: typeof SetRetentionResponseSchema;
  },
  /**
   * PinCheckpoint keeps one checkpoint whatever the retention policy says,
   * until UnpinCheckpoint. Idempotent. NOT_FOUND when the step has no
   * checkpoint.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.PinCheckpoint
   */
  pinCheckpoint: {
    methodKind: "unary";
    input: typeof PinCheckpointRequestSchema;
    output: typeof PinCheckpointResponseSchema;
  },
  /**
   * UnpinCheckpoint removes an operator's pin (or every pin, with
   * all_sources). Pins taken automatically while a task waits for approval go
   * by themselves when the task leaves input_required.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.UnpinCheckpoint
   */
  unpinCheckpoint: {
    methodKind: "unary";
    input: typeof UnpinCheckpointRequestSchema;
    output: typeof UnpinCheckpointResponseSchema;
  },
  /**
   * ValidateTenant verifies every checkpoint of the caller's tenant, like
   * Validate on every run, and quarantines the corrupt ones. Verdicts stream
   * as they are made, run by run in ascending (run_id, step) order; the server
   * holds one page of checkpoint addresses at a time however many exist.
   *
   * @generated from rpc checkpoint.v1.CheckpointService.ValidateTenant
   */
  validateTenant: {
    methodKind: "server_streaming";
    input: typeof ValidateTenantRequestSchema;
    output: typeof ValidateTenantResponseSchema;
  },
}> = /*@__PURE__*/
  serviceDesc(file_checkpoint_v1_checkpoint, 0);

