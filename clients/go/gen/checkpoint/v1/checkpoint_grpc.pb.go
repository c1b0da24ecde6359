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

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.6.2
// - protoc             (unknown)
// source: checkpoint/v1/checkpoint.proto

package checkpointv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	CheckpointService_Save_FullMethodName              = "/checkpoint.v1.CheckpointService/Save"
	CheckpointService_LoadLatest_FullMethodName        = "/checkpoint.v1.CheckpointService/LoadLatest"
	CheckpointService_LoadAtStep_FullMethodName        = "/checkpoint.v1.CheckpointService/LoadAtStep"
	CheckpointService_Validate_FullMethodName          = "/checkpoint.v1.CheckpointService/Validate"
	CheckpointService_Resume_FullMethodName            = "/checkpoint.v1.CheckpointService/Resume"
	CheckpointService_RecordToolResult_FullMethodName  = "/checkpoint.v1.CheckpointService/RecordToolResult"
	CheckpointService_RecordToolResults_FullMethodName = "/checkpoint.v1.CheckpointService/RecordToolResults"
	CheckpointService_RecordToolIntent_FullMethodName  = "/checkpoint.v1.CheckpointService/RecordToolIntent"
	CheckpointService_GetJournal_FullMethodName        = "/checkpoint.v1.CheckpointService/GetJournal"
	CheckpointService_RepairJournal_FullMethodName     = "/checkpoint.v1.CheckpointService/RepairJournal"
	CheckpointService_ListCheckpoints_FullMethodName   = "/checkpoint.v1.CheckpointService/ListCheckpoints"
	CheckpointService_GetRun_FullMethodName            = "/checkpoint.v1.CheckpointService/GetRun"
	CheckpointService_ListRuns_FullMethodName          = "/checkpoint.v1.CheckpointService/ListRuns"
	CheckpointService_DeleteRun_FullMethodName         = "/checkpoint.v1.CheckpointService/DeleteRun"
	CheckpointService_DeleteCheckpoints_FullMethodName = "/checkpoint.v1.CheckpointService/DeleteCheckpoints"
	CheckpointService_SetRetention_FullMethodName      = "/checkpoint.v1.CheckpointService/SetRetention"
	CheckpointService_PinCheckpoint_FullMethodName     = "/checkpoint.v1.CheckpointService/PinCheckpoint"
	CheckpointService_UnpinCheckpoint_FullMethodName   = "/checkpoint.v1.CheckpointService/UnpinCheckpoint"
	CheckpointService_ValidateTenant_FullMethodName    = "/checkpoint.v1.CheckpointService/ValidateTenant"
)

// CheckpointServiceClient is the client API for CheckpointService service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// CheckpointService saves and restores agent checkpoints.
type CheckpointServiceClient interface {
	// Save durably stores a checkpoint. It returns only after the database
	// commit. A retry with identical content at the same step succeeds and
	// changes nothing; different content at an existing step is ALREADY_EXISTS
	// unless the request carries a newer epoch than the stored checkpoint.
	Save(ctx context.Context, in *SaveRequest, opts ...grpc.CallOption) (*SaveResponse, error)
	// LoadLatest returns the latest valid checkpoint of a run, with its message
	// history (from `message_offset`) and the journalled tool calls (every one
	// unless `journal` narrows them). Corrupt checkpoints are quarantined and
	// skipped. NOT_FOUND (CHECKPOINT_NOT_FOUND) when the run has no checkpoint;
	// DATA_LOSS (ALL_CHECKPOINTS_CORRUPT) when every checkpoint is corrupt.
	LoadLatest(ctx context.Context, in *LoadLatestRequest, opts ...grpc.CallOption) (*LoadLatestResponse, error)
	// LoadAtStep returns the checkpoint at one step, or the one with a label.
	// DATA_LOSS (CHECKPOINT_CORRUPT) when it is corrupt or quarantined,
	// NOT_FOUND (CHECKPOINT_NOT_FOUND) when there is none.
	LoadAtStep(ctx context.Context, in *LoadAtStepRequest, opts ...grpc.CallOption) (*LoadAtStepResponse, error)
	// Validate verifies the checksum of one checkpoint, or of every checkpoint
	// of a run, and quarantines the corrupt ones so they are never restored.
	Validate(ctx context.Context, in *ValidateRequest, opts ...grpc.CallOption) (*ValidateResponse, error)
	// Resume is the recovery call. It hands out a new fencing epoch, restores
	// the latest valid checkpoint (skipping and quarantining corrupt ones),
	// truncates the message log to that checkpoint, and returns every
	// journalled tool result. A run with no valid checkpoint (including a run
	// never seen before, unless `require_existing`) restarts from scratch at
	// step 0. Calls in doubt are reported only to a client that declares
	// CLIENT_CAPABILITY_IN_DOUBT_CALLS; see ResumeRequest.capabilities.
	Resume(ctx context.Context, in *ResumeRequest, opts ...grpc.CallOption) (*ResumeResponse, error)
	// RecordToolResult journals a tool call's result durably, keyed by a
	// deterministic call id. A retry with the same call id returns the stored
	// result unchanged.
	RecordToolResult(ctx context.Context, in *RecordToolResultRequest, opts ...grpc.CallOption) (*RecordToolResultResponse, error)
	// RecordToolResults journals a batch of one run's tool results in one
	// database transaction: all of them or none. Fenced once by the request's
	// epoch, like RecordToolResult. Each entry behaves exactly as a
	// RecordToolResult of its own, in order: the first write of a call id wins,
	// and an entry whose call id is journalled already (before, or earlier in
	// the same batch) returns the stored result with `already_recorded`. At
	// most 1000 entries (RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before
	// the request is decoded); an invalid entry refuses the whole batch with
	// INVALID_ARGUMENT naming it, e.g. field `results[2].call_id`.
	RecordToolResults(ctx context.Context, in *RecordToolResultsRequest, opts ...grpc.CallOption) (*RecordToolResultsResponse, error)
	// RecordToolIntent journals, before a side-effecting tool runs, that the
	// call is about to happen, and returns the idempotency key to hand the tool.
	// A later RecordToolResult with the same call id completes the intent. A
	// retry with the same call id returns the stored intent unchanged (and the
	// stored result, if the call completed). Fenced by epoch like
	// RecordToolResult. An intent without a result after a crash is in doubt:
	// Resume lists it in `in_doubt`.
	RecordToolIntent(ctx context.Context, in *RecordToolIntentRequest, opts ...grpc.CallOption) (*RecordToolIntentResponse, error)
	// GetJournal shows a run's whole tool journal for operators: results,
	// intents, calls in doubt, corrupt entries, and the repairs made so far.
	// NOT_FOUND for an unknown run.
	GetJournal(ctx context.Context, in *GetJournalRequest, opts ...grpc.CallOption) (*GetJournalResponse, error)
	// RepairJournal settles one call of a run's journal by an operator's
	// decision: mark an in-doubt or corrupt call done with a given output, or
	// drop a corrupt entry. Entries after a repaired one are re-chained and the
	// checkpoints that covered the old journal are quarantined, so the run
	// resumes from a checkpoint that verifies. Every repair is recorded and
	// shown by GetJournal. FAILED_PRECONDITION when the call is neither in doubt
	// nor corrupt (or, for a drop, not corrupt).
	RepairJournal(ctx context.Context, in *RepairJournalRequest, opts ...grpc.CallOption) (*RepairJournalResponse, error)
	// ListCheckpoints pages through a run's checkpoints by step, ascending by
	// default, optionally filtered by metadata.
	ListCheckpoints(ctx context.Context, in *ListCheckpointsRequest, opts ...grpc.CallOption) (*ListCheckpointsResponse, error)
	// GetRun reads a run's head (epoch, latest steps, log and journal lengths)
	// without its payload and without fencing anyone. NOT_FOUND (reason
	// RUN_NOT_FOUND) for an unknown run.
	GetRun(ctx context.Context, in *GetRunRequest, opts ...grpc.CallOption) (*GetRunResponse, error)
	// ListRuns pages through the caller's runs in ascending run id order.
	ListRuns(ctx context.Context, in *ListRunsRequest, opts ...grpc.CallOption) (*ListRunsResponse, error)
	// DeleteRun removes a run with its checkpoints, messages and tool results.
	DeleteRun(ctx context.Context, in *DeleteRunRequest, opts ...grpc.CallOption) (*DeleteRunResponse, error)
	// DeleteCheckpoints deletes chosen checkpoints of a run now, in one
	// transaction: what a framework's own pruning needs (LangGraph's `prune`
	// and `delete_for_runs`), where SetRetention only prunes later, in the
	// background. See DeleteCheckpointsRequest for exactly what goes and what
	// stays. NOT_FOUND (RUN_NOT_FOUND) for an unknown run; INVALID_ARGUMENT for
	// a negative step or more than 1000 steps; with an `epoch`,
	// FAILED_PRECONDITION (STALE_EPOCH, EPOCH_NOT_ISSUED) when it is not the
	// run's, and then nothing is deleted.
	DeleteCheckpoints(ctx context.Context, in *DeleteCheckpointsRequest, opts ...grpc.CallOption) (*DeleteCheckpointsResponse, error)
	// SetRetention sets how many of a run's checkpoints are kept, creating the
	// run if needed. The pruner deletes the rest in the background; the latest
	// valid checkpoint, pinned ones and the one the journal's tail depends on
	// are always kept. INVALID_ARGUMENT for an unknown policy.
	SetRetention(ctx context.Context, in *SetRetentionRequest, opts ...grpc.CallOption) (*SetRetentionResponse, error)
	// PinCheckpoint keeps one checkpoint whatever the retention policy says,
	// until UnpinCheckpoint. Idempotent. NOT_FOUND when the step has no
	// checkpoint.
	PinCheckpoint(ctx context.Context, in *PinCheckpointRequest, opts ...grpc.CallOption) (*PinCheckpointResponse, error)
	// UnpinCheckpoint removes an operator's pin (or every pin, with
	// all_sources). Pins taken automatically while a task waits for approval go
	// by themselves when the task leaves input_required.
	UnpinCheckpoint(ctx context.Context, in *UnpinCheckpointRequest, opts ...grpc.CallOption) (*UnpinCheckpointResponse, error)
	// ValidateTenant verifies every checkpoint of the caller's tenant, like
	// Validate on every run, and quarantines the corrupt ones. Verdicts stream
	// as they are made, run by run in ascending (run_id, step) order; the server
	// holds one page of checkpoint addresses at a time however many exist.
	ValidateTenant(ctx context.Context, in *ValidateTenantRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ValidateTenantResponse], error)
}

type checkpointServiceClient struct {
	cc grpc.ClientConnInterface
}

func NewCheckpointServiceClient(cc grpc.ClientConnInterface) CheckpointServiceClient {
	return &checkpointServiceClient{cc}
}

func (c *checkpointServiceClient) Save(ctx context.Context, in *SaveRequest, opts ...grpc.CallOption) (*SaveResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(SaveResponse)
	err := c.cc.Invoke(ctx, CheckpointService_Save_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) LoadLatest(ctx context.Context, in *LoadLatestRequest, opts ...grpc.CallOption) (*LoadLatestResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(LoadLatestResponse)
	err := c.cc.Invoke(ctx, CheckpointService_LoadLatest_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) LoadAtStep(ctx context.Context, in *LoadAtStepRequest, opts ...grpc.CallOption) (*LoadAtStepResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(LoadAtStepResponse)
	err := c.cc.Invoke(ctx, CheckpointService_LoadAtStep_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) Validate(ctx context.Context, in *ValidateRequest, opts ...grpc.CallOption) (*ValidateResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ValidateResponse)
	err := c.cc.Invoke(ctx, CheckpointService_Validate_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) Resume(ctx context.Context, in *ResumeRequest, opts ...grpc.CallOption) (*ResumeResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ResumeResponse)
	err := c.cc.Invoke(ctx, CheckpointService_Resume_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) RecordToolResult(ctx context.Context, in *RecordToolResultRequest, opts ...grpc.CallOption) (*RecordToolResultResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RecordToolResultResponse)
	err := c.cc.Invoke(ctx, CheckpointService_RecordToolResult_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) RecordToolResults(ctx context.Context, in *RecordToolResultsRequest, opts ...grpc.CallOption) (*RecordToolResultsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RecordToolResultsResponse)
	err := c.cc.Invoke(ctx, CheckpointService_RecordToolResults_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) RecordToolIntent(ctx context.Context, in *RecordToolIntentRequest, opts ...grpc.CallOption) (*RecordToolIntentResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RecordToolIntentResponse)
	err := c.cc.Invoke(ctx, CheckpointService_RecordToolIntent_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) GetJournal(ctx context.Context, in *GetJournalRequest, opts ...grpc.CallOption) (*GetJournalResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetJournalResponse)
	err := c.cc.Invoke(ctx, CheckpointService_GetJournal_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) RepairJournal(ctx context.Context, in *RepairJournalRequest, opts ...grpc.CallOption) (*RepairJournalResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RepairJournalResponse)
	err := c.cc.Invoke(ctx, CheckpointService_RepairJournal_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) ListCheckpoints(ctx context.Context, in *ListCheckpointsRequest, opts ...grpc.CallOption) (*ListCheckpointsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListCheckpointsResponse)
	err := c.cc.Invoke(ctx, CheckpointService_ListCheckpoints_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) GetRun(ctx context.Context, in *GetRunRequest, opts ...grpc.CallOption) (*GetRunResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetRunResponse)
	err := c.cc.Invoke(ctx, CheckpointService_GetRun_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) ListRuns(ctx context.Context, in *ListRunsRequest, opts ...grpc.CallOption) (*ListRunsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListRunsResponse)
	err := c.cc.Invoke(ctx, CheckpointService_ListRuns_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) DeleteRun(ctx context.Context, in *DeleteRunRequest, opts ...grpc.CallOption) (*DeleteRunResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DeleteRunResponse)
	err := c.cc.Invoke(ctx, CheckpointService_DeleteRun_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) DeleteCheckpoints(ctx context.Context, in *DeleteCheckpointsRequest, opts ...grpc.CallOption) (*DeleteCheckpointsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DeleteCheckpointsResponse)
	err := c.cc.Invoke(ctx, CheckpointService_DeleteCheckpoints_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) SetRetention(ctx context.Context, in *SetRetentionRequest, opts ...grpc.CallOption) (*SetRetentionResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(SetRetentionResponse)
	err := c.cc.Invoke(ctx, CheckpointService_SetRetention_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) PinCheckpoint(ctx context.Context, in *PinCheckpointRequest, opts ...grpc.CallOption) (*PinCheckpointResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(PinCheckpointResponse)
	err := c.cc.Invoke(ctx, CheckpointService_PinCheckpoint_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) UnpinCheckpoint(ctx context.Context, in *UnpinCheckpointRequest, opts ...grpc.CallOption) (*UnpinCheckpointResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(UnpinCheckpointResponse)
	err := c.cc.Invoke(ctx, CheckpointService_UnpinCheckpoint_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *checkpointServiceClient) ValidateTenant(ctx context.Context, in *ValidateTenantRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ValidateTenantResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &CheckpointService_ServiceDesc.Streams[0], CheckpointService_ValidateTenant_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[ValidateTenantRequest, ValidateTenantResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type CheckpointService_ValidateTenantClient = grpc.ServerStreamingClient[ValidateTenantResponse]

// CheckpointServiceServer is the server API for CheckpointService service.
// All implementations must embed UnimplementedCheckpointServiceServer
// for forward compatibility.
//
// CheckpointService saves and restores agent checkpoints.
type CheckpointServiceServer interface {
	// Save durably stores a checkpoint. It returns only after the database
	// commit. A retry with identical content at the same step succeeds and
	// changes nothing; different content at an existing step is ALREADY_EXISTS
	// unless the request carries a newer epoch than the stored checkpoint.
	Save(context.Context, *SaveRequest) (*SaveResponse, error)
	// LoadLatest returns the latest valid checkpoint of a run, with its message
	// history (from `message_offset`) and the journalled tool calls (every one
	// unless `journal` narrows them). Corrupt checkpoints are quarantined and
	// skipped. NOT_FOUND (CHECKPOINT_NOT_FOUND) when the run has no checkpoint;
	// DATA_LOSS (ALL_CHECKPOINTS_CORRUPT) when every checkpoint is corrupt.
	LoadLatest(context.Context, *LoadLatestRequest) (*LoadLatestResponse, error)
	// LoadAtStep returns the checkpoint at one step, or the one with a label.
	// DATA_LOSS (CHECKPOINT_CORRUPT) when it is corrupt or quarantined,
	// NOT_FOUND (CHECKPOINT_NOT_FOUND) when there is none.
	LoadAtStep(context.Context, *LoadAtStepRequest) (*LoadAtStepResponse, error)
	// Validate verifies the checksum of one checkpoint, or of every checkpoint
	// of a run, and quarantines the corrupt ones so they are never restored.
	Validate(context.Context, *ValidateRequest) (*ValidateResponse, error)
	// Resume is the recovery call. It hands out a new fencing epoch, restores
	// the latest valid checkpoint (skipping and quarantining corrupt ones),
	// truncates the message log to that checkpoint, and returns every
	// journalled tool result. A run with no valid checkpoint (including a run
	// never seen before, unless `require_existing`) restarts from scratch at
	// step 0. Calls in doubt are reported only to a client that declares
	// CLIENT_CAPABILITY_IN_DOUBT_CALLS; see ResumeRequest.capabilities.
	Resume(context.Context, *ResumeRequest) (*ResumeResponse, error)
	// RecordToolResult journals a tool call's result durably, keyed by a
	// deterministic call id. A retry with the same call id returns the stored
	// result unchanged.
	RecordToolResult(context.Context, *RecordToolResultRequest) (*RecordToolResultResponse, error)
	// RecordToolResults journals a batch of one run's tool results in one
	// database transaction: all of them or none. Fenced once by the request's
	// epoch, like RecordToolResult. Each entry behaves exactly as a
	// RecordToolResult of its own, in order: the first write of a call id wins,
	// and an entry whose call id is journalled already (before, or earlier in
	// the same batch) returns the stored result with `already_recorded`. At
	// most 1000 entries (RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before
	// the request is decoded); an invalid entry refuses the whole batch with
	// INVALID_ARGUMENT naming it, e.g. field `results[2].call_id`.
	RecordToolResults(context.Context, *RecordToolResultsRequest) (*RecordToolResultsResponse, error)
	// RecordToolIntent journals, before a side-effecting tool runs, that the
	// call is about to happen, and returns the idempotency key to hand the tool.
	// A later RecordToolResult with the same call id completes the intent. A
	// retry with the same call id returns the stored intent unchanged (and the
	// stored result, if the call completed). Fenced by epoch like
	// RecordToolResult. An intent without a result after a crash is in doubt:
	// Resume lists it in `in_doubt`.
	RecordToolIntent(context.Context, *RecordToolIntentRequest) (*RecordToolIntentResponse, error)
	// GetJournal shows a run's whole tool journal for operators: results,
	// intents, calls in doubt, corrupt entries, and the repairs made so far.
	// NOT_FOUND for an unknown run.
	GetJournal(context.Context, *GetJournalRequest) (*GetJournalResponse, error)
	// RepairJournal settles one call of a run's journal by an operator's
	// decision: mark an in-doubt or corrupt call done with a given output, or
	// drop a corrupt entry. Entries after a repaired one are re-chained and the
	// checkpoints that covered the old journal are quarantined, so the run
	// resumes from a checkpoint that verifies. Every repair is recorded and
	// shown by GetJournal. FAILED_PRECONDITION when the call is neither in doubt
	// nor corrupt (or, for a drop, not corrupt).
	RepairJournal(context.Context, *RepairJournalRequest) (*RepairJournalResponse, error)
	// ListCheckpoints pages through a run's checkpoints by step, ascending by
	// default, optionally filtered by metadata.
	ListCheckpoints(context.Context, *ListCheckpointsRequest) (*ListCheckpointsResponse, error)
	// GetRun reads a run's head (epoch, latest steps, log and journal lengths)
	// without its payload and without fencing anyone. NOT_FOUND (reason
	// RUN_NOT_FOUND) for an unknown run.
	GetRun(context.Context, *GetRunRequest) (*GetRunResponse, error)
	// ListRuns pages through the caller's runs in ascending run id order.
	ListRuns(context.Context, *ListRunsRequest) (*ListRunsResponse, error)
	// DeleteRun removes a run with its checkpoints, messages and tool results.
	DeleteRun(context.Context, *DeleteRunRequest) (*DeleteRunResponse, error)
	// DeleteCheckpoints deletes chosen checkpoints of a run now, in one
	// transaction: what a framework's own pruning needs (LangGraph's `prune`
	// and `delete_for_runs`), where SetRetention only prunes later, in the
	// background. See DeleteCheckpointsRequest for exactly what goes and what
	// stays. NOT_FOUND (RUN_NOT_FOUND) for an unknown run; INVALID_ARGUMENT for
	// a negative step or more than 1000 steps; with an `epoch`,
	// FAILED_PRECONDITION (STALE_EPOCH, EPOCH_NOT_ISSUED) when it is not the
	// run's, and then nothing is deleted.
	DeleteCheckpoints(context.Context, *DeleteCheckpointsRequest) (*DeleteCheckpointsResponse, error)
	// SetRetention sets how many of a run's checkpoints are kept, creating the
	// run if needed. The pruner deletes the rest in the background; the latest
	// valid checkpoint, pinned ones and the one the journal's tail depends on
	// are always kept. INVALID_ARGUMENT for an unknown policy.
	SetRetention(context.Context, *SetRetentionRequest) (*SetRetentionResponse, error)
	// PinCheckpoint keeps one checkpoint whatever the retention policy says,
	// until UnpinCheckpoint. Idempotent. NOT_FOUND when the step has no
	// checkpoint.
	PinCheckpoint(context.Context, *PinCheckpointRequest) (*PinCheckpointResponse, error)
	// UnpinCheckpoint removes an operator's pin (or every pin, with
	// all_sources). Pins taken automatically while a task waits for approval go
	// by themselves when the task leaves input_required.
	UnpinCheckpoint(context.Context, *UnpinCheckpointRequest) (*UnpinCheckpointResponse, error)
	// ValidateTenant verifies every checkpoint of the caller's tenant, like
	// Validate on every run, and quarantines the corrupt ones. Verdicts stream
	// as they are made, run by run in ascending (run_id, step) order; the server
	// holds one page of checkpoint addresses at a time however many exist.
	ValidateTenant(*ValidateTenantRequest, grpc.ServerStreamingServer[ValidateTenantResponse]) error
	mustEmbedUnimplementedCheckpointServiceServer()
}

// UnimplementedCheckpointServiceServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedCheckpointServiceServer struct{}

func (UnimplementedCheckpointServiceServer) Save(context.Context, *SaveRequest) (*SaveResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Save not implemented")
}
func (UnimplementedCheckpointServiceServer) LoadLatest(context.Context, *LoadLatestRequest) (*LoadLatestResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method LoadLatest not implemented")
}
func (UnimplementedCheckpointServiceServer) LoadAtStep(context.Context, *LoadAtStepRequest) (*LoadAtStepResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method LoadAtStep not implemented")
}
func (UnimplementedCheckpointServiceServer) Validate(context.Context, *ValidateRequest) (*ValidateResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Validate not implemented")
}
func (UnimplementedCheckpointServiceServer) Resume(context.Context, *ResumeRequest) (*ResumeResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Resume not implemented")
}
func (UnimplementedCheckpointServiceServer) RecordToolResult(context.Context, *RecordToolResultRequest) (*RecordToolResultResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method RecordToolResult not implemented")
}
func (UnimplementedCheckpointServiceServer) RecordToolResults(context.Context, *RecordToolResultsRequest) (*RecordToolResultsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method RecordToolResults not implemented")
}
func (UnimplementedCheckpointServiceServer) RecordToolIntent(context.Context, *RecordToolIntentRequest) (*RecordToolIntentResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method RecordToolIntent not implemented")
}
func (UnimplementedCheckpointServiceServer) GetJournal(context.Context, *GetJournalRequest) (*GetJournalResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method GetJournal not implemented")
}
func (UnimplementedCheckpointServiceServer) RepairJournal(context.Context, *RepairJournalRequest) (*RepairJournalResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method RepairJournal not implemented")
}
func (UnimplementedCheckpointServiceServer) ListCheckpoints(context.Context, *ListCheckpointsRequest) (*ListCheckpointsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method ListCheckpoints not implemented")
}
func (UnimplementedCheckpointServiceServer) GetRun(context.Context, *GetRunRequest) (*GetRunResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method GetRun not implemented")
}
func (UnimplementedCheckpointServiceServer) ListRuns(context.Context, *ListRunsRequest) (*ListRunsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method ListRuns not implemented")
}
func (UnimplementedCheckpointServiceServer) DeleteRun(context.Context, *DeleteRunRequest) (*DeleteRunResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method DeleteRun not implemented")
}
func (UnimplementedCheckpointServiceServer) DeleteCheckpoints(context.Context, *DeleteCheckpointsRequest) (*DeleteCheckpointsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method DeleteCheckpoints not implemented")
}
func (UnimplementedCheckpointServiceServer) SetRetention(context.Context, *SetRetentionRequest) (*SetRetentionResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method SetRetention not implemented")
}
func (UnimplementedCheckpointServiceServer) PinCheckpoint(context.Context, *PinCheckpointRequest) (*PinCheckpointResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method PinCheckpoint not implemented")
}
func (UnimplementedCheckpointServiceServer) UnpinCheckpoint(context.Context, *UnpinCheckpointRequest) (*UnpinCheckpointResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method UnpinCheckpoint not implemented")
}
func (UnimplementedCheckpointServiceServer) ValidateTenant(*ValidateTenantRequest, grpc.ServerStreamingServer[ValidateTenantResponse]) error {
	return status.Error(codes.Unimplemented, "method ValidateTenant not implemented")
}
func (UnimplementedCheckpointServiceServer) mustEmbedUnimplementedCheckpointServiceServer() {}
func (UnimplementedCheckpointServiceServer) testEmbeddedByValue()                           {}

// UnsafeCheckpointServiceServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to CheckpointServiceServer will
// result in compilation errors.
type UnsafeCheckpointServiceServer interface {
	mustEmbedUnimplementedCheckpointServiceServer()
}

func RegisterCheckpointServiceServer(s grpc.ServiceRegistrar, srv CheckpointServiceServer) {
	// If the following call panics, it indicates UnimplementedCheckpointServiceServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&CheckpointService_ServiceDesc, srv)
}

func _CheckpointService_Save_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(SaveRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).Save(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_Save_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).Save(ctx, req.(*SaveRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_LoadLatest_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(LoadLatestRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).LoadLatest(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_LoadLatest_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).LoadLatest(ctx, req.(*LoadLatestRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_LoadAtStep_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(LoadAtStepRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).LoadAtStep(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_LoadAtStep_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).LoadAtStep(ctx, req.(*LoadAtStepRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_Validate_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ValidateRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).Validate(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_Validate_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).Validate(ctx, req.(*ValidateRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_Resume_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ResumeRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).Resume(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_Resume_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).Resume(ctx, req.(*ResumeRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_RecordToolResult_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RecordToolResultRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).RecordToolResult(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_RecordToolResult_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).RecordToolResult(ctx, req.(*RecordToolResultRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_RecordToolResults_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RecordToolResultsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).RecordToolResults(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_RecordToolResults_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).RecordToolResults(ctx, req.(*RecordToolResultsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_RecordToolIntent_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RecordToolIntentRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).RecordToolIntent(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_RecordToolIntent_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).RecordToolIntent(ctx, req.(*RecordToolIntentRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_GetJournal_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetJournalRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).GetJournal(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_GetJournal_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).GetJournal(ctx, req.(*GetJournalRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_RepairJournal_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RepairJournalRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).RepairJournal(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_RepairJournal_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).RepairJournal(ctx, req.(*RepairJournalRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_ListCheckpoints_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListCheckpointsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).ListCheckpoints(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_ListCheckpoints_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).ListCheckpoints(ctx, req.(*ListCheckpointsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_GetRun_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetRunRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).GetRun(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_GetRun_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).GetRun(ctx, req.(*GetRunRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_ListRuns_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListRunsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).ListRuns(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_ListRuns_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).ListRuns(ctx, req.(*ListRunsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_DeleteRun_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DeleteRunRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).DeleteRun(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_DeleteRun_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).DeleteRun(ctx, req.(*DeleteRunRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_DeleteCheckpoints_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DeleteCheckpointsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).DeleteCheckpoints(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_DeleteCheckpoints_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).DeleteCheckpoints(ctx, req.(*DeleteCheckpointsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_SetRetention_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(SetRetentionRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).SetRetention(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_SetRetention_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).SetRetention(ctx, req.(*SetRetentionRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_PinCheckpoint_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(PinCheckpointRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).PinCheckpoint(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_PinCheckpoint_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).PinCheckpoint(ctx, req.(*PinCheckpointRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_UnpinCheckpoint_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(UnpinCheckpointRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(CheckpointServiceServer).UnpinCheckpoint(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: CheckpointService_UnpinCheckpoint_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(CheckpointServiceServer).UnpinCheckpoint(ctx, req.(*UnpinCheckpointRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _CheckpointService_ValidateTenant_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(ValidateTenantRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(CheckpointServiceServer).ValidateTenant(m, &grpc.GenericServerStream[ValidateTenantRequest, ValidateTenantResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type CheckpointService_ValidateTenantServer = grpc.ServerStreamingServer[ValidateTenantResponse]

// CheckpointService_ServiceDesc is the grpc.ServiceDesc for CheckpointService service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var CheckpointService_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "checkpoint.v1.CheckpointService",
	HandlerType: (*CheckpointServiceServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "Save",
			Handler:    _CheckpointService_Save_Handler,
		},
		{
			MethodName: "LoadLatest",
			Handler:    _CheckpointService_LoadLatest_Handler,
		},
		{
			MethodName: "LoadAtStep",
			Handler:    _CheckpointService_LoadAtStep_Handler,
		},
		{
			MethodName: "Validate",
			Handler:    _CheckpointService_Validate_Handler,
		},
		{
			MethodName: "Resume",
			Handler:    _CheckpointService_Resume_Handler,
		},
		{
			MethodName: "RecordToolResult",
			Handler:    _CheckpointService_RecordToolResult_Handler,
		},
		{
			MethodName: "RecordToolResults",
			Handler:    _CheckpointService_RecordToolResults_Handler,
		},
		{
			MethodName: "RecordToolIntent",
			Handler:    _CheckpointService_RecordToolIntent_Handler,
		},
		{
			MethodName: "GetJournal",
			Handler:    _CheckpointService_GetJournal_Handler,
		},
		{
			MethodName: "RepairJournal",
			Handler:    _CheckpointService_RepairJournal_Handler,
		},
		{
			MethodName: "ListCheckpoints",
			Handler:    _CheckpointService_ListCheckpoints_Handler,
		},
		{
			MethodName: "GetRun",
			Handler:    _CheckpointService_GetRun_Handler,
		},
		{
			MethodName: "ListRuns",
			Handler:    _CheckpointService_ListRuns_Handler,
		},
		{
			MethodName: "DeleteRun",
			Handler:    _CheckpointService_DeleteRun_Handler,
		},
		{
			MethodName: "DeleteCheckpoints",
			Handler:    _CheckpointService_DeleteCheckpoints_Handler,
		},
		{
			MethodName: "SetRetention",
			Handler:    _CheckpointService_SetRetention_Handler,
		},
		{
			MethodName: "PinCheckpoint",
			Handler:    _CheckpointService_PinCheckpoint_Handler,
		},
		{
			MethodName: "UnpinCheckpoint",
			Handler:    _CheckpointService_UnpinCheckpoint_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "ValidateTenant",
			Handler:       _CheckpointService_ValidateTenant_Handler,
			ServerStreams: true,
		},
	},
	Metadata: "checkpoint/v1/checkpoint.proto",
}
