// Verifying a loaded checkpoint on the client: recompute checksum v1 from what a load returned
// (the checkpoint, its messages and the run's journal), as checkpoint.proto's "Verifying a
// loaded checkpoint" describes, before anything is restored from it.

package checkpointd

import (
	"fmt"
	"sort"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// MessagesOf returns the chain over messages appended to previous, in order.
func MessagesOf(previous MessageChain, messages []*checkpointv1.Message) MessageChain {
	for _, message := range messages {
		previous = previous.Push(message.GetRole(), message.GetContent())
	}
	return previous
}

// VerifyCheckpoint recomputes the checksum of a loaded checkpoint from the journal the load
// returned with it (every entry, or at least the first tool_count by seq) and returns it, or an
// *[Error] with code DATA_LOSS and reason CHECKPOINT_CORRUPT saying what disagrees. A load from
// a message offset returns only the messages from messages_offset on: pass the chain over the
// messages before it as previous (the zero MessageChain otherwise).
func VerifyCheckpoint(checkpoint *checkpointv1.Checkpoint, results []*checkpointv1.ToolResult,
	intents []*checkpointv1.ToolIntent, previous MessageChain) (string, error) {
	if checkpoint == nil {
		return "", corrupt("the answer holds no checkpoint")
	}
	if checkpoint.GetStep() < 0 {
		return "", corrupt(fmt.Sprintf("the checkpoint's step %d is negative", checkpoint.GetStep()))
	}
	if previous.Len != checkpoint.GetMessagesOffset() {
		return "", corrupt(fmt.Sprintf("the answer's messages start at %d, the chain given covers %d",
			checkpoint.GetMessagesOffset(), previous.Len))
	}
	messages := MessagesOf(previous, checkpoint.GetMessages())
	if messages.Len != checkpoint.GetMessageCount() {
		return "", corrupt(fmt.Sprintf("the answer holds %d messages, the checkpoint covers %d",
			messages.Len, checkpoint.GetMessageCount()))
	}
	tools, err := toolChainUpTo(checkpoint.GetToolCount(), results, intents)
	if err != nil {
		return "", err
	}
	computed := Checksum(CheckpointContent{
		RunID:       checkpoint.GetRunId(),
		Step:        uint64(checkpoint.GetStep()),
		ContentType: checkpoint.GetContentType(),
		State:       checkpoint.GetState(),
		Metadata:    checkpoint.GetMetadata(),
	}, messages, tools)
	if computed != checkpoint.GetChecksum() {
		return computed, corrupt(fmt.Sprintf("run %s step %d: checksum %s stored, %s computed",
			checkpoint.GetRunId(), checkpoint.GetStep(), checkpoint.GetChecksum(), computed))
	}
	return computed, nil
}

// toolChainUpTo is the chain over the journal entries with seq 1..count, results and intents
// merged in seq order.
func toolChainUpTo(count uint64, results []*checkpointv1.ToolResult,
	intents []*checkpointv1.ToolIntent) (ToolChain, error) {
	type entry struct {
		seq  uint64
		push func(ToolChain) ToolChain
	}
	var journal []entry
	for _, result := range results {
		if result.GetSeq() > count || result.GetStep() < 0 {
			continue
		}
		journal = append(journal, entry{result.GetSeq(), func(c ToolChain) ToolChain {
			return c.PushResult(ToolResultEntry{CallID: result.GetCallId(), ToolName: result.GetToolName(),
				Step: uint64(result.GetStep()), Output: result.GetOutput(), IsError: result.GetIsError()})
		}})
	}
	for _, intent := range intents {
		if intent.GetSeq() > count || intent.GetStep() < 0 {
			continue
		}
		journal = append(journal, entry{intent.GetSeq(), func(c ToolChain) ToolChain {
			return c.PushIntent(ToolIntentEntry{CallID: intent.GetCallId(), ToolName: intent.GetToolName(),
				Step: uint64(intent.GetStep())})
		}})
	}
	if uint64(len(journal)) != count {
		return ToolChain{}, corrupt(fmt.Sprintf("the answer holds %d of the %d journal entries the checkpoint covers",
			len(journal), count))
	}
	sort.Slice(journal, func(i, j int) bool { return journal[i].seq < journal[j].seq })
	var chain ToolChain
	for _, e := range journal {
		chain = e.push(chain)
	}
	return chain, nil
}
