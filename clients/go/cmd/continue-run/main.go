// Command continue-run is the Go client's continuation program of the cross-language scenario
// (tests/scenarios/README.md, "continue"): continue-run BASE_URL RUN_ID loads the run's latest
// checkpoint written by another client and verifies it, resumes the run declaring
// CLIENT_CAPABILITY_IN_DOUBT_CALLS and verifies what it restored, journals one tool result and
// saves the next step with a client checksum, then prints one JSON line. The line's passedOver
// is the steps of LoadLatest's passed_over, newest first: corruption another client found stays
// visible to this new process too (DESIGN.md, contract 13).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

const language = "go"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: continue-run BASE_URL RUN_ID")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	line, err := continueRun(ctx, os.Args[1], os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(line)
}

func continueRun(ctx context.Context, baseURL, runID string) (string, error) {
	client, err := checkpointd.Dial(baseURL)
	if err != nil {
		return "", err
	}
	defer client.Close()
	loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: runID})
	if err != nil {
		return "", err
	}
	if _, err := checkpointd.VerifyCheckpoint(loaded.GetCheckpoint(), loaded.GetToolResults(), loaded.GetToolIntents(),
		checkpointd.MessageChain{}); err != nil {
		return "", fmt.Errorf("the loaded checkpoint does not verify: %w", err)
	}
	resumed, err := client.Checkpoints.Resume(ctx, &checkpointv1.ResumeRequest{RunId: runID,
		Capabilities: []checkpointv1.ClientCapability{checkpointv1.ClientCapability_CLIENT_CAPABILITY_IN_DOUBT_CALLS}})
	if err != nil {
		return "", err
	}
	restored := resumed.GetCheckpoint()
	if _, err := checkpointd.VerifyCheckpoint(restored, resumed.GetToolResults(), resumed.GetToolIntents(),
		checkpointd.MessageChain{}); err != nil {
		return "", fmt.Errorf("the resumed checkpoint does not verify: %w", err)
	}
	epoch := resumed.GetEpoch()
	step := resumed.GetRecoveredFromStep() + 1
	output, _ := json.Marshal(map[string]string{"by": language})
	recorded, err := client.Checkpoints.RecordToolResult(ctx, &checkpointv1.RecordToolResultRequest{RunId: runID,
		CallId: fmt.Sprintf("step-%d/continue/0", step), ToolName: "continue", Step: step, Output: output, Epoch: &epoch})
	if err != nil {
		return "", err
	}
	tools, _ := recovery.JournalChain(append(resumed.GetToolResults(), recorded.GetResult()), resumed.GetToolIntents(), nil)

	var state map[string]any
	if err := json.Unmarshal(restored.GetState(), &state); err != nil {
		return "", fmt.Errorf("the restored state is not a JSON object: %w", err)
	}
	counter, _ := state["counter"].(float64)
	state["counter"] = counter + 1
	stateBytes, _ := json.Marshal(state)
	messages := []*checkpointv1.Message{{Role: "assistant", Content: []byte("continued by " + language)}}
	content := checkpointd.CheckpointContent{RunID: runID, Step: uint64(step), ContentType: restored.GetContentType(),
		State: stateBytes, Metadata: restored.GetMetadata()}
	sum := checkpointd.Checksum(content, checkpointd.MessagesOf(checkpointd.MessagesOf(checkpointd.MessageChain{},
		restored.GetMessages()), messages), tools)
	toolCount := tools.Len
	saved, err := client.Checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: runID, Step: step,
		ContentType: content.ContentType, State: stateBytes, Metadata: content.Metadata, Messages: messages,
		MessageOffset: restored.GetMessageCount(), Epoch: &epoch, ToolCount: &toolCount, Checksum: &sum})
	if err != nil {
		return "", err
	}
	passedOver := []int64{}
	for _, skipped := range loaded.GetPassedOver() {
		passedOver = append(passedOver, skipped.GetStep())
	}
	line, err := json.Marshal(map[string]any{"language": language, "loadedStep": loaded.GetCheckpoint().GetStep(),
		"passedOver": passedOver,
		"verified":   true, "recoveredFromStep": resumed.GetRecoveredFromStep(), "inDoubt": len(resumed.GetInDoubt()),
		"savedStep": step, "checksum": saved.GetChecksum()})
	return string(line), err
}
