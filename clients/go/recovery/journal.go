// The tool journal as the store holds it (results and intents in one seq order) and a loaded
// checkpoint turned into an AgentCheckpoint, its checksum v1 recomputed on the client.
package recovery

import (
	"encoding/json"
	"sort"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// journalEntry is a result or an intent, at its place in the journal.
type journalEntry struct {
	result *checkpointv1.ToolResult
	intent *checkpointv1.ToolIntent
}

func (e journalEntry) seq() uint64 {
	if e.intent != nil {
		return e.intent.GetSeq()
	}
	return e.result.GetSeq()
}

func (e journalEntry) pushOnto(chain checkpointd.ToolChain) checkpointd.ToolChain {
	if e.intent != nil {
		return chain.PushIntent(checkpointd.ToolIntentEntry{CallID: e.intent.GetCallId(),
			ToolName: e.intent.GetToolName(), Step: uint64(e.intent.GetStep())})
	}
	return chain.PushResult(checkpointd.ToolResultEntry{CallID: e.result.GetCallId(),
		ToolName: e.result.GetToolName(), Step: uint64(e.result.GetStep()),
		Output: e.result.GetOutput(), IsError: e.result.GetIsError()})
}

// journalOf merges results and intents in seq order.
func journalOf(results []*checkpointv1.ToolResult, intents []*checkpointv1.ToolIntent) []journalEntry {
	entries := make([]journalEntry, 0, len(results)+len(intents))
	for _, result := range results {
		entries = append(entries, journalEntry{result: result})
	}
	for _, intent := range intents {
		entries = append(entries, journalEntry{intent: intent})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].seq() < entries[j].seq() })
	return entries
}

// JournalChain is checksum v1's tool chain over the journal entries seq 1..upto (all when upto
// is nil), results and intents in seq order; ok is false
// when the journal has a gap (a corrupt entry the server left out), since no chain over it can
// be computed here.
func JournalChain(results []*checkpointv1.ToolResult, intents []*checkpointv1.ToolIntent,
	upto *uint64) (chain checkpointd.ToolChain, ok bool) {
	for _, entry := range journalOf(results, intents) {
		if upto != nil && entry.seq() > *upto {
			break
		}
		if entry.seq() != chain.Len+1 {
			return chain, false
		}
		chain = entry.pushOnto(chain)
	}
	if upto != nil && chain.Len != *upto {
		return chain, false
	}
	return chain, true
}

// JournalledResult is a journalled tool call, decoded.
type JournalledResult struct {
	CallID   string
	ToolName string
	Step     int64
	// ArgumentsDigest is the digest of the call's arguments as journalled; "" when none was sent.
	ArgumentsDigest string
	// Output is the stored output: JSON as the tool returned it (or raw bytes another client
	// stored).
	Output  json.RawMessage
	IsError bool
}

func resultOf(result *checkpointv1.ToolResult) JournalledResult {
	return JournalledResult{CallID: result.GetCallId(), ToolName: result.GetToolName(),
		Step: result.GetStep(), ArgumentsDigest: result.GetArgumentsDigest(), Output: result.GetOutput(),
		IsError: result.GetIsError()}
}

func resultsOf(results []*checkpointv1.ToolResult) []JournalledResult {
	sorted := append([]*checkpointv1.ToolResult(nil), results...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].GetSeq() < sorted[j].GetSeq() })
	out := make([]JournalledResult, 0, len(sorted))
	for _, result := range sorted {
		out = append(out, resultOf(result))
	}
	return out
}

// AgentCheckpoint is a restorable snapshot of an agent run.
type AgentCheckpoint struct {
	CheckpointID string
	RunID        string
	Step         int64
	State        State
	Messages     []Message
	// ToolResults is the run's journalled results in journal order (ignored on save: tools
	// are journalled when they run).
	ToolResults []JournalledResult
	// Timestamp is when the server stored it; zero when unknown.
	Timestamp time.Time
	Checksum  string
	// IsValid is false when the checksum recomputed here does not match what was loaded.
	IsValid  bool
	Metadata map[string]string
	Epoch    uint64
	// PassedOver is what LoadLatest fell back past to reach this checkpoint: the quarantined
	// checkpoints newer than it, newest first (empty when it is the run's newest, and on
	// LoadAtStep and Save).
	PassedOver []checkpointd.PassedOver
	// messages is the wire form of Messages, for the store's message chain.
	wire []*checkpointv1.Message
}

// toCheckpoint decodes a loaded checkpoint and recomputes its checksum; a journal with a gap is
// left to the server's verification, as the other clients do.
func toCheckpoint(message *checkpointv1.Checkpoint, results []*checkpointv1.ToolResult,
	intents []*checkpointv1.ToolIntent) *AgentCheckpoint {
	toolCount := message.GetToolCount()
	_, whole := JournalChain(results, intents, &toolCount)
	valid := true
	// A load from a message offset carries only the log's tail: the chain needs all of it.
	if whole && message.GetMessagesOffset() == 0 {
		_, err := checkpointd.VerifyCheckpoint(message, results, intents, checkpointd.MessageChain{})
		valid = err == nil
	}
	checkpoint := &AgentCheckpoint{
		CheckpointID: message.GetCheckpointId(), RunID: message.GetRunId(), Step: message.GetStep(),
		State: decodeState(message.GetState()), ToolResults: resultsOf(results),
		Checksum: message.GetChecksum(), IsValid: valid, Metadata: map[string]string{},
		Epoch: message.GetEpoch(), wire: message.GetMessages(),
	}
	for key, value := range message.GetMetadata() {
		checkpoint.Metadata[key] = value
	}
	for _, m := range message.GetMessages() {
		checkpoint.Messages = append(checkpoint.Messages, decodeMessage(m.GetRole(), m.GetContent()))
	}
	if stamp := message.GetCreatedAt(); stamp != nil && (stamp.GetSeconds() != 0 || stamp.GetNanos() != 0) {
		checkpoint.Timestamp = stamp.AsTime()
	}
	return checkpoint
}
