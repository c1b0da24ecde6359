// Package saveloop is the work every language's save loop does per operation in
// `checkpointd-bench --scenarios languages` (crates/bench/src/languages.rs): a Save of the next
// step of one run with a fixed state and checksum v1 computed on the client, then a LoadLatest
// that must return that step with a checksum the client verifies. bench/save-loop (the Go
// contender) and BenchmarkSaveLoadLatest share it, so both measure the same calls.
package saveloop

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// ContentType is the state's content type in every language's save loop.
const ContentType = "application/json"

// Loop saves successive steps of one run, starting at step 1.
type Loop struct {
	checkpoints checkpointv1.CheckpointServiceClient
	runID       string
	state       []byte
	saved       uint64
}

// New is a loop over checkpoints: the client's (client.Checkpoints) or a bare generated stub.
func New(checkpoints checkpointv1.CheckpointServiceClient, runID string, state []byte) *Loop {
	return &Loop{checkpoints: checkpoints, runID: runID, state: state}
}

// Save saves the step after the last one saved, with its checksum v1.
func (l *Loop) Save(ctx context.Context) error {
	step := l.saved + 1
	sum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: l.runID, Step: step,
		ContentType: ContentType, State: l.state}, checkpointd.MessageChain{}, checkpointd.ToolChain{})
	if _, err := l.checkpoints.Save(ctx, &checkpointv1.SaveRequest{RunId: l.runID, Step: int64(step),
		ContentType: ContentType, State: l.state, Checksum: &sum}); err != nil {
		return fmt.Errorf("save %s step %d: %w", l.runID, step, err)
	}
	l.saved = step
	return nil
}

// LoadLatest loads the run's latest checkpoint and fails unless it is the step Save last
// wrote and its checksum verifies on the client.
func (l *Loop) LoadLatest(ctx context.Context) error {
	loaded, err := l.checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: l.runID})
	if err != nil {
		return fmt.Errorf("load latest of %s: %w", l.runID, err)
	}
	checkpoint := loaded.GetCheckpoint()
	if checkpoint.GetStep() != int64(l.saved) {
		return fmt.Errorf("load latest of %s: step %d, not the %d just saved", l.runID, checkpoint.GetStep(), l.saved)
	}
	if _, err := checkpointd.VerifyCheckpoint(checkpoint, loaded.GetToolResults(), loaded.GetToolIntents(),
		checkpointd.MessageChain{}); err != nil {
		return fmt.Errorf("load latest of %s: %w", l.runID, err)
	}
	return nil
}

// DialBare is a generated CheckpointService stub on a plaintext connection to address
// (host:port) with none of the client's options: what grpc-go costs before the client adds its
// headers, default deadline and typed errors. Close the connection when done.
func DialBare(address string) (checkpointv1.CheckpointServiceClient, *grpc.ClientConn, error) {
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", address, err)
	}
	return checkpointv1.NewCheckpointServiceClient(conn), conn, nil
}
