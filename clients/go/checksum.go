// Checksum v1 and idempotency key v1: SHA-256 over the length-prefixed byte framing that
// proto/checkpoint/v1/checkpoint.proto documents, so this client computes exactly what the
// server verifies. Checked against tests/vectors/checksum_v1.json.

package checkpointd

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
)

// checksumDomainTag opens every checkpoint's framing.
const checksumDomainTag = "checkpointd.checksum.v1"

// idempotencyDomainTag opens every idempotency key's framing.
const idempotencyDomainTag = "checkpointd.idempotency.v1"

// intentLeafTag opens an intent leaf's preimage. A result leaf opens with the high byte of its
// call id's big-endian length, which is 0 for any real length, so the two kinds never collide.
const intentLeafTag = 0x01

// framer writes the v1 framing into a SHA-256 hash.
type framer struct{ hash hash.Hash }

func newFramer() *framer { return &framer{hash: sha256.New()} }

// u64 writes x as 8 bytes big-endian.
func (f *framer) u64(x uint64) *framer {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], x)
	f.hash.Write(buf[:])
	return f
}

// lp writes the length as a big-endian u64, then the bytes.
func (f *framer) lp(b []byte) *framer {
	f.u64(uint64(len(b)))
	f.hash.Write(b)
	return f
}

func (f *framer) lpString(s string) *framer { return f.lp([]byte(s)) }

func (f *framer) raw(b []byte) *framer {
	f.hash.Write(b)
	return f
}

func (f *framer) sum() [32]byte {
	var out [32]byte
	f.hash.Sum(out[:0])
	return out
}

func chainDigest(previous, leaf [32]byte) [32]byte {
	return newFramer().raw(previous[:]).raw(leaf[:]).sum()
}

// MessageChain is the running digest of a run's message log:
// d_i = H(d_(i-1) || H(lp(role) || lp(content))). The zero value is the empty log.
// It is a value: Push returns a new chain, so a caller can keep the chain of its last save.
type MessageChain struct {
	// Len is how many messages the chain covers.
	Len uint64
	// Head is d_Len, 32 raw bytes.
	Head [32]byte
}

// Push returns the chain with one more message.
func (c MessageChain) Push(role string, content []byte) MessageChain {
	leaf := newFramer().lpString(role).lp(content).sum()
	return MessageChain{Len: c.Len + 1, Head: chainDigest(c.Head, leaf)}
}

// Hex is the head as lower-case hex.
func (c MessageChain) Hex() string { return hex.EncodeToString(c.Head[:]) }

// ToolResultEntry is one journalled tool result, as the tool chain frames it.
type ToolResultEntry struct {
	CallID   string
	ToolName string
	Step     uint64
	Output   []byte
	IsError  bool
}

// ToolIntentEntry is one journalled tool intent, as the tool chain frames it.
type ToolIntentEntry struct {
	CallID   string
	ToolName string
	Step     uint64
}

// ToolChain is the running digest of a run's tool journal in journal order (seq), over results
// and intents alike. The zero value is the empty journal; like [MessageChain] it is a value.
type ToolChain struct {
	// Len is how many journal entries the chain covers.
	Len uint64
	// Head is t_Len, 32 raw bytes.
	Head [32]byte
}

// PushResult returns the chain with one more tool result.
func (c ToolChain) PushResult(entry ToolResultEntry) ToolChain {
	isError := byte(0)
	if entry.IsError {
		isError = 1
	}
	leaf := newFramer().lpString(entry.CallID).lpString(entry.ToolName).u64(entry.Step).
		lp(entry.Output).raw([]byte{isError}).sum()
	return ToolChain{Len: c.Len + 1, Head: chainDigest(c.Head, leaf)}
}

// PushIntent returns the chain with one more tool intent.
func (c ToolChain) PushIntent(entry ToolIntentEntry) ToolChain {
	leaf := newFramer().raw([]byte{intentLeafTag}).lpString(entry.CallID).
		lpString(entry.ToolName).u64(entry.Step).sum()
	return ToolChain{Len: c.Len + 1, Head: chainDigest(c.Head, leaf)}
}

// Hex is the head as lower-case hex.
func (c ToolChain) Hex() string { return hex.EncodeToString(c.Head[:]) }

// CheckpointContent is what checksum v1 covers besides the two chains.
type CheckpointContent struct {
	RunID       string
	Step        uint64
	ContentType string
	State       []byte
	// Metadata's order does not matter: keys are framed in ascending order of their UTF-8
	// bytes, which is Go's own string order.
	Metadata map[string]string
}

// Checksum is checksum v1 of a checkpoint, as lower-case hex. messages and tools are the
// chains as they stand once the checkpoint is saved: the whole message log including the
// checkpoint's new messages, and the journal entries the checkpoint covers.
func Checksum(content CheckpointContent, messages MessageChain, tools ToolChain) string {
	f := newFramer().lpString(checksumDomainTag).lpString(content.RunID).u64(content.Step).
		lpString(content.ContentType).lp(content.State).u64(uint64(len(content.Metadata)))
	for _, key := range sortedKeys(content.Metadata) {
		f.lpString(key).lpString(content.Metadata[key])
	}
	f.u64(messages.Len).raw(messages.Head[:]).u64(tools.Len).raw(tools.Head[:])
	sum := f.sum()
	return hex.EncodeToString(sum[:])
}

// sortedKeys orders keys by their UTF-8 bytes compared as unsigned bytes (Go compares strings
// that way; spelt out so that nobody "fixes" it into a locale or UTF-16 order).
func sortedKeys(metadata map[string]string) []string {
	keys := make([]string, 0, len(metadata))
	for key := range metadata {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare([]byte(keys[i]), []byte(keys[j])) < 0 })
	return keys
}

// IdempotencyKey is idempotency key v1 of a tool call, lower-case hex: what a side-effecting
// tool receives so that a retry of the same call never repeats its effect.
func IdempotencyKey(tenant, runID, callID string) string {
	sum := newFramer().lpString(idempotencyDomainTag).lpString(tenant).lpString(runID).
		lpString(callID).sum()
	return hex.EncodeToString(sum[:])
}
