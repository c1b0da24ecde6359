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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        (unknown)
// source: checkpoint/v1/checkpoint.proto

package checkpointv1

import (
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	timestamppb "google.golang.org/protobuf/types/known/timestamppb"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// JournalScope chooses which journal entries a load returns, and so what the
// load reads and verifies. Every journal entry stores the tool chain's value
// after it. JOURNAL_SCOPE_STEP reads the entries from the first one of the
// checkpoint's step to the journal's end and verifies them by recomputing the
// chain from the value stored just before that first entry: every returned
// entry must match its stored value, and the value at the checkpoint's
// `tool_count` goes into the checksum. JOURNAL_SCOPE_NONE reads no entry, only
// the value stored at `tool_count`, which the checksum checks. This is as
// strong as hashing the journal from its first entry for what is returned: a
// damaged or forged stored value that a load starts from makes the recomputed
// chain disagree with the next stored value or with the checksum, and the load
// is DATA_LOSS (a damaged journal, refused as before; the checkpoint is not
// quarantined for it). What it does not check is the entries it does not
// return (those before the window): a damaged one there fails a load with
// JOURNAL_SCOPE_ALL, Validate and the scrub, which still verify the whole
// journal from its first entry. Resume always reads and verifies the whole
// journal.
type JournalScope int32

const (
	// The default: the same as JOURNAL_SCOPE_ALL.
	JournalScope_JOURNAL_SCOPE_UNSPECIFIED JournalScope = 0
	// Every journal entry of the run, including those recorded after the
	// checkpoint.
	JournalScope_JOURNAL_SCOPE_ALL JournalScope = 1
	// Only the entries whose `step` equals the loaded checkpoint's step.
	JournalScope_JOURNAL_SCOPE_STEP JournalScope = 2
	// No journal entries.
	JournalScope_JOURNAL_SCOPE_NONE JournalScope = 3
)

// Enum value maps for JournalScope.
var (
	JournalScope_name = map[int32]string{
		0: "JOURNAL_SCOPE_UNSPECIFIED",
		1: "JOURNAL_SCOPE_ALL",
		2: "JOURNAL_SCOPE_STEP",
		3: "JOURNAL_SCOPE_NONE",
	}
	JournalScope_value = map[string]int32{
		"JOURNAL_SCOPE_UNSPECIFIED": 0,
		"JOURNAL_SCOPE_ALL":         1,
		"JOURNAL_SCOPE_STEP":        2,
		"JOURNAL_SCOPE_NONE":        3,
	}
)

func (x JournalScope) Enum() *JournalScope {
	p := new(JournalScope)
	*p = x
	return p
}

func (x JournalScope) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (JournalScope) Descriptor() protoreflect.EnumDescriptor {
	return file_checkpoint_v1_checkpoint_proto_enumTypes[0].Descriptor()
}

func (JournalScope) Type() protoreflect.EnumType {
	return &file_checkpoint_v1_checkpoint_proto_enumTypes[0]
}

func (x JournalScope) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use JournalScope.Descriptor instead.
func (JournalScope) EnumDescriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{0}
}

// ClientCapability is something a client declares it understands, so that
// the server may answer with it. New values are added as the protocol grows;
// each one documents the answer a client gets without it.
type ClientCapability int32

const (
	// Never meaningful; ignored.
	ClientCapability_CLIENT_CAPABILITY_UNSPECIFIED ClientCapability = 0
	// The client reads ResumeResponse's `tool_intents`, `in_doubt` and
	// `corrupt_call_ids`, and never re-runs a call in doubt silently: Resume
	// may then restore past a corrupt journal entry and report calls in doubt.
	ClientCapability_CLIENT_CAPABILITY_IN_DOUBT_CALLS ClientCapability = 1
	// The client follows `continuation` on LoadLatest, LoadAtStep and Resume
	// answers, so a long message history may come back a page at a time
	// (--max-answer-message-bytes per page) instead of in one answer.
	ClientCapability_CLIENT_CAPABILITY_PAGED_MESSAGES ClientCapability = 2
)

// Enum value maps for ClientCapability.
var (
	ClientCapability_name = map[int32]string{
		0: "CLIENT_CAPABILITY_UNSPECIFIED",
		1: "CLIENT_CAPABILITY_IN_DOUBT_CALLS",
		2: "CLIENT_CAPABILITY_PAGED_MESSAGES",
	}
	ClientCapability_value = map[string]int32{
		"CLIENT_CAPABILITY_UNSPECIFIED":    0,
		"CLIENT_CAPABILITY_IN_DOUBT_CALLS": 1,
		"CLIENT_CAPABILITY_PAGED_MESSAGES": 2,
	}
)

func (x ClientCapability) Enum() *ClientCapability {
	p := new(ClientCapability)
	*p = x
	return p
}

func (x ClientCapability) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ClientCapability) Descriptor() protoreflect.EnumDescriptor {
	return file_checkpoint_v1_checkpoint_proto_enumTypes[1].Descriptor()
}

func (ClientCapability) Type() protoreflect.EnumType {
	return &file_checkpoint_v1_checkpoint_proto_enumTypes[1]
}

func (x ClientCapability) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ClientCapability.Descriptor instead.
func (ClientCapability) EnumDescriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{1}
}

// JournalEntryKind tells a result from an intent in the operator's view.
type JournalEntryKind int32

const (
	// Not set; never sent.
	JournalEntryKind_JOURNAL_ENTRY_KIND_UNSPECIFIED JournalEntryKind = 0
	// A tool result.
	JournalEntryKind_JOURNAL_ENTRY_KIND_RESULT JournalEntryKind = 1
	// A tool intent.
	JournalEntryKind_JOURNAL_ENTRY_KIND_INTENT JournalEntryKind = 2
)

// Enum value maps for JournalEntryKind.
var (
	JournalEntryKind_name = map[int32]string{
		0: "JOURNAL_ENTRY_KIND_UNSPECIFIED",
		1: "JOURNAL_ENTRY_KIND_RESULT",
		2: "JOURNAL_ENTRY_KIND_INTENT",
	}
	JournalEntryKind_value = map[string]int32{
		"JOURNAL_ENTRY_KIND_UNSPECIFIED": 0,
		"JOURNAL_ENTRY_KIND_RESULT":      1,
		"JOURNAL_ENTRY_KIND_INTENT":      2,
	}
)

func (x JournalEntryKind) Enum() *JournalEntryKind {
	p := new(JournalEntryKind)
	*p = x
	return p
}

func (x JournalEntryKind) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (JournalEntryKind) Descriptor() protoreflect.EnumDescriptor {
	return file_checkpoint_v1_checkpoint_proto_enumTypes[2].Descriptor()
}

func (JournalEntryKind) Type() protoreflect.EnumType {
	return &file_checkpoint_v1_checkpoint_proto_enumTypes[2]
}

func (x JournalEntryKind) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use JournalEntryKind.Descriptor instead.
func (JournalEntryKind) EnumDescriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{2}
}

// Message is one entry of a run's append-only message log.
type Message struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Who produced the message, for example `user`, `assistant` or `tool`.
	Role string `protobuf:"bytes,1,opt,name=role,proto3" json:"role,omitempty"`
	// The message body, opaque to checkpointd (text, JSON, ...).
	Content       []byte `protobuf:"bytes,2,opt,name=content,proto3" json:"content,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Message) Reset() {
	*x = Message{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Message) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Message) ProtoMessage() {}

func (x *Message) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Message.ProtoReflect.Descriptor instead.
func (*Message) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{0}
}

func (x *Message) GetRole() string {
	if x != nil {
		return x.Role
	}
	return ""
}

func (x *Message) GetContent() []byte {
	if x != nil {
		return x.Content
	}
	return nil
}

// ToolResult is one journalled tool call.
type ToolResult struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Deterministic id of the call, unique within the run, for example
	// `step-4/send_email/0`. At most 256 bytes.
	CallId string `protobuf:"bytes,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool that ran.
	ToolName string `protobuf:"bytes,2,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step during which the tool ran.
	Step int64 `protobuf:"varint,3,opt,name=step,proto3" json:"step,omitempty"`
	// What the tool returned, opaque to checkpointd.
	Output []byte `protobuf:"bytes,4,opt,name=output,proto3" json:"output,omitempty"`
	// True when `output` describes an error the tool returned.
	IsError bool `protobuf:"varint,5,opt,name=is_error,json=isError,proto3" json:"is_error,omitempty"`
	// Position in the run's tool journal, starting at 1 (`j` in checksum v1).
	Seq uint64 `protobuf:"varint,6,opt,name=seq,proto3" json:"seq,omitempty"`
	// When the result was journalled.
	RecordedAt *timestamppb.Timestamp `protobuf:"bytes,7,opt,name=recorded_at,json=recordedAt,proto3" json:"recorded_at,omitempty"`
	// The call's arguments digest as the client sent it when journalling (see
	// RecordToolResultRequest.arguments_digest); empty when it sent none. A
	// client reuses this result only for a call whose arguments have the same
	// digest, and otherwise refuses the replay (ARGUMENTS_MISMATCH). Not
	// covered by checksum v1.
	ArgumentsDigest string `protobuf:"bytes,8,opt,name=arguments_digest,json=argumentsDigest,proto3" json:"arguments_digest,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *ToolResult) Reset() {
	*x = ToolResult{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolResult) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolResult) ProtoMessage() {}

func (x *ToolResult) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolResult.ProtoReflect.Descriptor instead.
func (*ToolResult) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{1}
}

func (x *ToolResult) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *ToolResult) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *ToolResult) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *ToolResult) GetOutput() []byte {
	if x != nil {
		return x.Output
	}
	return nil
}

func (x *ToolResult) GetIsError() bool {
	if x != nil {
		return x.IsError
	}
	return false
}

func (x *ToolResult) GetSeq() uint64 {
	if x != nil {
		return x.Seq
	}
	return 0
}

func (x *ToolResult) GetRecordedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.RecordedAt
	}
	return nil
}

func (x *ToolResult) GetArgumentsDigest() string {
	if x != nil {
		return x.ArgumentsDigest
	}
	return ""
}

// ToolIntent journals that a side-effecting tool call is about to run.
type ToolIntent struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Deterministic id of the call, unique within the run; the result that
	// completes the intent carries the same id.
	CallId string `protobuf:"bytes,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool about to run.
	ToolName string `protobuf:"bytes,2,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step during which the tool runs.
	Step int64 `protobuf:"varint,3,opt,name=step,proto3" json:"step,omitempty"`
	// Idempotency key v1 (see the top of this file), lower-case hex: the tool
	// must not repeat its side effect for a key it has seen.
	IdempotencyKey string `protobuf:"bytes,4,opt,name=idempotency_key,json=idempotencyKey,proto3" json:"idempotency_key,omitempty"`
	// Position in the run's tool journal (`j` in checksum v1), shared with the
	// results: intents and results are numbered in one sequence.
	Seq uint64 `protobuf:"varint,5,opt,name=seq,proto3" json:"seq,omitempty"`
	// When the intent was journalled.
	RecordedAt *timestamppb.Timestamp `protobuf:"bytes,6,opt,name=recorded_at,json=recordedAt,proto3" json:"recorded_at,omitempty"`
	// The call's arguments digest, as on ToolResult; empty when none was sent.
	ArgumentsDigest string `protobuf:"bytes,7,opt,name=arguments_digest,json=argumentsDigest,proto3" json:"arguments_digest,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *ToolIntent) Reset() {
	*x = ToolIntent{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolIntent) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolIntent) ProtoMessage() {}

func (x *ToolIntent) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolIntent.ProtoReflect.Descriptor instead.
func (*ToolIntent) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{2}
}

func (x *ToolIntent) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *ToolIntent) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *ToolIntent) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *ToolIntent) GetIdempotencyKey() string {
	if x != nil {
		return x.IdempotencyKey
	}
	return ""
}

func (x *ToolIntent) GetSeq() uint64 {
	if x != nil {
		return x.Seq
	}
	return 0
}

func (x *ToolIntent) GetRecordedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.RecordedAt
	}
	return nil
}

func (x *ToolIntent) GetArgumentsDigest() string {
	if x != nil {
		return x.ArgumentsDigest
	}
	return ""
}

// InDoubtCall is a side-effecting call whose outcome is unknown: its intent
// was journalled but no valid result was, or its journal entry is corrupt. It
// must never be re-run silently: retry it with its idempotency key, ask a
// human, or fail, as the tool declares.
type InDoubtCall struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call's id.
	CallId string `protobuf:"bytes,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool; empty when a corrupt entry hides it.
	ToolName string `protobuf:"bytes,2,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step of the call; 0 when a corrupt entry hides it.
	Step int64 `protobuf:"varint,3,opt,name=step,proto3" json:"step,omitempty"`
	// Idempotency key v1 of the call, lower-case hex.
	IdempotencyKey string `protobuf:"bytes,4,opt,name=idempotency_key,json=idempotencyKey,proto3" json:"idempotency_key,omitempty"`
	// True when the call is in doubt because its journal entry is corrupt,
	// false when its intent simply has no result.
	Corrupt       bool `protobuf:"varint,5,opt,name=corrupt,proto3" json:"corrupt,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *InDoubtCall) Reset() {
	*x = InDoubtCall{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *InDoubtCall) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*InDoubtCall) ProtoMessage() {}

func (x *InDoubtCall) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use InDoubtCall.ProtoReflect.Descriptor instead.
func (*InDoubtCall) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{3}
}

func (x *InDoubtCall) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *InDoubtCall) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *InDoubtCall) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *InDoubtCall) GetIdempotencyKey() string {
	if x != nil {
		return x.IdempotencyKey
	}
	return ""
}

func (x *InDoubtCall) GetCorrupt() bool {
	if x != nil {
		return x.Corrupt
	}
	return false
}

// Checkpoint is a restorable snapshot of an agent.
type Checkpoint struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Server-assigned id, unique across the service.
	CheckpointId string `protobuf:"bytes,1,opt,name=checkpoint_id,json=checkpointId,proto3" json:"checkpoint_id,omitempty"`
	// The run this checkpoint belongs to.
	RunId string `protobuf:"bytes,2,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The agent's step at the time of the checkpoint.
	Step int64 `protobuf:"varint,3,opt,name=step,proto3" json:"step,omitempty"`
	// Media type of `state`, for example `application/json`.
	ContentType string `protobuf:"bytes,4,opt,name=content_type,json=contentType,proto3" json:"content_type,omitempty"`
	// The agent's state, opaque to checkpointd.
	State []byte `protobuf:"bytes,5,opt,name=state,proto3" json:"state,omitempty"`
	// The message history up to this checkpoint: its entries from position
	// `messages_offset` to `message_count`, all of them unless the request asked
	// for a message offset.
	Messages []*Message `protobuf:"bytes,6,rep,name=messages,proto3" json:"messages,omitempty"`
	// Free-form key/value metadata supplied on Save.
	Metadata map[string]string `protobuf:"bytes,7,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Fencing epoch the checkpoint was written under.
	Epoch uint64 `protobuf:"varint,8,opt,name=epoch,proto3" json:"epoch,omitempty"`
	// Checksum v1, lower-case hex.
	Checksum string `protobuf:"bytes,9,opt,name=checksum,proto3" json:"checksum,omitempty"`
	// When the checkpoint was committed.
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,10,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// Length of the message log at this checkpoint.
	MessageCount uint64 `protobuf:"varint,11,opt,name=message_count,json=messageCount,proto3" json:"message_count,omitempty"`
	// Number of journal entries (tool results and intents) when this
	// checkpoint was saved; the checksum covers only these.
	ToolCount uint64 `protobuf:"varint,12,opt,name=tool_count,json=toolCount,proto3" json:"tool_count,omitempty"`
	// Position in the message log of the first entry of `messages`: the
	// request's `message_offset`, clamped to `message_count`; 0 when the full
	// history is returned.
	MessagesOffset uint64 `protobuf:"varint,13,opt,name=messages_offset,json=messagesOffset,proto3" json:"messages_offset,omitempty"`
	// The client-chosen label given on Save; empty when none. Not covered by
	// the checksum.
	Label         string `protobuf:"bytes,14,opt,name=label,proto3" json:"label,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Checkpoint) Reset() {
	*x = Checkpoint{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Checkpoint) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Checkpoint) ProtoMessage() {}

func (x *Checkpoint) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Checkpoint.ProtoReflect.Descriptor instead.
func (*Checkpoint) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{4}
}

func (x *Checkpoint) GetCheckpointId() string {
	if x != nil {
		return x.CheckpointId
	}
	return ""
}

func (x *Checkpoint) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *Checkpoint) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *Checkpoint) GetContentType() string {
	if x != nil {
		return x.ContentType
	}
	return ""
}

func (x *Checkpoint) GetState() []byte {
	if x != nil {
		return x.State
	}
	return nil
}

func (x *Checkpoint) GetMessages() []*Message {
	if x != nil {
		return x.Messages
	}
	return nil
}

func (x *Checkpoint) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

func (x *Checkpoint) GetEpoch() uint64 {
	if x != nil {
		return x.Epoch
	}
	return 0
}

func (x *Checkpoint) GetChecksum() string {
	if x != nil {
		return x.Checksum
	}
	return ""
}

func (x *Checkpoint) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *Checkpoint) GetMessageCount() uint64 {
	if x != nil {
		return x.MessageCount
	}
	return 0
}

func (x *Checkpoint) GetToolCount() uint64 {
	if x != nil {
		return x.ToolCount
	}
	return 0
}

func (x *Checkpoint) GetMessagesOffset() uint64 {
	if x != nil {
		return x.MessagesOffset
	}
	return 0
}

func (x *Checkpoint) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

// SaveRequest stores a checkpoint.
type SaveRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Run to save into; 1 to 256 bytes of printable text.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The agent's step; must be >= 0.
	Step int64 `protobuf:"varint,2,opt,name=step,proto3" json:"step,omitempty"`
	// Media type of `state`; at most 256 bytes. May be empty.
	ContentType string `protobuf:"bytes,3,opt,name=content_type,json=contentType,proto3" json:"content_type,omitempty"`
	// The agent's state.
	State []byte `protobuf:"bytes,4,opt,name=state,proto3" json:"state,omitempty"`
	// Only the messages appended since the previous checkpoint. At most
	// `--max-messages-per-save` (default 10000); more are RESOURCE_EXHAUSTED,
	// reason TOO_LARGE, refused before the request is decoded.
	Messages []*Message `protobuf:"bytes,5,rep,name=messages,proto3" json:"messages,omitempty"`
	// Position in the run's message log where `messages` start. It must equal
	// the log's current length. A smaller value is INVALID_ARGUMENT (a client
	// bug: it would overwrite the log). A larger value means messages this run
	// saved before are no longer stored, for example acknowledged by a primary
	// that died before its asynchronous standby took over: FAILED_PRECONDITION,
	// reason MESSAGE_LOG_BEHIND; the client resyncs with Resume.
	MessageOffset uint64 `protobuf:"varint,6,opt,name=message_offset,json=messageOffset,proto3" json:"message_offset,omitempty"`
	// Free-form metadata, covered by the checksum. At most
	// `--max-metadata-entries` (default 1000) entries; more are
	// RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before decoding.
	Metadata map[string]string `protobuf:"bytes,7,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Fencing epoch from the last Resume. Absent means 0, the epoch of a run
	// that was never resumed. A different epoch than the run's is rejected with
	// FAILED_PRECONDITION.
	Epoch *uint64 `protobuf:"varint,8,opt,name=epoch,proto3,oneof" json:"epoch,omitempty"`
	// Optional client-computed checksum v1: 64 lower-case hex digits
	// (upper-case is refused as INVALID_ARGUMENT). When present the server
	// rejects the save with INVALID_ARGUMENT, reason CHECKSUM_MISMATCH, if its
	// own differs.
	Checksum *string `protobuf:"bytes,9,opt,name=checksum,proto3,oneof" json:"checksum,omitempty"`
	// Optional client-chosen name of the checkpoint, unique within the run:
	// printable text of at most 256 bytes; empty means none. A save at another
	// step with a label the run already uses is ALREADY_EXISTS, reason
	// LABEL_TAKEN; an identical retry succeeds. Not covered by the checksum.
	Label string `protobuf:"bytes,10,opt,name=label,proto3" json:"label,omitempty"`
	// How many journal entries the checkpoint covers: the journal's first
	// `tool_count` entries by `seq` (checksum v1 hashes `t_(tool_count)`).
	// Absent: the whole journal at the time of the save, as before this field
	// existed. A client whose tool results are still being journalled names the
	// entries its state reflects, so its Save need not wait for the others. More
	// than the journal holds is FAILED_PRECONDITION, reason JOURNAL_BEHIND (the
	// client saw entries the server lost or never stored: Resume). It may be
	// fewer than an earlier checkpoint of the run covers: every checkpoint is
	// verified against its own `tool_count`, Resume returns the whole journal
	// whatever the restored checkpoint covers, a journal repair quarantines by
	// each checkpoint's own count, and retention keeps what the entries past
	// the latest checkpoint's count depend on. An identical retry (same content
	// and `tool_count`) succeeds even after the journal grew.
	ToolCount     *uint64 `protobuf:"varint,11,opt,name=tool_count,json=toolCount,proto3,oneof" json:"tool_count,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SaveRequest) Reset() {
	*x = SaveRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SaveRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SaveRequest) ProtoMessage() {}

func (x *SaveRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SaveRequest.ProtoReflect.Descriptor instead.
func (*SaveRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{5}
}

func (x *SaveRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *SaveRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *SaveRequest) GetContentType() string {
	if x != nil {
		return x.ContentType
	}
	return ""
}

func (x *SaveRequest) GetState() []byte {
	if x != nil {
		return x.State
	}
	return nil
}

func (x *SaveRequest) GetMessages() []*Message {
	if x != nil {
		return x.Messages
	}
	return nil
}

func (x *SaveRequest) GetMessageOffset() uint64 {
	if x != nil {
		return x.MessageOffset
	}
	return 0
}

func (x *SaveRequest) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

func (x *SaveRequest) GetEpoch() uint64 {
	if x != nil && x.Epoch != nil {
		return *x.Epoch
	}
	return 0
}

func (x *SaveRequest) GetChecksum() string {
	if x != nil && x.Checksum != nil {
		return *x.Checksum
	}
	return ""
}

func (x *SaveRequest) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *SaveRequest) GetToolCount() uint64 {
	if x != nil && x.ToolCount != nil {
		return *x.ToolCount
	}
	return 0
}

// SaveResponse acknowledges a durable checkpoint.
type SaveResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Id of the stored checkpoint.
	CheckpointId string `protobuf:"bytes,1,opt,name=checkpoint_id,json=checkpointId,proto3" json:"checkpoint_id,omitempty"`
	// Checksum v1 of the stored checkpoint, lower-case hex.
	Checksum string `protobuf:"bytes,2,opt,name=checksum,proto3" json:"checksum,omitempty"`
	// Commit time of the checkpoint.
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,3,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// True when an identical checkpoint already existed and nothing changed.
	AlreadyExisted bool `protobuf:"varint,4,opt,name=already_existed,json=alreadyExisted,proto3" json:"already_existed,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *SaveResponse) Reset() {
	*x = SaveResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SaveResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SaveResponse) ProtoMessage() {}

func (x *SaveResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SaveResponse.ProtoReflect.Descriptor instead.
func (*SaveResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{6}
}

func (x *SaveResponse) GetCheckpointId() string {
	if x != nil {
		return x.CheckpointId
	}
	return ""
}

func (x *SaveResponse) GetChecksum() string {
	if x != nil {
		return x.Checksum
	}
	return ""
}

func (x *SaveResponse) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *SaveResponse) GetAlreadyExisted() bool {
	if x != nil {
		return x.AlreadyExisted
	}
	return false
}

// LoadLatestRequest names the run to load.
type LoadLatestRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to load.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Return only the messages at log positions >= this offset (clamped to the
	// checkpoint's `message_count`): a client that holds the log's prefix asks
	// for the rest. 0 returns the whole history.
	//
	// The server then reads and verifies only what it returns: it recomputes
	// the message chain from the chain value stored with message offset-1 over
	// the returned messages and checks the result against the checkpoint's
	// checksum, so a load costs what it returns, not the run's age. This is as
	// strong as hashing the prefix: a damaged or forged stored value makes the
	// recomputed head disagree with the checksum (DATA_LOSS, the checkpoint is
	// quarantined), exactly as a damaged message would. It does not check the
	// prefix the client already holds; Validate and the scrub still verify the
	// whole log from its first message.
	MessageOffset uint64 `protobuf:"varint,2,opt,name=message_offset,json=messageOffset,proto3" json:"message_offset,omitempty"`
	// Which journal entries to return, read and verify (see JournalScope);
	// every entry by default.
	Journal JournalScope `protobuf:"varint,3,opt,name=journal,proto3,enum=checkpoint.v1.JournalScope" json:"journal,omitempty"`
	// What the client understands of the answer; see ClientCapability. With
	// CLIENT_CAPABILITY_PAGED_MESSAGES a history larger than one page comes
	// back a page at a time: `continuation` is set and LoadAtStep with it
	// returns the next page. Without it, a history from `message_offset` larger
	// than the server's unpaged answer limit (--max-unpaged-answer-bytes) is
	// RESOURCE_EXHAUSTED, reason ANSWER_TOO_LARGE, never silently cut short.
	Capabilities  []ClientCapability `protobuf:"varint,4,rep,packed,name=capabilities,proto3,enum=checkpoint.v1.ClientCapability" json:"capabilities,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadLatestRequest) Reset() {
	*x = LoadLatestRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadLatestRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadLatestRequest) ProtoMessage() {}

func (x *LoadLatestRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadLatestRequest.ProtoReflect.Descriptor instead.
func (*LoadLatestRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{7}
}

func (x *LoadLatestRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *LoadLatestRequest) GetMessageOffset() uint64 {
	if x != nil {
		return x.MessageOffset
	}
	return 0
}

func (x *LoadLatestRequest) GetJournal() JournalScope {
	if x != nil {
		return x.Journal
	}
	return JournalScope_JOURNAL_SCOPE_UNSPECIFIED
}

func (x *LoadLatestRequest) GetCapabilities() []ClientCapability {
	if x != nil {
		return x.Capabilities
	}
	return nil
}

// LoadLatestResponse carries the latest valid checkpoint.
type LoadLatestResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The checkpoint, with its message history from the requested offset.
	Checkpoint *Checkpoint `protobuf:"bytes,1,opt,name=checkpoint,proto3" json:"checkpoint,omitempty"`
	// The tool results journalled for the run within the requested journal
	// scope (every one by default), in journal order.
	ToolResults []*ToolResult `protobuf:"bytes,2,rep,name=tool_results,json=toolResults,proto3" json:"tool_results,omitempty"`
	// Steps found corrupt on this read and quarantined, newest first.
	SkippedSteps []int64 `protobuf:"varint,3,rep,packed,name=skipped_steps,json=skippedSteps,proto3" json:"skipped_steps,omitempty"`
	// The tool intents within the requested journal scope, in journal order.
	ToolIntents []*ToolIntent `protobuf:"bytes,4,rep,name=tool_intents,json=toolIntents,proto3" json:"tool_intents,omitempty"`
	// Set when the checkpoint's messages continue past this answer (only for a
	// client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
	// LoadAtStepRequest.continuation for the next page. Empty on the last page.
	// Opaque to clients.
	Continuation []byte `protobuf:"bytes,5,opt,name=continuation,proto3" json:"continuation,omitempty"`
	// Every quarantined checkpoint newer than the one returned, newest first,
	// whether it was found corrupt on this read or before: the answer is a
	// fallback exactly when this is non-empty. Sent on every read until an
	// operator repairs the run (drops the quarantined checkpoints, or a newer
	// valid checkpoint is saved above them). `skipped_steps` keeps its older
	// meaning for older clients.
	PassedOver    []*PassedOverCheckpoint `protobuf:"bytes,6,rep,name=passed_over,json=passedOver,proto3" json:"passed_over,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadLatestResponse) Reset() {
	*x = LoadLatestResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadLatestResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadLatestResponse) ProtoMessage() {}

func (x *LoadLatestResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadLatestResponse.ProtoReflect.Descriptor instead.
func (*LoadLatestResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{8}
}

func (x *LoadLatestResponse) GetCheckpoint() *Checkpoint {
	if x != nil {
		return x.Checkpoint
	}
	return nil
}

func (x *LoadLatestResponse) GetToolResults() []*ToolResult {
	if x != nil {
		return x.ToolResults
	}
	return nil
}

func (x *LoadLatestResponse) GetSkippedSteps() []int64 {
	if x != nil {
		return x.SkippedSteps
	}
	return nil
}

func (x *LoadLatestResponse) GetToolIntents() []*ToolIntent {
	if x != nil {
		return x.ToolIntents
	}
	return nil
}

func (x *LoadLatestResponse) GetContinuation() []byte {
	if x != nil {
		return x.Continuation
	}
	return nil
}

func (x *LoadLatestResponse) GetPassedOver() []*PassedOverCheckpoint {
	if x != nil {
		return x.PassedOver
	}
	return nil
}

// LoadAtStepRequest names one checkpoint, by step or by label.
type LoadAtStepRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to load from.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The step to load; ignored when `label` is set.
	Step int64 `protobuf:"varint,2,opt,name=step,proto3" json:"step,omitempty"`
	// As on LoadLatestRequest: only messages at positions >= this offset, read
	// and verified from the chain value stored before them.
	MessageOffset uint64 `protobuf:"varint,3,opt,name=message_offset,json=messageOffset,proto3" json:"message_offset,omitempty"`
	// When non-empty, load the checkpoint with this label instead of `step`;
	// NOT_FOUND (reason CHECKPOINT_NOT_FOUND) when no checkpoint has it.
	Label string `protobuf:"bytes,4,opt,name=label,proto3" json:"label,omitempty"`
	// Which journal entries to return, read and verify (see JournalScope);
	// every entry by default.
	Journal JournalScope `protobuf:"varint,5,opt,name=journal,proto3,enum=checkpoint.v1.JournalScope" json:"journal,omitempty"`
	// As on LoadLatestRequest.
	Capabilities []ClientCapability `protobuf:"varint,6,rep,packed,name=capabilities,proto3,enum=checkpoint.v1.ClientCapability" json:"capabilities,omitempty"`
	// The `continuation` of an earlier answer for the same run: the answer is
	// then the next page of that checkpoint's messages, verified against the
	// stored chain digests that link it to the pages before and, on the last
	// page, to the checkpoint's checksum. `step`, `label`, `message_offset` and
	// `journal` are ignored; the checkpoint carries its messages from
	// `messages_offset` and its identity (step, id, checksum, counts) but not
	// its state or metadata again, and no journal entries come with it.
	// FAILED_PRECONDITION, reason CHECKPOINT_CHANGED, when the checkpoint was
	// rewritten, deleted or rewound since: load again from the start.
	Continuation  []byte `protobuf:"bytes,7,opt,name=continuation,proto3" json:"continuation,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadAtStepRequest) Reset() {
	*x = LoadAtStepRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadAtStepRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadAtStepRequest) ProtoMessage() {}

func (x *LoadAtStepRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadAtStepRequest.ProtoReflect.Descriptor instead.
func (*LoadAtStepRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{9}
}

func (x *LoadAtStepRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *LoadAtStepRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *LoadAtStepRequest) GetMessageOffset() uint64 {
	if x != nil {
		return x.MessageOffset
	}
	return 0
}

func (x *LoadAtStepRequest) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *LoadAtStepRequest) GetJournal() JournalScope {
	if x != nil {
		return x.Journal
	}
	return JournalScope_JOURNAL_SCOPE_UNSPECIFIED
}

func (x *LoadAtStepRequest) GetCapabilities() []ClientCapability {
	if x != nil {
		return x.Capabilities
	}
	return nil
}

func (x *LoadAtStepRequest) GetContinuation() []byte {
	if x != nil {
		return x.Continuation
	}
	return nil
}

// LoadAtStepResponse carries one checkpoint.
type LoadAtStepResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The checkpoint, with its message history from the requested offset.
	Checkpoint *Checkpoint `protobuf:"bytes,1,opt,name=checkpoint,proto3" json:"checkpoint,omitempty"`
	// The tool results within the requested journal scope, in journal order.
	ToolResults []*ToolResult `protobuf:"bytes,2,rep,name=tool_results,json=toolResults,proto3" json:"tool_results,omitempty"`
	// The tool intents within the requested journal scope, in journal order.
	ToolIntents []*ToolIntent `protobuf:"bytes,3,rep,name=tool_intents,json=toolIntents,proto3" json:"tool_intents,omitempty"`
	// Set when the checkpoint's messages continue past this answer (only for a
	// client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
	// LoadAtStepRequest.continuation for the next page. Empty on the last page.
	// Opaque to clients.
	Continuation  []byte `protobuf:"bytes,4,opt,name=continuation,proto3" json:"continuation,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadAtStepResponse) Reset() {
	*x = LoadAtStepResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadAtStepResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadAtStepResponse) ProtoMessage() {}

func (x *LoadAtStepResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadAtStepResponse.ProtoReflect.Descriptor instead.
func (*LoadAtStepResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{10}
}

func (x *LoadAtStepResponse) GetCheckpoint() *Checkpoint {
	if x != nil {
		return x.Checkpoint
	}
	return nil
}

func (x *LoadAtStepResponse) GetToolResults() []*ToolResult {
	if x != nil {
		return x.ToolResults
	}
	return nil
}

func (x *LoadAtStepResponse) GetToolIntents() []*ToolIntent {
	if x != nil {
		return x.ToolIntents
	}
	return nil
}

func (x *LoadAtStepResponse) GetContinuation() []byte {
	if x != nil {
		return x.Continuation
	}
	return nil
}

// ValidateRequest names what to verify.
type ValidateRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to verify.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// One step to verify; every checkpoint of the run when absent.
	Step          *int64 `protobuf:"varint,2,opt,name=step,proto3,oneof" json:"step,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateRequest) Reset() {
	*x = ValidateRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateRequest) ProtoMessage() {}

func (x *ValidateRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateRequest.ProtoReflect.Descriptor instead.
func (*ValidateRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{11}
}

func (x *ValidateRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *ValidateRequest) GetStep() int64 {
	if x != nil && x.Step != nil {
		return *x.Step
	}
	return 0
}

// CheckpointVerdict is the outcome of verifying one checkpoint.
type CheckpointVerdict struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The step verified.
	Step int64 `protobuf:"varint,1,opt,name=step,proto3" json:"step,omitempty"`
	// True when the recomputed checksum matches the stored one.
	Valid bool `protobuf:"varint,2,opt,name=valid,proto3" json:"valid,omitempty"`
	// Why the checkpoint is invalid; empty when valid.
	Reason string `protobuf:"bytes,3,opt,name=reason,proto3" json:"reason,omitempty"`
	// The checksum stored with the checkpoint.
	StoredChecksum string `protobuf:"bytes,4,opt,name=stored_checksum,json=storedChecksum,proto3" json:"stored_checksum,omitempty"`
	// True when the checkpoint is quarantined (now or earlier).
	Quarantined   bool `protobuf:"varint,5,opt,name=quarantined,proto3" json:"quarantined,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CheckpointVerdict) Reset() {
	*x = CheckpointVerdict{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CheckpointVerdict) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CheckpointVerdict) ProtoMessage() {}

func (x *CheckpointVerdict) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CheckpointVerdict.ProtoReflect.Descriptor instead.
func (*CheckpointVerdict) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{12}
}

func (x *CheckpointVerdict) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *CheckpointVerdict) GetValid() bool {
	if x != nil {
		return x.Valid
	}
	return false
}

func (x *CheckpointVerdict) GetReason() string {
	if x != nil {
		return x.Reason
	}
	return ""
}

func (x *CheckpointVerdict) GetStoredChecksum() string {
	if x != nil {
		return x.StoredChecksum
	}
	return ""
}

func (x *CheckpointVerdict) GetQuarantined() bool {
	if x != nil {
		return x.Quarantined
	}
	return false
}

// ValidateResponse lists one verdict per checkpoint, ascending by step.
type ValidateResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The verdicts.
	Verdicts      []*CheckpointVerdict `protobuf:"bytes,1,rep,name=verdicts,proto3" json:"verdicts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateResponse) Reset() {
	*x = ValidateResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateResponse) ProtoMessage() {}

func (x *ValidateResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateResponse.ProtoReflect.Descriptor instead.
func (*ValidateResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{13}
}

func (x *ValidateResponse) GetVerdicts() []*CheckpointVerdict {
	if x != nil {
		return x.Verdicts
	}
	return nil
}

// ResumeRequest names the run to recover.
type ResumeRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to recover.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// As on LoadLatestRequest: the restored checkpoint carries only messages
	// at positions >= this offset, read and verified from the chain value
	// stored before them. The tool journal is read and verified whole.
	MessageOffset uint64 `protobuf:"varint,2,opt,name=message_offset,json=messageOffset,proto3" json:"message_offset,omitempty"`
	// Refuse with NOT_FOUND (reason RUN_NOT_FOUND) instead of starting a new
	// run when the run has never been seen, e.g. a mistyped run id.
	RequireExisting bool `protobuf:"varint,3,opt,name=require_existing,json=requireExisting,proto3" json:"require_existing,omitempty"`
	// What the client understands of the answer beyond the fields every client
	// has always read. A behaviour an older client cannot see is only used for
	// a client that declares it; the others get the old, safe answer. Values
	// the server does not know are ignored, so a client may declare more than
	// an older server offers.
	//
	// Without CLIENT_CAPABILITY_IN_DOUBT_CALLS, Resume refuses a run whose
	// journal holds a call in doubt instead of restoring it and reporting the
	// call in a field the client cannot read (it would run the call again):
	// a corrupt journal entry is DATA_LOSS, reason CHECKPOINT_CORRUPT, as
	// before `in_doubt` existed; an intent without a result is
	// FAILED_PRECONDITION, reason CAPABILITY_REQUIRED. The epoch still goes
	// up, so older writers stay fenced, but nothing is quarantined or rewound.
	// An operator settles such calls with RepairJournal, or a client that
	// declares the capability resumes the run.
	//
	// At most 64 values here and on the loads (RESOURCE_EXHAUSTED, reason
	// TOO_LARGE, beyond, refused before decoding).
	//
	// Without CLIENT_CAPABILITY_PAGED_MESSAGES, a restored history from
	// `message_offset` over the server's unpaged answer limit is
	// RESOURCE_EXHAUSTED, reason ANSWER_TOO_LARGE, once the run has been fenced
	// and rewound: a retry fences again and restores the same checkpoint.
	Capabilities  []ClientCapability `protobuf:"varint,4,rep,packed,name=capabilities,proto3,enum=checkpoint.v1.ClientCapability" json:"capabilities,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ResumeRequest) Reset() {
	*x = ResumeRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ResumeRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ResumeRequest) ProtoMessage() {}

func (x *ResumeRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ResumeRequest.ProtoReflect.Descriptor instead.
func (*ResumeRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{14}
}

func (x *ResumeRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *ResumeRequest) GetMessageOffset() uint64 {
	if x != nil {
		return x.MessageOffset
	}
	return 0
}

func (x *ResumeRequest) GetRequireExisting() bool {
	if x != nil {
		return x.RequireExisting
	}
	return false
}

func (x *ResumeRequest) GetCapabilities() []ClientCapability {
	if x != nil {
		return x.Capabilities
	}
	return nil
}

// ResumeResponse tells the agent where to continue.
type ResumeResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The restored checkpoint; absent when `restarted_from_scratch`.
	Checkpoint *Checkpoint `protobuf:"bytes,1,opt,name=checkpoint,proto3" json:"checkpoint,omitempty"`
	// Step of the restored checkpoint; 0 when restarting from scratch.
	RecoveredFromStep int64 `protobuf:"varint,2,opt,name=recovered_from_step,json=recoveredFromStep,proto3" json:"recovered_from_step,omitempty"`
	// Steps skipped as corrupt (and quarantined), newest first.
	SkippedSteps []int64 `protobuf:"varint,3,rep,packed,name=skipped_steps,json=skippedSteps,proto3" json:"skipped_steps,omitempty"`
	// Every tool result journalled for the run, including those recorded after
	// the restored checkpoint, in journal order. Reuse them instead of calling
	// the tool again.
	ToolResults []*ToolResult `protobuf:"bytes,4,rep,name=tool_results,json=toolResults,proto3" json:"tool_results,omitempty"`
	// The new fencing epoch. Every later Save and RecordToolResult must carry it.
	Epoch uint64 `protobuf:"varint,5,opt,name=epoch,proto3" json:"epoch,omitempty"`
	// True when no valid checkpoint exists and the agent restarts at step 0.
	RestartedFromScratch bool `protobuf:"varint,6,opt,name=restarted_from_scratch,json=restartedFromScratch,proto3" json:"restarted_from_scratch,omitempty"`
	// Every tool intent journalled for the run, in journal order. An intent
	// whose call has a result in `tool_results` is complete.
	ToolIntents []*ToolIntent `protobuf:"bytes,7,rep,name=tool_intents,json=toolIntents,proto3" json:"tool_intents,omitempty"`
	// The calls whose outcome is unknown: intents without a result, and calls
	// whose journal entry is corrupt. Follow the tool's in-doubt policy; never
	// re-run them silently.
	InDoubt []*InDoubtCall `protobuf:"bytes,8,rep,name=in_doubt,json=inDoubt,proto3" json:"in_doubt,omitempty"`
	// Call ids of journal entries found corrupt. Resume then restores the newest
	// checkpoint that does not cover the first corrupt entry (instead of failing
	// with DATA_LOSS, which is what a request without
	// CLIENT_CAPABILITY_IN_DOUBT_CALLS still gets), quarantining the ones that
	// do, and leaves the corrupt
	// entries out of `tool_results` and `tool_intents`: they are in `in_doubt`.
	// An operator settles them with RepairJournal.
	CorruptCallIds []string `protobuf:"bytes,9,rep,name=corrupt_call_ids,json=corruptCallIds,proto3" json:"corrupt_call_ids,omitempty"`
	// Set when the checkpoint's messages continue past this answer (only for a
	// client that declared CLIENT_CAPABILITY_PAGED_MESSAGES): pass it as
	// LoadAtStepRequest.continuation for the next page of the restored
	// checkpoint's messages. Empty on the last page.
	// Opaque to clients.
	Continuation []byte `protobuf:"bytes,10,opt,name=continuation,proto3" json:"continuation,omitempty"`
	// Every quarantined checkpoint newer than the restored one (every one when
	// restarting from scratch), newest first, as on LoadLatestResponse.
	PassedOver    []*PassedOverCheckpoint `protobuf:"bytes,11,rep,name=passed_over,json=passedOver,proto3" json:"passed_over,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ResumeResponse) Reset() {
	*x = ResumeResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ResumeResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ResumeResponse) ProtoMessage() {}

func (x *ResumeResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ResumeResponse.ProtoReflect.Descriptor instead.
func (*ResumeResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{15}
}

func (x *ResumeResponse) GetCheckpoint() *Checkpoint {
	if x != nil {
		return x.Checkpoint
	}
	return nil
}

func (x *ResumeResponse) GetRecoveredFromStep() int64 {
	if x != nil {
		return x.RecoveredFromStep
	}
	return 0
}

func (x *ResumeResponse) GetSkippedSteps() []int64 {
	if x != nil {
		return x.SkippedSteps
	}
	return nil
}

func (x *ResumeResponse) GetToolResults() []*ToolResult {
	if x != nil {
		return x.ToolResults
	}
	return nil
}

func (x *ResumeResponse) GetEpoch() uint64 {
	if x != nil {
		return x.Epoch
	}
	return 0
}

func (x *ResumeResponse) GetRestartedFromScratch() bool {
	if x != nil {
		return x.RestartedFromScratch
	}
	return false
}

func (x *ResumeResponse) GetToolIntents() []*ToolIntent {
	if x != nil {
		return x.ToolIntents
	}
	return nil
}

func (x *ResumeResponse) GetInDoubt() []*InDoubtCall {
	if x != nil {
		return x.InDoubt
	}
	return nil
}

func (x *ResumeResponse) GetCorruptCallIds() []string {
	if x != nil {
		return x.CorruptCallIds
	}
	return nil
}

func (x *ResumeResponse) GetContinuation() []byte {
	if x != nil {
		return x.Continuation
	}
	return nil
}

func (x *ResumeResponse) GetPassedOver() []*PassedOverCheckpoint {
	if x != nil {
		return x.PassedOver
	}
	return nil
}

// PassedOverCheckpoint is a quarantined checkpoint that a load or Resume
// passed over on its way to an older one. Its fields other than `step` come
// from a checkpoint that failed verification: they are for telling people
// what was skipped, never for restoring anything.
type PassedOverCheckpoint struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The quarantined checkpoint's step.
	Step int64 `protobuf:"varint,1,opt,name=step,proto3" json:"step,omitempty"`
	// Its server-assigned id.
	CheckpointId string `protobuf:"bytes,2,opt,name=checkpoint_id,json=checkpointId,proto3" json:"checkpoint_id,omitempty"`
	// Its client-chosen label (a framework's own checkpoint id); empty when
	// none.
	Label string `protobuf:"bytes,3,opt,name=label,proto3" json:"label,omitempty"`
	// Its metadata as stored (a framework's own step number, for instance).
	Metadata map[string]string `protobuf:"bytes,4,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// When it was quarantined; absent for checkpoints quarantined before the
	// server recorded the time.
	QuarantinedAt *timestamppb.Timestamp `protobuf:"bytes,5,opt,name=quarantined_at,json=quarantinedAt,proto3" json:"quarantined_at,omitempty"`
	// Why it was quarantined.
	Reason        string `protobuf:"bytes,6,opt,name=reason,proto3" json:"reason,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PassedOverCheckpoint) Reset() {
	*x = PassedOverCheckpoint{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PassedOverCheckpoint) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PassedOverCheckpoint) ProtoMessage() {}

func (x *PassedOverCheckpoint) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PassedOverCheckpoint.ProtoReflect.Descriptor instead.
func (*PassedOverCheckpoint) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{16}
}

func (x *PassedOverCheckpoint) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *PassedOverCheckpoint) GetCheckpointId() string {
	if x != nil {
		return x.CheckpointId
	}
	return ""
}

func (x *PassedOverCheckpoint) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *PassedOverCheckpoint) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

func (x *PassedOverCheckpoint) GetQuarantinedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.QuarantinedAt
	}
	return nil
}

func (x *PassedOverCheckpoint) GetReason() string {
	if x != nil {
		return x.Reason
	}
	return ""
}

// RecordToolResultRequest journals one tool call.
type RecordToolResultRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run the call belongs to.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Deterministic call id; 1 to 256 bytes.
	CallId string `protobuf:"bytes,2,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool; 1 to 256 bytes.
	ToolName string `protobuf:"bytes,3,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step during which the tool ran; must be >= 0.
	Step int64 `protobuf:"varint,4,opt,name=step,proto3" json:"step,omitempty"`
	// What the tool returned.
	Output []byte `protobuf:"bytes,5,opt,name=output,proto3" json:"output,omitempty"`
	// True when `output` describes a tool error.
	IsError bool `protobuf:"varint,6,opt,name=is_error,json=isError,proto3" json:"is_error,omitempty"`
	// Fencing epoch, as on SaveRequest.
	Epoch *uint64 `protobuf:"varint,7,opt,name=epoch,proto3,oneof" json:"epoch,omitempty"`
	// Lower-case hex SHA-256 (64 characters) of the call's arguments as the
	// client serializes them; empty when the client does not say. Each client
	// documents its serialization (canonical JSON in the packages). A retry
	// with the same call id but another non-empty digest than the stored one
	// is ALREADY_EXISTS, reason ARGUMENTS_MISMATCH, and changes nothing.
	ArgumentsDigest string `protobuf:"bytes,8,opt,name=arguments_digest,json=argumentsDigest,proto3" json:"arguments_digest,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *RecordToolResultRequest) Reset() {
	*x = RecordToolResultRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolResultRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolResultRequest) ProtoMessage() {}

func (x *RecordToolResultRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolResultRequest.ProtoReflect.Descriptor instead.
func (*RecordToolResultRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{17}
}

func (x *RecordToolResultRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *RecordToolResultRequest) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *RecordToolResultRequest) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *RecordToolResultRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *RecordToolResultRequest) GetOutput() []byte {
	if x != nil {
		return x.Output
	}
	return nil
}

func (x *RecordToolResultRequest) GetIsError() bool {
	if x != nil {
		return x.IsError
	}
	return false
}

func (x *RecordToolResultRequest) GetEpoch() uint64 {
	if x != nil && x.Epoch != nil {
		return *x.Epoch
	}
	return 0
}

func (x *RecordToolResultRequest) GetArgumentsDigest() string {
	if x != nil {
		return x.ArgumentsDigest
	}
	return ""
}

// RecordToolResultResponse returns the journalled result.
type RecordToolResultResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The stored result: the original one when the call id was already journalled.
	Result *ToolResult `protobuf:"bytes,1,opt,name=result,proto3" json:"result,omitempty"`
	// True when the call id was already journalled and nothing changed.
	AlreadyRecorded bool `protobuf:"varint,2,opt,name=already_recorded,json=alreadyRecorded,proto3" json:"already_recorded,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *RecordToolResultResponse) Reset() {
	*x = RecordToolResultResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolResultResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolResultResponse) ProtoMessage() {}

func (x *RecordToolResultResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolResultResponse.ProtoReflect.Descriptor instead.
func (*RecordToolResultResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{18}
}

func (x *RecordToolResultResponse) GetResult() *ToolResult {
	if x != nil {
		return x.Result
	}
	return nil
}

func (x *RecordToolResultResponse) GetAlreadyRecorded() bool {
	if x != nil {
		return x.AlreadyRecorded
	}
	return false
}

// ToolResultInput is one entry of a RecordToolResultsRequest: the fields of
// a RecordToolResultRequest that belong to one call, validated alike.
type ToolResultInput struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Deterministic call id; 1 to 256 bytes.
	CallId string `protobuf:"bytes,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool; 1 to 256 bytes.
	ToolName string `protobuf:"bytes,2,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step during which the tool ran; must be >= 0.
	Step int64 `protobuf:"varint,3,opt,name=step,proto3" json:"step,omitempty"`
	// What the tool returned.
	Output []byte `protobuf:"bytes,4,opt,name=output,proto3" json:"output,omitempty"`
	// True when `output` describes a tool error.
	IsError bool `protobuf:"varint,5,opt,name=is_error,json=isError,proto3" json:"is_error,omitempty"`
	// As RecordToolResultRequest.arguments_digest.
	ArgumentsDigest string `protobuf:"bytes,6,opt,name=arguments_digest,json=argumentsDigest,proto3" json:"arguments_digest,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *ToolResultInput) Reset() {
	*x = ToolResultInput{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolResultInput) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolResultInput) ProtoMessage() {}

func (x *ToolResultInput) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolResultInput.ProtoReflect.Descriptor instead.
func (*ToolResultInput) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{19}
}

func (x *ToolResultInput) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *ToolResultInput) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *ToolResultInput) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *ToolResultInput) GetOutput() []byte {
	if x != nil {
		return x.Output
	}
	return nil
}

func (x *ToolResultInput) GetIsError() bool {
	if x != nil {
		return x.IsError
	}
	return false
}

func (x *ToolResultInput) GetArgumentsDigest() string {
	if x != nil {
		return x.ArgumentsDigest
	}
	return ""
}

// RecordToolResultsRequest journals several tool calls of one run at once.
type RecordToolResultsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run the calls belong to.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Fencing epoch, as on SaveRequest; checked once for the whole batch.
	Epoch *uint64 `protobuf:"varint,2,opt,name=epoch,proto3,oneof" json:"epoch,omitempty"`
	// The results, journalled in this order (each new one takes the journal's
	// next `seq`). At most 1000 (RESOURCE_EXHAUSTED, reason TOO_LARGE, beyond,
	// refused before decoding); empty journals nothing and answers nothing.
	Results       []*ToolResultInput `protobuf:"bytes,3,rep,name=results,proto3" json:"results,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordToolResultsRequest) Reset() {
	*x = RecordToolResultsRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[20]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolResultsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolResultsRequest) ProtoMessage() {}

func (x *RecordToolResultsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[20]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolResultsRequest.ProtoReflect.Descriptor instead.
func (*RecordToolResultsRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{20}
}

func (x *RecordToolResultsRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *RecordToolResultsRequest) GetEpoch() uint64 {
	if x != nil && x.Epoch != nil {
		return *x.Epoch
	}
	return 0
}

func (x *RecordToolResultsRequest) GetResults() []*ToolResultInput {
	if x != nil {
		return x.Results
	}
	return nil
}

// RecordToolResultsResponse answers a RecordToolResultsRequest.
type RecordToolResultsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// One answer per entry of the request, in the request's order, each as
	// RecordToolResult would have answered it. A call id that appears twice in
	// one batch is journalled from its first entry; the later entry answers
	// with that result and `already_recorded` true.
	Results       []*RecordToolResultResponse `protobuf:"bytes,1,rep,name=results,proto3" json:"results,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordToolResultsResponse) Reset() {
	*x = RecordToolResultsResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[21]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolResultsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolResultsResponse) ProtoMessage() {}

func (x *RecordToolResultsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[21]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolResultsResponse.ProtoReflect.Descriptor instead.
func (*RecordToolResultsResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{21}
}

func (x *RecordToolResultsResponse) GetResults() []*RecordToolResultResponse {
	if x != nil {
		return x.Results
	}
	return nil
}

// RecordToolIntentRequest journals that a side-effecting call is about to run.
type RecordToolIntentRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run the call belongs to.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Deterministic call id; 1 to 256 bytes.
	CallId string `protobuf:"bytes,2,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool; 1 to 256 bytes.
	ToolName string `protobuf:"bytes,3,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step during which the tool runs; must be >= 0.
	Step int64 `protobuf:"varint,4,opt,name=step,proto3" json:"step,omitempty"`
	// Fencing epoch, as on SaveRequest.
	Epoch *uint64 `protobuf:"varint,5,opt,name=epoch,proto3,oneof" json:"epoch,omitempty"`
	// As RecordToolResultRequest.arguments_digest: a retry with another
	// non-empty digest than the stored intent's (or result's) is
	// ALREADY_EXISTS, reason ARGUMENTS_MISMATCH.
	ArgumentsDigest string `protobuf:"bytes,6,opt,name=arguments_digest,json=argumentsDigest,proto3" json:"arguments_digest,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *RecordToolIntentRequest) Reset() {
	*x = RecordToolIntentRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[22]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolIntentRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolIntentRequest) ProtoMessage() {}

func (x *RecordToolIntentRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[22]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolIntentRequest.ProtoReflect.Descriptor instead.
func (*RecordToolIntentRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{22}
}

func (x *RecordToolIntentRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *RecordToolIntentRequest) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *RecordToolIntentRequest) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *RecordToolIntentRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *RecordToolIntentRequest) GetEpoch() uint64 {
	if x != nil && x.Epoch != nil {
		return *x.Epoch
	}
	return 0
}

func (x *RecordToolIntentRequest) GetArgumentsDigest() string {
	if x != nil {
		return x.ArgumentsDigest
	}
	return ""
}

// RecordToolIntentResponse returns the journalled intent.
type RecordToolIntentResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The stored intent: the original one when the call id already had one.
	Intent *ToolIntent `protobuf:"bytes,1,opt,name=intent,proto3" json:"intent,omitempty"`
	// True when the call id already had an intent and nothing changed.
	AlreadyRecorded bool `protobuf:"varint,2,opt,name=already_recorded,json=alreadyRecorded,proto3" json:"already_recorded,omitempty"`
	// The call's result when it is journalled already: the call completed and
	// must not run again.
	Result        *ToolResult `protobuf:"bytes,3,opt,name=result,proto3" json:"result,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordToolIntentResponse) Reset() {
	*x = RecordToolIntentResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[23]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordToolIntentResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordToolIntentResponse) ProtoMessage() {}

func (x *RecordToolIntentResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[23]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordToolIntentResponse.ProtoReflect.Descriptor instead.
func (*RecordToolIntentResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{23}
}

func (x *RecordToolIntentResponse) GetIntent() *ToolIntent {
	if x != nil {
		return x.Intent
	}
	return nil
}

func (x *RecordToolIntentResponse) GetAlreadyRecorded() bool {
	if x != nil {
		return x.AlreadyRecorded
	}
	return false
}

func (x *RecordToolIntentResponse) GetResult() *ToolResult {
	if x != nil {
		return x.Result
	}
	return nil
}

// JournalEntry is one entry of a run's tool journal as an operator sees it.
type JournalEntry struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Position in the journal, from 1.
	Seq uint64 `protobuf:"varint,1,opt,name=seq,proto3" json:"seq,omitempty"`
	// Result or intent.
	Kind JournalEntryKind `protobuf:"varint,2,opt,name=kind,proto3,enum=checkpoint.v1.JournalEntryKind" json:"kind,omitempty"`
	// The call's id.
	CallId string `protobuf:"bytes,3,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Name of the tool.
	ToolName string `protobuf:"bytes,4,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// Step of the call.
	Step int64 `protobuf:"varint,5,opt,name=step,proto3" json:"step,omitempty"`
	// The result's output; empty for an intent.
	Output []byte `protobuf:"bytes,6,opt,name=output,proto3" json:"output,omitempty"`
	// True when the result describes a tool error.
	IsError bool `protobuf:"varint,7,opt,name=is_error,json=isError,proto3" json:"is_error,omitempty"`
	// When the entry was journalled.
	RecordedAt *timestamppb.Timestamp `protobuf:"bytes,8,opt,name=recorded_at,json=recordedAt,proto3" json:"recorded_at,omitempty"`
	// True when the entry does not match its digest in the tool chain.
	Corrupt       bool `protobuf:"varint,9,opt,name=corrupt,proto3" json:"corrupt,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *JournalEntry) Reset() {
	*x = JournalEntry{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[24]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *JournalEntry) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*JournalEntry) ProtoMessage() {}

func (x *JournalEntry) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[24]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use JournalEntry.ProtoReflect.Descriptor instead.
func (*JournalEntry) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{24}
}

func (x *JournalEntry) GetSeq() uint64 {
	if x != nil {
		return x.Seq
	}
	return 0
}

func (x *JournalEntry) GetKind() JournalEntryKind {
	if x != nil {
		return x.Kind
	}
	return JournalEntryKind_JOURNAL_ENTRY_KIND_UNSPECIFIED
}

func (x *JournalEntry) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *JournalEntry) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *JournalEntry) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *JournalEntry) GetOutput() []byte {
	if x != nil {
		return x.Output
	}
	return nil
}

func (x *JournalEntry) GetIsError() bool {
	if x != nil {
		return x.IsError
	}
	return false
}

func (x *JournalEntry) GetRecordedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.RecordedAt
	}
	return nil
}

func (x *JournalEntry) GetCorrupt() bool {
	if x != nil {
		return x.Corrupt
	}
	return false
}

// JournalAction is one repair an operator made to a run's journal.
type JournalAction struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call repaired.
	CallId string `protobuf:"bytes,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// `mark_done` or `drop`.
	Action string `protobuf:"bytes,2,opt,name=action,proto3" json:"action,omitempty"`
	// Who made the repair.
	Actor string `protobuf:"bytes,3,opt,name=actor,proto3" json:"actor,omitempty"`
	// When the repair was made.
	ActedAt *timestamppb.Timestamp `protobuf:"bytes,4,opt,name=acted_at,json=actedAt,proto3" json:"acted_at,omitempty"`
	// What the repair did, for people: the output given, the entry dropped.
	Detail        string `protobuf:"bytes,5,opt,name=detail,proto3" json:"detail,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *JournalAction) Reset() {
	*x = JournalAction{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[25]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *JournalAction) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*JournalAction) ProtoMessage() {}

func (x *JournalAction) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[25]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use JournalAction.ProtoReflect.Descriptor instead.
func (*JournalAction) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{25}
}

func (x *JournalAction) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *JournalAction) GetAction() string {
	if x != nil {
		return x.Action
	}
	return ""
}

func (x *JournalAction) GetActor() string {
	if x != nil {
		return x.Actor
	}
	return ""
}

func (x *JournalAction) GetActedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.ActedAt
	}
	return nil
}

func (x *JournalAction) GetDetail() string {
	if x != nil {
		return x.Detail
	}
	return ""
}

// GetJournalRequest names the run whose journal to show.
type GetJournalRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId         string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetJournalRequest) Reset() {
	*x = GetJournalRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[26]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetJournalRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetJournalRequest) ProtoMessage() {}

func (x *GetJournalRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[26]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetJournalRequest.ProtoReflect.Descriptor instead.
func (*GetJournalRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{26}
}

func (x *GetJournalRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

// GetJournalResponse is a run's tool journal with its diagnosis.
type GetJournalResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Every journal entry, results and intents, in journal order.
	Entries []*JournalEntry `protobuf:"bytes,1,rep,name=entries,proto3" json:"entries,omitempty"`
	// The calls in doubt, as Resume reports them.
	InDoubt []*InDoubtCall `protobuf:"bytes,2,rep,name=in_doubt,json=inDoubt,proto3" json:"in_doubt,omitempty"`
	// Call ids of the corrupt entries.
	CorruptCallIds []string `protobuf:"bytes,3,rep,name=corrupt_call_ids,json=corruptCallIds,proto3" json:"corrupt_call_ids,omitempty"`
	// Every repair made to the journal, oldest first.
	Actions       []*JournalAction `protobuf:"bytes,4,rep,name=actions,proto3" json:"actions,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetJournalResponse) Reset() {
	*x = GetJournalResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[27]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetJournalResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetJournalResponse) ProtoMessage() {}

func (x *GetJournalResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[27]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetJournalResponse.ProtoReflect.Descriptor instead.
func (*GetJournalResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{27}
}

func (x *GetJournalResponse) GetEntries() []*JournalEntry {
	if x != nil {
		return x.Entries
	}
	return nil
}

func (x *GetJournalResponse) GetInDoubt() []*InDoubtCall {
	if x != nil {
		return x.InDoubt
	}
	return nil
}

func (x *GetJournalResponse) GetCorruptCallIds() []string {
	if x != nil {
		return x.CorruptCallIds
	}
	return nil
}

func (x *GetJournalResponse) GetActions() []*JournalAction {
	if x != nil {
		return x.Actions
	}
	return nil
}

// RepairJournalRequest settles one call of a run's journal.
type RepairJournalRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The call to settle; 1 to 256 bytes.
	CallId string `protobuf:"bytes,2,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// Who decides; 1 to 256 bytes. With authentication on, the credential's
	// identity (`key:<id>` or the JWT's `sub`) is recorded instead.
	Actor string `protobuf:"bytes,3,opt,name=actor,proto3" json:"actor,omitempty"`
	// The repair.
	//
	// Types that are valid to be assigned to Repair:
	//
	//	*RepairJournalRequest_MarkDoneOutput
	//	*RepairJournalRequest_Drop
	Repair        isRepairJournalRequest_Repair `protobuf_oneof:"repair"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RepairJournalRequest) Reset() {
	*x = RepairJournalRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[28]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RepairJournalRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RepairJournalRequest) ProtoMessage() {}

func (x *RepairJournalRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[28]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RepairJournalRequest.ProtoReflect.Descriptor instead.
func (*RepairJournalRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{28}
}

func (x *RepairJournalRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *RepairJournalRequest) GetCallId() string {
	if x != nil {
		return x.CallId
	}
	return ""
}

func (x *RepairJournalRequest) GetActor() string {
	if x != nil {
		return x.Actor
	}
	return ""
}

func (x *RepairJournalRequest) GetRepair() isRepairJournalRequest_Repair {
	if x != nil {
		return x.Repair
	}
	return nil
}

func (x *RepairJournalRequest) GetMarkDoneOutput() []byte {
	if x != nil {
		if x, ok := x.Repair.(*RepairJournalRequest_MarkDoneOutput); ok {
			return x.MarkDoneOutput
		}
	}
	return nil
}

func (x *RepairJournalRequest) GetDrop() bool {
	if x != nil {
		if x, ok := x.Repair.(*RepairJournalRequest_Drop); ok {
			return x.Drop
		}
	}
	return false
}

type isRepairJournalRequest_Repair interface {
	isRepairJournalRequest_Repair()
}

type RepairJournalRequest_MarkDoneOutput struct {
	// Mark the call done with this output, as if the tool had returned it:
	// the call's result becomes this output and it never runs again.
	MarkDoneOutput []byte `protobuf:"bytes,4,opt,name=mark_done_output,json=markDoneOutput,proto3,oneof"`
}

type RepairJournalRequest_Drop struct {
	// Drop the call's corrupt entry from the journal: the call is then
	// neither done nor in doubt and runs again when the agent reaches it.
	Drop bool `protobuf:"varint,5,opt,name=drop,proto3,oneof"`
}

func (*RepairJournalRequest_MarkDoneOutput) isRepairJournalRequest_Repair() {}

func (*RepairJournalRequest_Drop) isRepairJournalRequest_Repair() {}

// RepairJournalResponse reports the repair.
type RepairJournalResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The recorded repair.
	Action *JournalAction `protobuf:"bytes,1,opt,name=action,proto3" json:"action,omitempty"`
	// Steps quarantined because they covered the journal as it was.
	QuarantinedSteps []int64 `protobuf:"varint,2,rep,packed,name=quarantined_steps,json=quarantinedSteps,proto3" json:"quarantined_steps,omitempty"`
	unknownFields    protoimpl.UnknownFields
	sizeCache        protoimpl.SizeCache
}

func (x *RepairJournalResponse) Reset() {
	*x = RepairJournalResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[29]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RepairJournalResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RepairJournalResponse) ProtoMessage() {}

func (x *RepairJournalResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[29]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RepairJournalResponse.ProtoReflect.Descriptor instead.
func (*RepairJournalResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{29}
}

func (x *RepairJournalResponse) GetAction() *JournalAction {
	if x != nil {
		return x.Action
	}
	return nil
}

func (x *RepairJournalResponse) GetQuarantinedSteps() []int64 {
	if x != nil {
		return x.QuarantinedSteps
	}
	return nil
}

// ListCheckpointsRequest pages through a run's checkpoints.
type ListCheckpointsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to list.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Maximum entries to return: 1 to 1000, 100 when 0.
	PageSize uint32 `protobuf:"varint,2,opt,name=page_size,json=pageSize,proto3" json:"page_size,omitempty"`
	// `next_page_token` of the previous page; empty for the first page. Send
	// the other fields unchanged with it.
	PageToken string `protobuf:"bytes,3,opt,name=page_token,json=pageToken,proto3" json:"page_token,omitempty"`
	// Newest step first instead of oldest first.
	Descending bool `protobuf:"varint,4,opt,name=descending,proto3" json:"descending,omitempty"`
	// Only checkpoints at steps strictly below this one.
	BeforeStep *int64 `protobuf:"varint,5,opt,name=before_step,json=beforeStep,proto3,oneof" json:"before_step,omitempty"`
	// Only checkpoints whose metadata has every one of these entries with
	// exactly this value. At most `--max-metadata-entries` (default 1000)
	// entries, as a checkpoint's metadata, so a longer filter could never
	// match; more are RESOURCE_EXHAUSTED, reason TOO_LARGE, refused before
	// decoding. The store applies the filter as it scans the run's
	// checkpoints, so a full page costs one query however rarely it matches.
	MetadataFilter map[string]string `protobuf:"bytes,6,rep,name=metadata_filter,json=metadataFilter,proto3" json:"metadata_filter,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *ListCheckpointsRequest) Reset() {
	*x = ListCheckpointsRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[30]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListCheckpointsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListCheckpointsRequest) ProtoMessage() {}

func (x *ListCheckpointsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[30]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListCheckpointsRequest.ProtoReflect.Descriptor instead.
func (*ListCheckpointsRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{30}
}

func (x *ListCheckpointsRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *ListCheckpointsRequest) GetPageSize() uint32 {
	if x != nil {
		return x.PageSize
	}
	return 0
}

func (x *ListCheckpointsRequest) GetPageToken() string {
	if x != nil {
		return x.PageToken
	}
	return ""
}

func (x *ListCheckpointsRequest) GetDescending() bool {
	if x != nil {
		return x.Descending
	}
	return false
}

func (x *ListCheckpointsRequest) GetBeforeStep() int64 {
	if x != nil && x.BeforeStep != nil {
		return *x.BeforeStep
	}
	return 0
}

func (x *ListCheckpointsRequest) GetMetadataFilter() map[string]string {
	if x != nil {
		return x.MetadataFilter
	}
	return nil
}

// CheckpointSummary describes one checkpoint without its payload.
type CheckpointSummary struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The checkpoint's step.
	Step int64 `protobuf:"varint,1,opt,name=step,proto3" json:"step,omitempty"`
	// Size of the state in bytes.
	SizeBytes uint64 `protobuf:"varint,2,opt,name=size_bytes,json=sizeBytes,proto3" json:"size_bytes,omitempty"`
	// False once the checkpoint has been quarantined as corrupt.
	Valid bool `protobuf:"varint,3,opt,name=valid,proto3" json:"valid,omitempty"`
	// Why it was quarantined; empty when valid.
	QuarantineReason string `protobuf:"bytes,4,opt,name=quarantine_reason,json=quarantineReason,proto3" json:"quarantine_reason,omitempty"`
	// Commit time.
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,5,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// Stored checksum v1, lower-case hex.
	Checksum string `protobuf:"bytes,6,opt,name=checksum,proto3" json:"checksum,omitempty"`
	// Epoch the checkpoint was written under.
	Epoch uint64 `protobuf:"varint,7,opt,name=epoch,proto3" json:"epoch,omitempty"`
	// Length of the message log at this checkpoint.
	MessageCount uint64 `protobuf:"varint,8,opt,name=message_count,json=messageCount,proto3" json:"message_count,omitempty"`
	// Who pins the checkpoint against retention, sorted: `operator` (PinCheckpoint) or
	// `approval:TASK_ID` (taken while that task waits for approval). Empty when unpinned.
	PinnedBy []string `protobuf:"bytes,9,rep,name=pinned_by,json=pinnedBy,proto3" json:"pinned_by,omitempty"`
	// The label given on Save; empty when none.
	Label string `protobuf:"bytes,10,opt,name=label,proto3" json:"label,omitempty"`
	// The metadata given on Save.
	Metadata      map[string]string `protobuf:"bytes,11,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CheckpointSummary) Reset() {
	*x = CheckpointSummary{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[31]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CheckpointSummary) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CheckpointSummary) ProtoMessage() {}

func (x *CheckpointSummary) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[31]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CheckpointSummary.ProtoReflect.Descriptor instead.
func (*CheckpointSummary) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{31}
}

func (x *CheckpointSummary) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *CheckpointSummary) GetSizeBytes() uint64 {
	if x != nil {
		return x.SizeBytes
	}
	return 0
}

func (x *CheckpointSummary) GetValid() bool {
	if x != nil {
		return x.Valid
	}
	return false
}

func (x *CheckpointSummary) GetQuarantineReason() string {
	if x != nil {
		return x.QuarantineReason
	}
	return ""
}

func (x *CheckpointSummary) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *CheckpointSummary) GetChecksum() string {
	if x != nil {
		return x.Checksum
	}
	return ""
}

func (x *CheckpointSummary) GetEpoch() uint64 {
	if x != nil {
		return x.Epoch
	}
	return 0
}

func (x *CheckpointSummary) GetMessageCount() uint64 {
	if x != nil {
		return x.MessageCount
	}
	return 0
}

func (x *CheckpointSummary) GetPinnedBy() []string {
	if x != nil {
		return x.PinnedBy
	}
	return nil
}

func (x *CheckpointSummary) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *CheckpointSummary) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

// ListCheckpointsResponse is one page of checkpoints.
type ListCheckpointsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The checkpoints, by step in the requested direction.
	Checkpoints []*CheckpointSummary `protobuf:"bytes,1,rep,name=checkpoints,proto3" json:"checkpoints,omitempty"`
	// Token for the next page; empty on the last page.
	NextPageToken string `protobuf:"bytes,2,opt,name=next_page_token,json=nextPageToken,proto3" json:"next_page_token,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListCheckpointsResponse) Reset() {
	*x = ListCheckpointsResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[32]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListCheckpointsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListCheckpointsResponse) ProtoMessage() {}

func (x *ListCheckpointsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[32]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListCheckpointsResponse.ProtoReflect.Descriptor instead.
func (*ListCheckpointsResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{32}
}

func (x *ListCheckpointsResponse) GetCheckpoints() []*CheckpointSummary {
	if x != nil {
		return x.Checkpoints
	}
	return nil
}

func (x *ListCheckpointsResponse) GetNextPageToken() string {
	if x != nil {
		return x.NextPageToken
	}
	return ""
}

// RunHead is a run's current position, without any payload.
type RunHead struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The run's current fencing epoch: the one the next write must carry.
	Epoch uint64 `protobuf:"varint,2,opt,name=epoch,proto3" json:"epoch,omitempty"`
	// Step of the newest checkpoint; absent when the run has none.
	LatestStep *int64 `protobuf:"varint,3,opt,name=latest_step,json=latestStep,proto3,oneof" json:"latest_step,omitempty"`
	// Step of the newest checkpoint not quarantined; absent when none. Read
	// without re-verifying the checksums.
	LatestValidStep *int64 `protobuf:"varint,4,opt,name=latest_valid_step,json=latestValidStep,proto3,oneof" json:"latest_valid_step,omitempty"`
	// The message log's current length: the `message_offset` of the next Save.
	MessageCount uint64 `protobuf:"varint,5,opt,name=message_count,json=messageCount,proto3" json:"message_count,omitempty"`
	// The tool journal's current length (results and intents).
	ToolCount uint64 `protobuf:"varint,6,opt,name=tool_count,json=toolCount,proto3" json:"tool_count,omitempty"`
	// Number of checkpoints stored, quarantined ones included.
	CheckpointCount uint64 `protobuf:"varint,7,opt,name=checkpoint_count,json=checkpointCount,proto3" json:"checkpoint_count,omitempty"`
	// When the run last changed: a save, a journal entry, a resume.
	UpdatedAt     *timestamppb.Timestamp `protobuf:"bytes,8,opt,name=updated_at,json=updatedAt,proto3" json:"updated_at,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RunHead) Reset() {
	*x = RunHead{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[33]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RunHead) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RunHead) ProtoMessage() {}

func (x *RunHead) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[33]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RunHead.ProtoReflect.Descriptor instead.
func (*RunHead) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{33}
}

func (x *RunHead) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *RunHead) GetEpoch() uint64 {
	if x != nil {
		return x.Epoch
	}
	return 0
}

func (x *RunHead) GetLatestStep() int64 {
	if x != nil && x.LatestStep != nil {
		return *x.LatestStep
	}
	return 0
}

func (x *RunHead) GetLatestValidStep() int64 {
	if x != nil && x.LatestValidStep != nil {
		return *x.LatestValidStep
	}
	return 0
}

func (x *RunHead) GetMessageCount() uint64 {
	if x != nil {
		return x.MessageCount
	}
	return 0
}

func (x *RunHead) GetToolCount() uint64 {
	if x != nil {
		return x.ToolCount
	}
	return 0
}

func (x *RunHead) GetCheckpointCount() uint64 {
	if x != nil {
		return x.CheckpointCount
	}
	return 0
}

func (x *RunHead) GetUpdatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.UpdatedAt
	}
	return nil
}

// GetRunRequest names the run to read.
type GetRunRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId         string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetRunRequest) Reset() {
	*x = GetRunRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[34]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetRunRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetRunRequest) ProtoMessage() {}

func (x *GetRunRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[34]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetRunRequest.ProtoReflect.Descriptor instead.
func (*GetRunRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{34}
}

func (x *GetRunRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

// GetRunResponse carries the run's head.
type GetRunResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run's head.
	Run           *RunHead `protobuf:"bytes,1,opt,name=run,proto3" json:"run,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetRunResponse) Reset() {
	*x = GetRunResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[35]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetRunResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetRunResponse) ProtoMessage() {}

func (x *GetRunResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[35]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetRunResponse.ProtoReflect.Descriptor instead.
func (*GetRunResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{35}
}

func (x *GetRunResponse) GetRun() *RunHead {
	if x != nil {
		return x.Run
	}
	return nil
}

// ListRunsRequest pages through the caller's runs.
type ListRunsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Maximum runs to return: 1 to 1000, 100 when 0.
	PageSize uint32 `protobuf:"varint,1,opt,name=page_size,json=pageSize,proto3" json:"page_size,omitempty"`
	// `next_page_token` of the previous page; empty for the first page. Send
	// `run_id_prefix` unchanged with it.
	PageToken string `protobuf:"bytes,2,opt,name=page_token,json=pageToken,proto3" json:"page_token,omitempty"`
	// Only runs whose id starts with this text; empty for every run.
	RunIdPrefix   string `protobuf:"bytes,3,opt,name=run_id_prefix,json=runIdPrefix,proto3" json:"run_id_prefix,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListRunsRequest) Reset() {
	*x = ListRunsRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[36]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListRunsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListRunsRequest) ProtoMessage() {}

func (x *ListRunsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[36]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListRunsRequest.ProtoReflect.Descriptor instead.
func (*ListRunsRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{36}
}

func (x *ListRunsRequest) GetPageSize() uint32 {
	if x != nil {
		return x.PageSize
	}
	return 0
}

func (x *ListRunsRequest) GetPageToken() string {
	if x != nil {
		return x.PageToken
	}
	return ""
}

func (x *ListRunsRequest) GetRunIdPrefix() string {
	if x != nil {
		return x.RunIdPrefix
	}
	return ""
}

// ListRunsResponse is one page of runs.
type ListRunsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The runs, ascending by run id.
	Runs []*RunHead `protobuf:"bytes,1,rep,name=runs,proto3" json:"runs,omitempty"`
	// Token for the next page; empty on the last page.
	NextPageToken string `protobuf:"bytes,2,opt,name=next_page_token,json=nextPageToken,proto3" json:"next_page_token,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListRunsResponse) Reset() {
	*x = ListRunsResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[37]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListRunsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListRunsResponse) ProtoMessage() {}

func (x *ListRunsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[37]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListRunsResponse.ProtoReflect.Descriptor instead.
func (*ListRunsResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{37}
}

func (x *ListRunsResponse) GetRuns() []*RunHead {
	if x != nil {
		return x.Runs
	}
	return nil
}

func (x *ListRunsResponse) GetNextPageToken() string {
	if x != nil {
		return x.NextPageToken
	}
	return ""
}

// DeleteRunRequest names the run to delete.
type DeleteRunRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to delete.
	RunId         string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteRunRequest) Reset() {
	*x = DeleteRunRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[38]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteRunRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteRunRequest) ProtoMessage() {}

func (x *DeleteRunRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[38]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteRunRequest.ProtoReflect.Descriptor instead.
func (*DeleteRunRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{38}
}

func (x *DeleteRunRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

// DeleteRunResponse reports what was deleted.
type DeleteRunResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Number of checkpoints removed.
	DeletedCheckpoints uint64 `protobuf:"varint,1,opt,name=deleted_checkpoints,json=deletedCheckpoints,proto3" json:"deleted_checkpoints,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *DeleteRunResponse) Reset() {
	*x = DeleteRunResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[39]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteRunResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteRunResponse) ProtoMessage() {}

func (x *DeleteRunResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[39]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteRunResponse.ProtoReflect.Descriptor instead.
func (*DeleteRunResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{39}
}

func (x *DeleteRunResponse) GetDeletedCheckpoints() uint64 {
	if x != nil {
		return x.DeletedCheckpoints
	}
	return 0
}

// DeleteCheckpointsRequest names checkpoints of one run to delete now.
//
// What goes: each listed step's checkpoint row (state, metadata, checksum),
// with its label (which a later Save may then give to another step) and its
// cached copy, quarantined or not, the run's latest included. What stays:
//   - a checkpoint that any source pins (an operator's PinCheckpoint, or a task
//     waiting for approval): a pin is someone else's promise that the
//     checkpoint is kept, so it is never broken behind their back. Such steps
//     are kept and listed in `pinned_steps`; unpin them first to delete them.
//   - the run itself, its epoch, its message log and its tool journal. Both are
//     append-only logs that checkpoints only point into (a checkpoint covers
//     the first `message_count` messages and `tool_count` journal entries, and
//     its checksum covers exactly those), so removing a checkpoint leaves every
//     other one whole: each still covers an unchanged prefix of the same logs
//     and still verifies. The journal must stay in any case: it is what stops a
//     side-effecting tool from running twice.
//
// After the delete the highest remaining checkpoint is the run's latest for
// LoadLatest, Resume and GetRun (`latest_step`, `latest_valid_step` and
// `checkpoint_count` count only what remains; `message_count` and
// `tool_count` do not change). A later Save continues the log where it
// stands: its `message_offset` is the log's length (GetRun's
// `message_count`), which still includes the messages of a deleted latest
// checkpoint, and its step must be above the highest remaining one. A Resume
// truncates the log to what the checkpoint it restores covers, as always.
//
// Idempotent: a step without a checkpoint (never saved, or deleted already)
// is ignored, and listing a step twice deletes it once, so a retry is
// harmless and answers with what it deleted this time.
type DeleteCheckpointsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The steps whose checkpoints to delete, in any order. At most 1000
	// (RESOURCE_EXHAUSTED, reason TOO_LARGE, beyond, refused before decoding:
	// send several requests); none is a no-op that still checks the run and
	// the epoch. A negative step is INVALID_ARGUMENT.
	Steps []int64 `protobuf:"varint,2,rep,packed,name=steps,proto3" json:"steps,omitempty"`
	// Fencing epoch from the last Resume. When present, the delete happens only
	// while the run is still at this epoch (FAILED_PRECONDITION, reason
	// STALE_EPOCH or EPOCH_NOT_ISSUED, otherwise), so a writer that was
	// superseded cannot delete what the new owner relies on. Unlike Save,
	// absent means unfenced, not epoch 0: deleting is also done by whoever
	// manages a run's history (a framework's prune, an operator), which holds
	// no epoch.
	Epoch         *uint64 `protobuf:"varint,3,opt,name=epoch,proto3,oneof" json:"epoch,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteCheckpointsRequest) Reset() {
	*x = DeleteCheckpointsRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[40]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteCheckpointsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteCheckpointsRequest) ProtoMessage() {}

func (x *DeleteCheckpointsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[40]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteCheckpointsRequest.ProtoReflect.Descriptor instead.
func (*DeleteCheckpointsRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{40}
}

func (x *DeleteCheckpointsRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *DeleteCheckpointsRequest) GetSteps() []int64 {
	if x != nil {
		return x.Steps
	}
	return nil
}

func (x *DeleteCheckpointsRequest) GetEpoch() uint64 {
	if x != nil && x.Epoch != nil {
		return *x.Epoch
	}
	return 0
}

// DeleteCheckpointsResponse reports what was deleted.
type DeleteCheckpointsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Number of checkpoints deleted by this call.
	DeletedCheckpoints uint64 `protobuf:"varint,1,opt,name=deleted_checkpoints,json=deletedCheckpoints,proto3" json:"deleted_checkpoints,omitempty"`
	// The listed steps kept because a source pins them, ascending.
	PinnedSteps   []int64 `protobuf:"varint,2,rep,packed,name=pinned_steps,json=pinnedSteps,proto3" json:"pinned_steps,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteCheckpointsResponse) Reset() {
	*x = DeleteCheckpointsResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[41]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteCheckpointsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteCheckpointsResponse) ProtoMessage() {}

func (x *DeleteCheckpointsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[41]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteCheckpointsResponse.ProtoReflect.Descriptor instead.
func (*DeleteCheckpointsResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{41}
}

func (x *DeleteCheckpointsResponse) GetDeletedCheckpoints() uint64 {
	if x != nil {
		return x.DeletedCheckpoints
	}
	return 0
}

func (x *DeleteCheckpointsResponse) GetPinnedSteps() []int64 {
	if x != nil {
		return x.PinnedSteps
	}
	return nil
}

// SetRetentionRequest sets a run's retention policy.
type SetRetentionRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// One of `all`, `latest_only`, `keep_last:N` (N >= 1) or
	// `max_age:DURATION` (e.g. `36h`, `7d`). Empty means the server default
	// (`--retention`).
	Policy        string `protobuf:"bytes,2,opt,name=policy,proto3" json:"policy,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SetRetentionRequest) Reset() {
	*x = SetRetentionRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[42]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SetRetentionRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SetRetentionRequest) ProtoMessage() {}

func (x *SetRetentionRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[42]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SetRetentionRequest.ProtoReflect.Descriptor instead.
func (*SetRetentionRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{42}
}

func (x *SetRetentionRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *SetRetentionRequest) GetPolicy() string {
	if x != nil {
		return x.Policy
	}
	return ""
}

// SetRetentionResponse confirms the policy now in force.
type SetRetentionResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run's policy in canonical form; empty when it follows the server
	// default.
	Policy        string `protobuf:"bytes,1,opt,name=policy,proto3" json:"policy,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SetRetentionResponse) Reset() {
	*x = SetRetentionResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[43]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SetRetentionResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SetRetentionResponse) ProtoMessage() {}

func (x *SetRetentionResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[43]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SetRetentionResponse.ProtoReflect.Descriptor instead.
func (*SetRetentionResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{43}
}

func (x *SetRetentionResponse) GetPolicy() string {
	if x != nil {
		return x.Policy
	}
	return ""
}

// PinCheckpointRequest names the checkpoint to keep.
type PinCheckpointRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The step to pin.
	Step          int64 `protobuf:"varint,2,opt,name=step,proto3" json:"step,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PinCheckpointRequest) Reset() {
	*x = PinCheckpointRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[44]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PinCheckpointRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PinCheckpointRequest) ProtoMessage() {}

func (x *PinCheckpointRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[44]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PinCheckpointRequest.ProtoReflect.Descriptor instead.
func (*PinCheckpointRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{44}
}

func (x *PinCheckpointRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *PinCheckpointRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

// PinCheckpointResponse confirms the pin.
type PinCheckpointResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The pinned step.
	Step          int64 `protobuf:"varint,1,opt,name=step,proto3" json:"step,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PinCheckpointResponse) Reset() {
	*x = PinCheckpointResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[45]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PinCheckpointResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PinCheckpointResponse) ProtoMessage() {}

func (x *PinCheckpointResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[45]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PinCheckpointResponse.ProtoReflect.Descriptor instead.
func (*PinCheckpointResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{45}
}

func (x *PinCheckpointResponse) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

// UnpinCheckpointRequest names the checkpoint to release.
type UnpinCheckpointRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The step to unpin.
	Step int64 `protobuf:"varint,2,opt,name=step,proto3" json:"step,omitempty"`
	// Also remove the pins other sources hold on this step, such as the pin of
	// a task waiting for approval; by default only the operator's pin goes.
	AllSources    bool `protobuf:"varint,3,opt,name=all_sources,json=allSources,proto3" json:"all_sources,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *UnpinCheckpointRequest) Reset() {
	*x = UnpinCheckpointRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[46]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *UnpinCheckpointRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*UnpinCheckpointRequest) ProtoMessage() {}

func (x *UnpinCheckpointRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[46]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use UnpinCheckpointRequest.ProtoReflect.Descriptor instead.
func (*UnpinCheckpointRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{46}
}

func (x *UnpinCheckpointRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *UnpinCheckpointRequest) GetStep() int64 {
	if x != nil {
		return x.Step
	}
	return 0
}

func (x *UnpinCheckpointRequest) GetAllSources() bool {
	if x != nil {
		return x.AllSources
	}
	return false
}

// UnpinCheckpointResponse reports whether a pin was removed.
type UnpinCheckpointResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// False when the step carried no pin that the request removes.
	Unpinned      bool `protobuf:"varint,1,opt,name=unpinned,proto3" json:"unpinned,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *UnpinCheckpointResponse) Reset() {
	*x = UnpinCheckpointResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[47]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *UnpinCheckpointResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*UnpinCheckpointResponse) ProtoMessage() {}

func (x *UnpinCheckpointResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[47]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use UnpinCheckpointResponse.ProtoReflect.Descriptor instead.
func (*UnpinCheckpointResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{47}
}

func (x *UnpinCheckpointResponse) GetUnpinned() bool {
	if x != nil {
		return x.Unpinned
	}
	return false
}

// ValidateTenantRequest starts a scrub of the caller's tenant.
type ValidateTenantRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// How many checkpoint addresses the server reads per page; 0 means 100.
	// At most 1000.
	PageSize      uint32 `protobuf:"varint,1,opt,name=page_size,json=pageSize,proto3" json:"page_size,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateTenantRequest) Reset() {
	*x = ValidateTenantRequest{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[48]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateTenantRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateTenantRequest) ProtoMessage() {}

func (x *ValidateTenantRequest) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[48]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateTenantRequest.ProtoReflect.Descriptor instead.
func (*ValidateTenantRequest) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{48}
}

func (x *ValidateTenantRequest) GetPageSize() uint32 {
	if x != nil {
		return x.PageSize
	}
	return 0
}

// ValidateTenantResponse is one checkpoint's verdict.
type ValidateTenantResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run the checkpoint belongs to.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The verdict.
	Verdict       *CheckpointVerdict `protobuf:"bytes,2,opt,name=verdict,proto3" json:"verdict,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateTenantResponse) Reset() {
	*x = ValidateTenantResponse{}
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[49]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateTenantResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateTenantResponse) ProtoMessage() {}

func (x *ValidateTenantResponse) ProtoReflect() protoreflect.Message {
	mi := &file_checkpoint_v1_checkpoint_proto_msgTypes[49]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateTenantResponse.ProtoReflect.Descriptor instead.
func (*ValidateTenantResponse) Descriptor() ([]byte, []int) {
	return file_checkpoint_v1_checkpoint_proto_rawDescGZIP(), []int{49}
}

func (x *ValidateTenantResponse) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *ValidateTenantResponse) GetVerdict() *CheckpointVerdict {
	if x != nil {
		return x.Verdict
	}
	return nil
}

var File_checkpoint_v1_checkpoint_proto protoreflect.FileDescriptor

const file_checkpoint_v1_checkpoint_proto_rawDesc = "" +
	"\n" +
	"\x1echeckpoint/v1/checkpoint.proto\x12\rcheckpoint.v1\x1a\x1fgoogle/protobuf/timestamp.proto\"7\n" +
	"\aMessage\x12\x12\n" +
	"\x04role\x18\x01 \x01(\tR\x04role\x12\x18\n" +
	"\acontent\x18\x02 \x01(\fR\acontent\"\x83\x02\n" +
	"\n" +
	"ToolResult\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x02 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x03 \x01(\x03R\x04step\x12\x16\n" +
	"\x06output\x18\x04 \x01(\fR\x06output\x12\x19\n" +
	"\bis_error\x18\x05 \x01(\bR\aisError\x12\x10\n" +
	"\x03seq\x18\x06 \x01(\x04R\x03seq\x12;\n" +
	"\vrecorded_at\x18\a \x01(\v2\x1a.google.protobuf.TimestampR\n" +
	"recordedAt\x12)\n" +
	"\x10arguments_digest\x18\b \x01(\tR\x0fargumentsDigest\"\xf9\x01\n" +
	"\n" +
	"ToolIntent\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x02 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x03 \x01(\x03R\x04step\x12'\n" +
	"\x0fidempotency_key\x18\x04 \x01(\tR\x0eidempotencyKey\x12\x10\n" +
	"\x03seq\x18\x05 \x01(\x04R\x03seq\x12;\n" +
	"\vrecorded_at\x18\x06 \x01(\v2\x1a.google.protobuf.TimestampR\n" +
	"recordedAt\x12)\n" +
	"\x10arguments_digest\x18\a \x01(\tR\x0fargumentsDigest\"\x9a\x01\n" +
	"\vInDoubtCall\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x02 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x03 \x01(\x03R\x04step\x12'\n" +
	"\x0fidempotency_key\x18\x04 \x01(\tR\x0eidempotencyKey\x12\x18\n" +
	"\acorrupt\x18\x05 \x01(\bR\acorrupt\"\xbb\x04\n" +
	"\n" +
	"Checkpoint\x12#\n" +
	"\rcheckpoint_id\x18\x01 \x01(\tR\fcheckpointId\x12\x15\n" +
	"\x06run_id\x18\x02 \x01(\tR\x05runId\x12\x12\n" +
	"\x04step\x18\x03 \x01(\x03R\x04step\x12!\n" +
	"\fcontent_type\x18\x04 \x01(\tR\vcontentType\x12\x14\n" +
	"\x05state\x18\x05 \x01(\fR\x05state\x122\n" +
	"\bmessages\x18\x06 \x03(\v2\x16.checkpoint.v1.MessageR\bmessages\x12C\n" +
	"\bmetadata\x18\a \x03(\v2'.checkpoint.v1.Checkpoint.MetadataEntryR\bmetadata\x12\x14\n" +
	"\x05epoch\x18\b \x01(\x04R\x05epoch\x12\x1a\n" +
	"\bchecksum\x18\t \x01(\tR\bchecksum\x129\n" +
	"\n" +
	"created_at\x18\n" +
	" \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x12#\n" +
	"\rmessage_count\x18\v \x01(\x04R\fmessageCount\x12\x1d\n" +
	"\n" +
	"tool_count\x18\f \x01(\x04R\ttoolCount\x12'\n" +
	"\x0fmessages_offset\x18\r \x01(\x04R\x0emessagesOffset\x12\x14\n" +
	"\x05label\x18\x0e \x01(\tR\x05label\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xeb\x03\n" +
	"\vSaveRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x12\n" +
	"\x04step\x18\x02 \x01(\x03R\x04step\x12!\n" +
	"\fcontent_type\x18\x03 \x01(\tR\vcontentType\x12\x14\n" +
	"\x05state\x18\x04 \x01(\fR\x05state\x122\n" +
	"\bmessages\x18\x05 \x03(\v2\x16.checkpoint.v1.MessageR\bmessages\x12%\n" +
	"\x0emessage_offset\x18\x06 \x01(\x04R\rmessageOffset\x12D\n" +
	"\bmetadata\x18\a \x03(\v2(.checkpoint.v1.SaveRequest.MetadataEntryR\bmetadata\x12\x19\n" +
	"\x05epoch\x18\b \x01(\x04H\x00R\x05epoch\x88\x01\x01\x12\x1f\n" +
	"\bchecksum\x18\t \x01(\tH\x01R\bchecksum\x88\x01\x01\x12\x14\n" +
	"\x05label\x18\n" +
	" \x01(\tR\x05label\x12\"\n" +
	"\n" +
	"tool_count\x18\v \x01(\x04H\x02R\ttoolCount\x88\x01\x01\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01B\b\n" +
	"\x06_epochB\v\n" +
	"\t_checksumB\r\n" +
	"\v_tool_count\"\xb3\x01\n" +
	"\fSaveResponse\x12#\n" +
	"\rcheckpoint_id\x18\x01 \x01(\tR\fcheckpointId\x12\x1a\n" +
	"\bchecksum\x18\x02 \x01(\tR\bchecksum\x129\n" +
	"\n" +
	"created_at\x18\x03 \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x12'\n" +
	"\x0falready_existed\x18\x04 \x01(\bR\x0ealreadyExisted\"\xcd\x01\n" +
	"\x11LoadLatestRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12%\n" +
	"\x0emessage_offset\x18\x02 \x01(\x04R\rmessageOffset\x125\n" +
	"\ajournal\x18\x03 \x01(\x0e2\x1b.checkpoint.v1.JournalScopeR\ajournal\x12C\n" +
	"\fcapabilities\x18\x04 \x03(\x0e2\x1f.checkpoint.v1.ClientCapabilityR\fcapabilities\"\xda\x02\n" +
	"\x12LoadLatestResponse\x129\n" +
	"\n" +
	"checkpoint\x18\x01 \x01(\v2\x19.checkpoint.v1.CheckpointR\n" +
	"checkpoint\x12<\n" +
	"\ftool_results\x18\x02 \x03(\v2\x19.checkpoint.v1.ToolResultR\vtoolResults\x12#\n" +
	"\rskipped_steps\x18\x03 \x03(\x03R\fskippedSteps\x12<\n" +
	"\ftool_intents\x18\x04 \x03(\v2\x19.checkpoint.v1.ToolIntentR\vtoolIntents\x12\"\n" +
	"\fcontinuation\x18\x05 \x01(\fR\fcontinuation\x12D\n" +
	"\vpassed_over\x18\x06 \x03(\v2#.checkpoint.v1.PassedOverCheckpointR\n" +
	"passedOver\"\x9b\x02\n" +
	"\x11LoadAtStepRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x12\n" +
	"\x04step\x18\x02 \x01(\x03R\x04step\x12%\n" +
	"\x0emessage_offset\x18\x03 \x01(\x04R\rmessageOffset\x12\x14\n" +
	"\x05label\x18\x04 \x01(\tR\x05label\x125\n" +
	"\ajournal\x18\x05 \x01(\x0e2\x1b.checkpoint.v1.JournalScopeR\ajournal\x12C\n" +
	"\fcapabilities\x18\x06 \x03(\x0e2\x1f.checkpoint.v1.ClientCapabilityR\fcapabilities\x12\"\n" +
	"\fcontinuation\x18\a \x01(\fR\fcontinuation\"\xef\x01\n" +
	"\x12LoadAtStepResponse\x129\n" +
	"\n" +
	"checkpoint\x18\x01 \x01(\v2\x19.checkpoint.v1.CheckpointR\n" +
	"checkpoint\x12<\n" +
	"\ftool_results\x18\x02 \x03(\v2\x19.checkpoint.v1.ToolResultR\vtoolResults\x12<\n" +
	"\ftool_intents\x18\x03 \x03(\v2\x19.checkpoint.v1.ToolIntentR\vtoolIntents\x12\"\n" +
	"\fcontinuation\x18\x04 \x01(\fR\fcontinuation\"J\n" +
	"\x0fValidateRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x17\n" +
	"\x04step\x18\x02 \x01(\x03H\x00R\x04step\x88\x01\x01B\a\n" +
	"\x05_step\"\xa0\x01\n" +
	"\x11CheckpointVerdict\x12\x12\n" +
	"\x04step\x18\x01 \x01(\x03R\x04step\x12\x14\n" +
	"\x05valid\x18\x02 \x01(\bR\x05valid\x12\x16\n" +
	"\x06reason\x18\x03 \x01(\tR\x06reason\x12'\n" +
	"\x0fstored_checksum\x18\x04 \x01(\tR\x0estoredChecksum\x12 \n" +
	"\vquarantined\x18\x05 \x01(\bR\vquarantined\"P\n" +
	"\x10ValidateResponse\x12<\n" +
	"\bverdicts\x18\x01 \x03(\v2 .checkpoint.v1.CheckpointVerdictR\bverdicts\"\xbd\x01\n" +
	"\rResumeRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12%\n" +
	"\x0emessage_offset\x18\x02 \x01(\x04R\rmessageOffset\x12)\n" +
	"\x10require_existing\x18\x03 \x01(\bR\x0frequireExisting\x12C\n" +
	"\fcapabilities\x18\x04 \x03(\x0e2\x1f.checkpoint.v1.ClientCapabilityR\fcapabilities\"\xb3\x04\n" +
	"\x0eResumeResponse\x129\n" +
	"\n" +
	"checkpoint\x18\x01 \x01(\v2\x19.checkpoint.v1.CheckpointR\n" +
	"checkpoint\x12.\n" +
	"\x13recovered_from_step\x18\x02 \x01(\x03R\x11recoveredFromStep\x12#\n" +
	"\rskipped_steps\x18\x03 \x03(\x03R\fskippedSteps\x12<\n" +
	"\ftool_results\x18\x04 \x03(\v2\x19.checkpoint.v1.ToolResultR\vtoolResults\x12\x14\n" +
	"\x05epoch\x18\x05 \x01(\x04R\x05epoch\x124\n" +
	"\x16restarted_from_scratch\x18\x06 \x01(\bR\x14restartedFromScratch\x12<\n" +
	"\ftool_intents\x18\a \x03(\v2\x19.checkpoint.v1.ToolIntentR\vtoolIntents\x125\n" +
	"\bin_doubt\x18\b \x03(\v2\x1a.checkpoint.v1.InDoubtCallR\ainDoubt\x12(\n" +
	"\x10corrupt_call_ids\x18\t \x03(\tR\x0ecorruptCallIds\x12\"\n" +
	"\fcontinuation\x18\n" +
	" \x01(\fR\fcontinuation\x12D\n" +
	"\vpassed_over\x18\v \x03(\v2#.checkpoint.v1.PassedOverCheckpointR\n" +
	"passedOver\"\xcc\x02\n" +
	"\x14PassedOverCheckpoint\x12\x12\n" +
	"\x04step\x18\x01 \x01(\x03R\x04step\x12#\n" +
	"\rcheckpoint_id\x18\x02 \x01(\tR\fcheckpointId\x12\x14\n" +
	"\x05label\x18\x03 \x01(\tR\x05label\x12M\n" +
	"\bmetadata\x18\x04 \x03(\v21.checkpoint.v1.PassedOverCheckpoint.MetadataEntryR\bmetadata\x12A\n" +
	"\x0equarantined_at\x18\x05 \x01(\v2\x1a.google.protobuf.TimestampR\rquarantinedAt\x12\x16\n" +
	"\x06reason\x18\x06 \x01(\tR\x06reason\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xfd\x01\n" +
	"\x17RecordToolResultRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x17\n" +
	"\acall_id\x18\x02 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x03 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x04 \x01(\x03R\x04step\x12\x16\n" +
	"\x06output\x18\x05 \x01(\fR\x06output\x12\x19\n" +
	"\bis_error\x18\x06 \x01(\bR\aisError\x12\x19\n" +
	"\x05epoch\x18\a \x01(\x04H\x00R\x05epoch\x88\x01\x01\x12)\n" +
	"\x10arguments_digest\x18\b \x01(\tR\x0fargumentsDigestB\b\n" +
	"\x06_epoch\"x\n" +
	"\x18RecordToolResultResponse\x121\n" +
	"\x06result\x18\x01 \x01(\v2\x19.checkpoint.v1.ToolResultR\x06result\x12)\n" +
	"\x10already_recorded\x18\x02 \x01(\bR\x0falreadyRecorded\"\xb9\x01\n" +
	"\x0fToolResultInput\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x02 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x03 \x01(\x03R\x04step\x12\x16\n" +
	"\x06output\x18\x04 \x01(\fR\x06output\x12\x19\n" +
	"\bis_error\x18\x05 \x01(\bR\aisError\x12)\n" +
	"\x10arguments_digest\x18\x06 \x01(\tR\x0fargumentsDigest\"\x90\x01\n" +
	"\x18RecordToolResultsRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x19\n" +
	"\x05epoch\x18\x02 \x01(\x04H\x00R\x05epoch\x88\x01\x01\x128\n" +
	"\aresults\x18\x03 \x03(\v2\x1e.checkpoint.v1.ToolResultInputR\aresultsB\b\n" +
	"\x06_epoch\"^\n" +
	"\x19RecordToolResultsResponse\x12A\n" +
	"\aresults\x18\x01 \x03(\v2'.checkpoint.v1.RecordToolResultResponseR\aresults\"\xca\x01\n" +
	"\x17RecordToolIntentRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x17\n" +
	"\acall_id\x18\x02 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x03 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x04 \x01(\x03R\x04step\x12\x19\n" +
	"\x05epoch\x18\x05 \x01(\x04H\x00R\x05epoch\x88\x01\x01\x12)\n" +
	"\x10arguments_digest\x18\x06 \x01(\tR\x0fargumentsDigestB\b\n" +
	"\x06_epoch\"\xab\x01\n" +
	"\x18RecordToolIntentResponse\x121\n" +
	"\x06intent\x18\x01 \x01(\v2\x19.checkpoint.v1.ToolIntentR\x06intent\x12)\n" +
	"\x10already_recorded\x18\x02 \x01(\bR\x0falreadyRecorded\x121\n" +
	"\x06result\x18\x03 \x01(\v2\x19.checkpoint.v1.ToolResultR\x06result\"\xa9\x02\n" +
	"\fJournalEntry\x12\x10\n" +
	"\x03seq\x18\x01 \x01(\x04R\x03seq\x123\n" +
	"\x04kind\x18\x02 \x01(\x0e2\x1f.checkpoint.v1.JournalEntryKindR\x04kind\x12\x17\n" +
	"\acall_id\x18\x03 \x01(\tR\x06callId\x12\x1b\n" +
	"\ttool_name\x18\x04 \x01(\tR\btoolName\x12\x12\n" +
	"\x04step\x18\x05 \x01(\x03R\x04step\x12\x16\n" +
	"\x06output\x18\x06 \x01(\fR\x06output\x12\x19\n" +
	"\bis_error\x18\a \x01(\bR\aisError\x12;\n" +
	"\vrecorded_at\x18\b \x01(\v2\x1a.google.protobuf.TimestampR\n" +
	"recordedAt\x12\x18\n" +
	"\acorrupt\x18\t \x01(\bR\acorrupt\"\xa5\x01\n" +
	"\rJournalAction\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\tR\x06callId\x12\x16\n" +
	"\x06action\x18\x02 \x01(\tR\x06action\x12\x14\n" +
	"\x05actor\x18\x03 \x01(\tR\x05actor\x125\n" +
	"\bacted_at\x18\x04 \x01(\v2\x1a.google.protobuf.TimestampR\aactedAt\x12\x16\n" +
	"\x06detail\x18\x05 \x01(\tR\x06detail\"*\n" +
	"\x11GetJournalRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\"\xe4\x01\n" +
	"\x12GetJournalResponse\x125\n" +
	"\aentries\x18\x01 \x03(\v2\x1b.checkpoint.v1.JournalEntryR\aentries\x125\n" +
	"\bin_doubt\x18\x02 \x03(\v2\x1a.checkpoint.v1.InDoubtCallR\ainDoubt\x12(\n" +
	"\x10corrupt_call_ids\x18\x03 \x03(\tR\x0ecorruptCallIds\x126\n" +
	"\aactions\x18\x04 \x03(\v2\x1c.checkpoint.v1.JournalActionR\aactions\"\xa8\x01\n" +
	"\x14RepairJournalRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x17\n" +
	"\acall_id\x18\x02 \x01(\tR\x06callId\x12\x14\n" +
	"\x05actor\x18\x03 \x01(\tR\x05actor\x12*\n" +
	"\x10mark_done_output\x18\x04 \x01(\fH\x00R\x0emarkDoneOutput\x12\x14\n" +
	"\x04drop\x18\x05 \x01(\bH\x00R\x04dropB\b\n" +
	"\x06repair\"z\n" +
	"\x15RepairJournalResponse\x124\n" +
	"\x06action\x18\x01 \x01(\v2\x1c.checkpoint.v1.JournalActionR\x06action\x12+\n" +
	"\x11quarantined_steps\x18\x02 \x03(\x03R\x10quarantinedSteps\"\xe8\x02\n" +
	"\x16ListCheckpointsRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x1b\n" +
	"\tpage_size\x18\x02 \x01(\rR\bpageSize\x12\x1d\n" +
	"\n" +
	"page_token\x18\x03 \x01(\tR\tpageToken\x12\x1e\n" +
	"\n" +
	"descending\x18\x04 \x01(\bR\n" +
	"descending\x12$\n" +
	"\vbefore_step\x18\x05 \x01(\x03H\x00R\n" +
	"beforeStep\x88\x01\x01\x12b\n" +
	"\x0fmetadata_filter\x18\x06 \x03(\v29.checkpoint.v1.ListCheckpointsRequest.MetadataFilterEntryR\x0emetadataFilter\x1aA\n" +
	"\x13MetadataFilterEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01B\x0e\n" +
	"\f_before_step\"\xd7\x03\n" +
	"\x11CheckpointSummary\x12\x12\n" +
	"\x04step\x18\x01 \x01(\x03R\x04step\x12\x1d\n" +
	"\n" +
	"size_bytes\x18\x02 \x01(\x04R\tsizeBytes\x12\x14\n" +
	"\x05valid\x18\x03 \x01(\bR\x05valid\x12+\n" +
	"\x11quarantine_reason\x18\x04 \x01(\tR\x10quarantineReason\x129\n" +
	"\n" +
	"created_at\x18\x05 \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x12\x1a\n" +
	"\bchecksum\x18\x06 \x01(\tR\bchecksum\x12\x14\n" +
	"\x05epoch\x18\a \x01(\x04R\x05epoch\x12#\n" +
	"\rmessage_count\x18\b \x01(\x04R\fmessageCount\x12\x1b\n" +
	"\tpinned_by\x18\t \x03(\tR\bpinnedBy\x12\x14\n" +
	"\x05label\x18\n" +
	" \x01(\tR\x05label\x12J\n" +
	"\bmetadata\x18\v \x03(\v2..checkpoint.v1.CheckpointSummary.MetadataEntryR\bmetadata\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\x85\x01\n" +
	"\x17ListCheckpointsResponse\x12B\n" +
	"\vcheckpoints\x18\x01 \x03(\v2 .checkpoint.v1.CheckpointSummaryR\vcheckpoints\x12&\n" +
	"\x0fnext_page_token\x18\x02 \x01(\tR\rnextPageToken\"\xdd\x02\n" +
	"\aRunHead\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x14\n" +
	"\x05epoch\x18\x02 \x01(\x04R\x05epoch\x12$\n" +
	"\vlatest_step\x18\x03 \x01(\x03H\x00R\n" +
	"latestStep\x88\x01\x01\x12/\n" +
	"\x11latest_valid_step\x18\x04 \x01(\x03H\x01R\x0flatestValidStep\x88\x01\x01\x12#\n" +
	"\rmessage_count\x18\x05 \x01(\x04R\fmessageCount\x12\x1d\n" +
	"\n" +
	"tool_count\x18\x06 \x01(\x04R\ttoolCount\x12)\n" +
	"\x10checkpoint_count\x18\a \x01(\x04R\x0fcheckpointCount\x129\n" +
	"\n" +
	"updated_at\x18\b \x01(\v2\x1a.google.protobuf.TimestampR\tupdatedAtB\x0e\n" +
	"\f_latest_stepB\x14\n" +
	"\x12_latest_valid_step\"&\n" +
	"\rGetRunRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\":\n" +
	"\x0eGetRunResponse\x12(\n" +
	"\x03run\x18\x01 \x01(\v2\x16.checkpoint.v1.RunHeadR\x03run\"q\n" +
	"\x0fListRunsRequest\x12\x1b\n" +
	"\tpage_size\x18\x01 \x01(\rR\bpageSize\x12\x1d\n" +
	"\n" +
	"page_token\x18\x02 \x01(\tR\tpageToken\x12\"\n" +
	"\rrun_id_prefix\x18\x03 \x01(\tR\vrunIdPrefix\"f\n" +
	"\x10ListRunsResponse\x12*\n" +
	"\x04runs\x18\x01 \x03(\v2\x16.checkpoint.v1.RunHeadR\x04runs\x12&\n" +
	"\x0fnext_page_token\x18\x02 \x01(\tR\rnextPageToken\")\n" +
	"\x10DeleteRunRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\"D\n" +
	"\x11DeleteRunResponse\x12/\n" +
	"\x13deleted_checkpoints\x18\x01 \x01(\x04R\x12deletedCheckpoints\"l\n" +
	"\x18DeleteCheckpointsRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x14\n" +
	"\x05steps\x18\x02 \x03(\x03R\x05steps\x12\x19\n" +
	"\x05epoch\x18\x03 \x01(\x04H\x00R\x05epoch\x88\x01\x01B\b\n" +
	"\x06_epoch\"o\n" +
	"\x19DeleteCheckpointsResponse\x12/\n" +
	"\x13deleted_checkpoints\x18\x01 \x01(\x04R\x12deletedCheckpoints\x12!\n" +
	"\fpinned_steps\x18\x02 \x03(\x03R\vpinnedSteps\"D\n" +
	"\x13SetRetentionRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x16\n" +
	"\x06policy\x18\x02 \x01(\tR\x06policy\".\n" +
	"\x14SetRetentionResponse\x12\x16\n" +
	"\x06policy\x18\x01 \x01(\tR\x06policy\"A\n" +
	"\x14PinCheckpointRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x12\n" +
	"\x04step\x18\x02 \x01(\x03R\x04step\"+\n" +
	"\x15PinCheckpointResponse\x12\x12\n" +
	"\x04step\x18\x01 \x01(\x03R\x04step\"d\n" +
	"\x16UnpinCheckpointRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12\x12\n" +
	"\x04step\x18\x02 \x01(\x03R\x04step\x12\x1f\n" +
	"\vall_sources\x18\x03 \x01(\bR\n" +
	"allSources\"5\n" +
	"\x17UnpinCheckpointResponse\x12\x1a\n" +
	"\bunpinned\x18\x01 \x01(\bR\bunpinned\"4\n" +
	"\x15ValidateTenantRequest\x12\x1b\n" +
	"\tpage_size\x18\x01 \x01(\rR\bpageSize\"k\n" +
	"\x16ValidateTenantResponse\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12:\n" +
	"\averdict\x18\x02 \x01(\v2 .checkpoint.v1.CheckpointVerdictR\averdict*t\n" +
	"\fJournalScope\x12\x1d\n" +
	"\x19JOURNAL_SCOPE_UNSPECIFIED\x10\x00\x12\x15\n" +
	"\x11JOURNAL_SCOPE_ALL\x10\x01\x12\x16\n" +
	"\x12JOURNAL_SCOPE_STEP\x10\x02\x12\x16\n" +
	"\x12JOURNAL_SCOPE_NONE\x10\x03*\x81\x01\n" +
	"\x10ClientCapability\x12!\n" +
	"\x1dCLIENT_CAPABILITY_UNSPECIFIED\x10\x00\x12$\n" +
	" CLIENT_CAPABILITY_IN_DOUBT_CALLS\x10\x01\x12$\n" +
	" CLIENT_CAPABILITY_PAGED_MESSAGES\x10\x02*t\n" +
	"\x10JournalEntryKind\x12\"\n" +
	"\x1eJOURNAL_ENTRY_KIND_UNSPECIFIED\x10\x00\x12\x1d\n" +
	"\x19JOURNAL_ENTRY_KIND_RESULT\x10\x01\x12\x1d\n" +
	"\x19JOURNAL_ENTRY_KIND_INTENT\x10\x022\x95\r\n" +
	"\x11CheckpointService\x12?\n" +
	"\x04Save\x12\x1a.checkpoint.v1.SaveRequest\x1a\x1b.checkpoint.v1.SaveResponse\x12Q\n" +
	"\n" +
	"LoadLatest\x12 .checkpoint.v1.LoadLatestRequest\x1a!.checkpoint.v1.LoadLatestResponse\x12Q\n" +
	"\n" +
	"LoadAtStep\x12 .checkpoint.v1.LoadAtStepRequest\x1a!.checkpoint.v1.LoadAtStepResponse\x12K\n" +
	"\bValidate\x12\x1e.checkpoint.v1.ValidateRequest\x1a\x1f.checkpoint.v1.ValidateResponse\x12E\n" +
	"\x06Resume\x12\x1c.checkpoint.v1.ResumeRequest\x1a\x1d.checkpoint.v1.ResumeResponse\x12c\n" +
	"\x10RecordToolResult\x12&.checkpoint.v1.RecordToolResultRequest\x1a'.checkpoint.v1.RecordToolResultResponse\x12f\n" +
	"\x11RecordToolResults\x12'.checkpoint.v1.RecordToolResultsRequest\x1a(.checkpoint.v1.RecordToolResultsResponse\x12c\n" +
	"\x10RecordToolIntent\x12&.checkpoint.v1.RecordToolIntentRequest\x1a'.checkpoint.v1.RecordToolIntentResponse\x12Q\n" +
	"\n" +
	"GetJournal\x12 .checkpoint.v1.GetJournalRequest\x1a!.checkpoint.v1.GetJournalResponse\x12Z\n" +
	"\rRepairJournal\x12#.checkpoint.v1.RepairJournalRequest\x1a$.checkpoint.v1.RepairJournalResponse\x12`\n" +
	"\x0fListCheckpoints\x12%.checkpoint.v1.ListCheckpointsRequest\x1a&.checkpoint.v1.ListCheckpointsResponse\x12E\n" +
	"\x06GetRun\x12\x1c.checkpoint.v1.GetRunRequest\x1a\x1d.checkpoint.v1.GetRunResponse\x12K\n" +
	"\bListRuns\x12\x1e.checkpoint.v1.ListRunsRequest\x1a\x1f.checkpoint.v1.ListRunsResponse\x12N\n" +
	"\tDeleteRun\x12\x1f.checkpoint.v1.DeleteRunRequest\x1a .checkpoint.v1.DeleteRunResponse\x12f\n" +
	"\x11DeleteCheckpoints\x12'.checkpoint.v1.DeleteCheckpointsRequest\x1a(.checkpoint.v1.DeleteCheckpointsResponse\x12W\n" +
	"\fSetRetention\x12\".checkpoint.v1.SetRetentionRequest\x1a#.checkpoint.v1.SetRetentionResponse\x12Z\n" +
	"\rPinCheckpoint\x12#.checkpoint.v1.PinCheckpointRequest\x1a$.checkpoint.v1.PinCheckpointResponse\x12`\n" +
	"\x0fUnpinCheckpoint\x12%.checkpoint.v1.UnpinCheckpointRequest\x1a&.checkpoint.v1.UnpinCheckpointResponse\x12_\n" +
	"\x0eValidateTenant\x12$.checkpoint.v1.ValidateTenantRequest\x1a%.checkpoint.v1.ValidateTenantResponse0\x01B\xc7\x01\n" +
	"\x11com.checkpoint.v1B\x0fCheckpointProtoP\x01ZLgithub.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1;checkpointv1\xa2\x02\x03CXX\xaa\x02\rCheckpoint.V1\xca\x02\rCheckpoint\\V1\xe2\x02\x19Checkpoint\\V1\\GPBMetadata\xea\x02\x0eCheckpoint::V1b\x06proto3"

var (
	file_checkpoint_v1_checkpoint_proto_rawDescOnce sync.Once
	file_checkpoint_v1_checkpoint_proto_rawDescData []byte
)

func file_checkpoint_v1_checkpoint_proto_rawDescGZIP() []byte {
	file_checkpoint_v1_checkpoint_proto_rawDescOnce.Do(func() {
		file_checkpoint_v1_checkpoint_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_checkpoint_v1_checkpoint_proto_rawDesc), len(file_checkpoint_v1_checkpoint_proto_rawDesc)))
	})
	return file_checkpoint_v1_checkpoint_proto_rawDescData
}

var file_checkpoint_v1_checkpoint_proto_enumTypes = make([]protoimpl.EnumInfo, 3)
var file_checkpoint_v1_checkpoint_proto_msgTypes = make([]protoimpl.MessageInfo, 55)
var file_checkpoint_v1_checkpoint_proto_goTypes = []any{
	(JournalScope)(0),                 // 0: checkpoint.v1.JournalScope
	(ClientCapability)(0),             // 1: checkpoint.v1.ClientCapability
	(JournalEntryKind)(0),             // 2: checkpoint.v1.JournalEntryKind
	(*Message)(nil),                   // 3: checkpoint.v1.Message
	(*ToolResult)(nil),                // 4: checkpoint.v1.ToolResult
	(*ToolIntent)(nil),                // 5: checkpoint.v1.ToolIntent
	(*InDoubtCall)(nil),               // 6: checkpoint.v1.InDoubtCall
	(*Checkpoint)(nil),                // 7: checkpoint.v1.Checkpoint
	(*SaveRequest)(nil),               // 8: checkpoint.v1.SaveRequest
	(*SaveResponse)(nil),              // 9: checkpoint.v1.SaveResponse
	(*LoadLatestRequest)(nil),         // 10: checkpoint.v1.LoadLatestRequest
	(*LoadLatestResponse)(nil),        // 11: checkpoint.v1.LoadLatestResponse
	(*LoadAtStepRequest)(nil),         // 12: checkpoint.v1.LoadAtStepRequest
	(*LoadAtStepResponse)(nil),        // 13: checkpoint.v1.LoadAtStepResponse
	(*ValidateRequest)(nil),           // 14: checkpoint.v1.ValidateRequest
	(*CheckpointVerdict)(nil),         // 15: checkpoint.v1.CheckpointVerdict
	(*ValidateResponse)(nil),          // 16: checkpoint.v1.ValidateResponse
	(*ResumeRequest)(nil),             // 17: checkpoint.v1.ResumeRequest
	(*ResumeResponse)(nil),            // 18: checkpoint.v1.ResumeResponse
	(*PassedOverCheckpoint)(nil),      // 19: checkpoint.v1.PassedOverCheckpoint
	(*RecordToolResultRequest)(nil),   // 20: checkpoint.v1.RecordToolResultRequest
	(*RecordToolResultResponse)(nil),  // 21: checkpoint.v1.RecordToolResultResponse
	(*ToolResultInput)(nil),           // 22: checkpoint.v1.ToolResultInput
	(*RecordToolResultsRequest)(nil),  // 23: checkpoint.v1.RecordToolResultsRequest
	(*RecordToolResultsResponse)(nil), // 24: checkpoint.v1.RecordToolResultsResponse
	(*RecordToolIntentRequest)(nil),   // 25: checkpoint.v1.RecordToolIntentRequest
	(*RecordToolIntentResponse)(nil),  // 26: checkpoint.v1.RecordToolIntentResponse
	(*JournalEntry)(nil),              // 27: checkpoint.v1.JournalEntry
	(*JournalAction)(nil),             // 28: checkpoint.v1.JournalAction
	(*GetJournalRequest)(nil),         // 29: checkpoint.v1.GetJournalRequest
	(*GetJournalResponse)(nil),        // 30: checkpoint.v1.GetJournalResponse
	(*RepairJournalRequest)(nil),      // 31: checkpoint.v1.RepairJournalRequest
	(*RepairJournalResponse)(nil),     // 32: checkpoint.v1.RepairJournalResponse
	(*ListCheckpointsRequest)(nil),    // 33: checkpoint.v1.ListCheckpointsRequest
	(*CheckpointSummary)(nil),         // 34: checkpoint.v1.CheckpointSummary
	(*ListCheckpointsResponse)(nil),   // 35: checkpoint.v1.ListCheckpointsResponse
	(*RunHead)(nil),                   // 36: checkpoint.v1.RunHead
	(*GetRunRequest)(nil),             // 37: checkpoint.v1.GetRunRequest
	(*GetRunResponse)(nil),            // 38: checkpoint.v1.GetRunResponse
	(*ListRunsRequest)(nil),           // 39: checkpoint.v1.ListRunsRequest
	(*ListRunsResponse)(nil),          // 40: checkpoint.v1.ListRunsResponse
	(*DeleteRunRequest)(nil),          // 41: checkpoint.v1.DeleteRunRequest
	(*DeleteRunResponse)(nil),         // 42: checkpoint.v1.DeleteRunResponse
	(*DeleteCheckpointsRequest)(nil),  // 43: checkpoint.v1.DeleteCheckpointsRequest
	(*DeleteCheckpointsResponse)(nil), // 44: checkpoint.v1.DeleteCheckpointsResponse
	(*SetRetentionRequest)(nil),       // 45: checkpoint.v1.SetRetentionRequest
	(*SetRetentionResponse)(nil),      // 46: checkpoint.v1.SetRetentionResponse
	(*PinCheckpointRequest)(nil),      // 47: checkpoint.v1.PinCheckpointRequest
	(*PinCheckpointResponse)(nil),     // 48: checkpoint.v1.PinCheckpointResponse
	(*UnpinCheckpointRequest)(nil),    // 49: checkpoint.v1.UnpinCheckpointRequest
	(*UnpinCheckpointResponse)(nil),   // 50: checkpoint.v1.UnpinCheckpointResponse
	(*ValidateTenantRequest)(nil),     // 51: checkpoint.v1.ValidateTenantRequest
	(*ValidateTenantResponse)(nil),    // 52: checkpoint.v1.ValidateTenantResponse
	nil,                               // 53: checkpoint.v1.Checkpoint.MetadataEntry
	nil,                               // 54: checkpoint.v1.SaveRequest.MetadataEntry
	nil,                               // 55: checkpoint.v1.PassedOverCheckpoint.MetadataEntry
	nil,                               // 56: checkpoint.v1.ListCheckpointsRequest.MetadataFilterEntry
	nil,                               // 57: checkpoint.v1.CheckpointSummary.MetadataEntry
	(*timestamppb.Timestamp)(nil),     // 58: google.protobuf.Timestamp
}
var file_checkpoint_v1_checkpoint_proto_depIdxs = []int32{
	58, // 0: checkpoint.v1.ToolResult.recorded_at:type_name -> google.protobuf.Timestamp
	58, // 1: checkpoint.v1.ToolIntent.recorded_at:type_name -> google.protobuf.Timestamp
	3,  // 2: checkpoint.v1.Checkpoint.messages:type_name -> checkpoint.v1.Message
	53, // 3: checkpoint.v1.Checkpoint.metadata:type_name -> checkpoint.v1.Checkpoint.MetadataEntry
	58, // 4: checkpoint.v1.Checkpoint.created_at:type_name -> google.protobuf.Timestamp
	3,  // 5: checkpoint.v1.SaveRequest.messages:type_name -> checkpoint.v1.Message
	54, // 6: checkpoint.v1.SaveRequest.metadata:type_name -> checkpoint.v1.SaveRequest.MetadataEntry
	58, // 7: checkpoint.v1.SaveResponse.created_at:type_name -> google.protobuf.Timestamp
	0,  // 8: checkpoint.v1.LoadLatestRequest.journal:type_name -> checkpoint.v1.JournalScope
	1,  // 9: checkpoint.v1.LoadLatestRequest.capabilities:type_name -> checkpoint.v1.ClientCapability
	7,  // 10: checkpoint.v1.LoadLatestResponse.checkpoint:type_name -> checkpoint.v1.Checkpoint
	4,  // 11: checkpoint.v1.LoadLatestResponse.tool_results:type_name -> checkpoint.v1.ToolResult
	5,  // 12: checkpoint.v1.LoadLatestResponse.tool_intents:type_name -> checkpoint.v1.ToolIntent
	19, // 13: checkpoint.v1.LoadLatestResponse.passed_over:type_name -> checkpoint.v1.PassedOverCheckpoint
	0,  // 14: checkpoint.v1.LoadAtStepRequest.journal:type_name -> checkpoint.v1.JournalScope
	1,  // 15: checkpoint.v1.LoadAtStepRequest.capabilities:type_name -> checkpoint.v1.ClientCapability
	7,  // 16: checkpoint.v1.LoadAtStepResponse.checkpoint:type_name -> checkpoint.v1.Checkpoint
	4,  // 17: checkpoint.v1.LoadAtStepResponse.tool_results:type_name -> checkpoint.v1.ToolResult
	5,  // 18: checkpoint.v1.LoadAtStepResponse.tool_intents:type_name -> checkpoint.v1.ToolIntent
	15, // 19: checkpoint.v1.ValidateResponse.verdicts:type_name -> checkpoint.v1.CheckpointVerdict
	1,  // 20: checkpoint.v1.ResumeRequest.capabilities:type_name -> checkpoint.v1.ClientCapability
	7,  // 21: checkpoint.v1.ResumeResponse.checkpoint:type_name -> checkpoint.v1.Checkpoint
	4,  // 22: checkpoint.v1.ResumeResponse.tool_results:type_name -> checkpoint.v1.ToolResult
	5,  // 23: checkpoint.v1.ResumeResponse.tool_intents:type_name -> checkpoint.v1.ToolIntent
	6,  // 24: checkpoint.v1.ResumeResponse.in_doubt:type_name -> checkpoint.v1.InDoubtCall
	19, // 25: checkpoint.v1.ResumeResponse.passed_over:type_name -> checkpoint.v1.PassedOverCheckpoint
	55, // 26: checkpoint.v1.PassedOverCheckpoint.metadata:type_name -> checkpoint.v1.PassedOverCheckpoint.MetadataEntry
	58, // 27: checkpoint.v1.PassedOverCheckpoint.quarantined_at:type_name -> google.protobuf.Timestamp
	4,  // 28: checkpoint.v1.RecordToolResultResponse.result:type_name -> checkpoint.v1.ToolResult
	22, // 29: checkpoint.v1.RecordToolResultsRequest.results:type_name -> checkpoint.v1.ToolResultInput
	21, // 30: checkpoint.v1.RecordToolResultsResponse.results:type_name -> checkpoint.v1.RecordToolResultResponse
	5,  // 31: checkpoint.v1.RecordToolIntentResponse.intent:type_name -> checkpoint.v1.ToolIntent
	4,  // 32: checkpoint.v1.RecordToolIntentResponse.result:type_name -> checkpoint.v1.ToolResult
	2,  // 33: checkpoint.v1.JournalEntry.kind:type_name -> checkpoint.v1.JournalEntryKind
	58, // 34: checkpoint.v1.JournalEntry.recorded_at:type_name -> google.protobuf.Timestamp
	58, // 35: checkpoint.v1.JournalAction.acted_at:type_name -> google.protobuf.Timestamp
	27, // 36: checkpoint.v1.GetJournalResponse.entries:type_name -> checkpoint.v1.JournalEntry
	6,  // 37: checkpoint.v1.GetJournalResponse.in_doubt:type_name -> checkpoint.v1.InDoubtCall
	28, // 38: checkpoint.v1.GetJournalResponse.actions:type_name -> checkpoint.v1.JournalAction
	28, // 39: checkpoint.v1.RepairJournalResponse.action:type_name -> checkpoint.v1.JournalAction
	56, // 40: checkpoint.v1.ListCheckpointsRequest.metadata_filter:type_name -> checkpoint.v1.ListCheckpointsRequest.MetadataFilterEntry
	58, // 41: checkpoint.v1.CheckpointSummary.created_at:type_name -> google.protobuf.Timestamp
	57, // 42: checkpoint.v1.CheckpointSummary.metadata:type_name -> checkpoint.v1.CheckpointSummary.MetadataEntry
	34, // 43: checkpoint.v1.ListCheckpointsResponse.checkpoints:type_name -> checkpoint.v1.CheckpointSummary
	58, // 44: checkpoint.v1.RunHead.updated_at:type_name -> google.protobuf.Timestamp
	36, // 45: checkpoint.v1.GetRunResponse.run:type_name -> checkpoint.v1.RunHead
	36, // 46: checkpoint.v1.ListRunsResponse.runs:type_name -> checkpoint.v1.RunHead
	15, // 47: checkpoint.v1.ValidateTenantResponse.verdict:type_name -> checkpoint.v1.CheckpointVerdict
	8,  // 48: checkpoint.v1.CheckpointService.Save:input_type -> checkpoint.v1.SaveRequest
	10, // 49: checkpoint.v1.CheckpointService.LoadLatest:input_type -> checkpoint.v1.LoadLatestRequest
	12, // 50: checkpoint.v1.CheckpointService.LoadAtStep:input_type -> checkpoint.v1.LoadAtStepRequest
	14, // 51: checkpoint.v1.CheckpointService.Validate:input_type -> checkpoint.v1.ValidateRequest
	17, // 52: checkpoint.v1.CheckpointService.Resume:input_type -> checkpoint.v1.ResumeRequest
	20, // 53: checkpoint.v1.CheckpointService.RecordToolResult:input_type -> checkpoint.v1.RecordToolResultRequest
	23, // 54: checkpoint.v1.CheckpointService.RecordToolResults:input_type -> checkpoint.v1.RecordToolResultsRequest
	25, // 55: checkpoint.v1.CheckpointService.RecordToolIntent:input_type -> checkpoint.v1.RecordToolIntentRequest
	29, // 56: checkpoint.v1.CheckpointService.GetJournal:input_type -> checkpoint.v1.GetJournalRequest
	31, // 57: checkpoint.v1.CheckpointService.RepairJournal:input_type -> checkpoint.v1.RepairJournalRequest
	33, // 58: checkpoint.v1.CheckpointService.ListCheckpoints:input_type -> checkpoint.v1.ListCheckpointsRequest
	37, // 59: checkpoint.v1.CheckpointService.GetRun:input_type -> checkpoint.v1.GetRunRequest
	39, // 60: checkpoint.v1.CheckpointService.ListRuns:input_type -> checkpoint.v1.ListRunsRequest
	41, // 61: checkpoint.v1.CheckpointService.DeleteRun:input_type -> checkpoint.v1.DeleteRunRequest
	43, // 62: checkpoint.v1.CheckpointService.DeleteCheckpoints:input_type -> checkpoint.v1.DeleteCheckpointsRequest
	45, // 63: checkpoint.v1.CheckpointService.SetRetention:input_type -> checkpoint.v1.SetRetentionRequest
	47, // 64: checkpoint.v1.CheckpointService.PinCheckpoint:input_type -> checkpoint.v1.PinCheckpointRequest
	49, // 65: checkpoint.v1.CheckpointService.UnpinCheckpoint:input_type -> checkpoint.v1.UnpinCheckpointRequest
	51, // 66: checkpoint.v1.CheckpointService.ValidateTenant:input_type -> checkpoint.v1.ValidateTenantRequest
	9,  // 67: checkpoint.v1.CheckpointService.Save:output_type -> checkpoint.v1.SaveResponse
	11, // 68: checkpoint.v1.CheckpointService.LoadLatest:output_type -> checkpoint.v1.LoadLatestResponse
	13, // 69: checkpoint.v1.CheckpointService.LoadAtStep:output_type -> checkpoint.v1.LoadAtStepResponse
	16, // 70: checkpoint.v1.CheckpointService.Validate:output_type -> checkpoint.v1.ValidateResponse
	18, // 71: checkpoint.v1.CheckpointService.Resume:output_type -> checkpoint.v1.ResumeResponse
	21, // 72: checkpoint.v1.CheckpointService.RecordToolResult:output_type -> checkpoint.v1.RecordToolResultResponse
	24, // 73: checkpoint.v1.CheckpointService.RecordToolResults:output_type -> checkpoint.v1.RecordToolResultsResponse
	26, // 74: checkpoint.v1.CheckpointService.RecordToolIntent:output_type -> checkpoint.v1.RecordToolIntentResponse
	30, // 75: checkpoint.v1.CheckpointService.GetJournal:output_type -> checkpoint.v1.GetJournalResponse
	32, // 76: checkpoint.v1.CheckpointService.RepairJournal:output_type -> checkpoint.v1.RepairJournalResponse
	35, // 77: checkpoint.v1.CheckpointService.ListCheckpoints:output_type -> checkpoint.v1.ListCheckpointsResponse
	38, // 78: checkpoint.v1.CheckpointService.GetRun:output_type -> checkpoint.v1.GetRunResponse
	40, // 79: checkpoint.v1.CheckpointService.ListRuns:output_type -> checkpoint.v1.ListRunsResponse
	42, // 80: checkpoint.v1.CheckpointService.DeleteRun:output_type -> checkpoint.v1.DeleteRunResponse
	44, // 81: checkpoint.v1.CheckpointService.DeleteCheckpoints:output_type -> checkpoint.v1.DeleteCheckpointsResponse
	46, // 82: checkpoint.v1.CheckpointService.SetRetention:output_type -> checkpoint.v1.SetRetentionResponse
	48, // 83: checkpoint.v1.CheckpointService.PinCheckpoint:output_type -> checkpoint.v1.PinCheckpointResponse
	50, // 84: checkpoint.v1.CheckpointService.UnpinCheckpoint:output_type -> checkpoint.v1.UnpinCheckpointResponse
	52, // 85: checkpoint.v1.CheckpointService.ValidateTenant:output_type -> checkpoint.v1.ValidateTenantResponse
	67, // [67:86] is the sub-list for method output_type
	48, // [48:67] is the sub-list for method input_type
	48, // [48:48] is the sub-list for extension type_name
	48, // [48:48] is the sub-list for extension extendee
	0,  // [0:48] is the sub-list for field type_name
}

func init() { file_checkpoint_v1_checkpoint_proto_init() }
func file_checkpoint_v1_checkpoint_proto_init() {
	if File_checkpoint_v1_checkpoint_proto != nil {
		return
	}
	file_checkpoint_v1_checkpoint_proto_msgTypes[5].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[11].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[17].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[20].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[22].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[28].OneofWrappers = []any{
		(*RepairJournalRequest_MarkDoneOutput)(nil),
		(*RepairJournalRequest_Drop)(nil),
	}
	file_checkpoint_v1_checkpoint_proto_msgTypes[30].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[33].OneofWrappers = []any{}
	file_checkpoint_v1_checkpoint_proto_msgTypes[40].OneofWrappers = []any{}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_checkpoint_v1_checkpoint_proto_rawDesc), len(file_checkpoint_v1_checkpoint_proto_rawDesc)),
			NumEnums:      3,
			NumMessages:   55,
			NumExtensions: 0,
			NumServices:   1,
		},
		GoTypes:           file_checkpoint_v1_checkpoint_proto_goTypes,
		DependencyIndexes: file_checkpoint_v1_checkpoint_proto_depIdxs,
		EnumInfos:         file_checkpoint_v1_checkpoint_proto_enumTypes,
		MessageInfos:      file_checkpoint_v1_checkpoint_proto_msgTypes,
	}.Build()
	File_checkpoint_v1_checkpoint_proto = out.File
	file_checkpoint_v1_checkpoint_proto_goTypes = nil
	file_checkpoint_v1_checkpoint_proto_depIdxs = nil
}
