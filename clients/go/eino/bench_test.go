// What the store costs over the bare RPCs it makes, measured side by side in one run against one
// server: Set against a Save of the same bytes with a checksum, Get against a LoadLatest
// verified on the client. Alternating the two in each iteration lets drift in the machine's
// load fall on both alike; the ratios are the result, not the absolute times.

package eino_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func BenchmarkStoreOverBareRPCs(b *testing.B) {
	for _, backend := range testserver.Backends {
		b.Run(string(backend), func(b *testing.B) {
			server := testserver.Start(b, testserver.Options{Backend: backend})
			client, err := checkpointd.Dial(server.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			ctx := b.Context()
			store := eino.New(client)
			state := bytes.Repeat([]byte(`{"k":"v"},`), 80) // about Eino's size for a small graph
			var setTime, saveTime, getTime, loadTime time.Duration
			set := func(int64) {
				if err := store.Set(ctx, "bench", state); err != nil {
					b.Fatal(err)
				}
			}
			save := func(step int64) { bareSave(b, client, "bench-bare", step, state) }
			get := func(int64) {
				if _, found, err := store.Get(ctx, "bench"); err != nil || !found {
					b.Fatal(found, err)
				}
			}
			load := func(int64) { bareLoad(b, client, "bench-bare") }
			for step := int64(1); b.Loop(); step++ {
				// Each pair runs in both orders, half the time each, so neither profits from
				// going second (a warm connection, a page the other just touched).
				if step%2 == 0 {
					saveTime += timed(save, step)
					setTime += timed(set, step)
					loadTime += timed(load, step)
					getTime += timed(get, step)
				} else {
					setTime += timed(set, step)
					saveTime += timed(save, step)
					getTime += timed(get, step)
					loadTime += timed(load, step)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(setTime.Microseconds())/n, "set-µs/op")
			b.ReportMetric(float64(saveTime.Microseconds())/n, "save-µs/op")
			b.ReportMetric(float64(getTime.Microseconds())/n, "get-µs/op")
			b.ReportMetric(float64(loadTime.Microseconds())/n, "load-µs/op")
			b.ReportMetric(float64(setTime)/float64(saveTime), "set/save")
			b.ReportMetric(float64(getTime)/float64(loadTime), "get/load")
			fmt.Printf("%s: Set/Save %.2fx, Get/LoadLatest %.2fx over %d iterations\n", backend,
				float64(setTime)/float64(saveTime), float64(getTime)/float64(loadTime), b.N)
		})
	}
}

// timed is how long call(step) took.
func timed(call func(int64), step int64) time.Duration {
	start := time.Now()
	call(step)
	return time.Since(start)
}

// bareSave is one Save with checksum v1 of the same content as the store's (its metadata
// included), what a caller of the core client would send.
func bareSave(b *testing.B, client *checkpointd.Client, runID string, step int64, state []byte) {
	metadata := map[string]string{eino.MetadataCheckpointID: "bench", eino.MetadataVersion: "1"}
	checksum := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: runID, Step: uint64(step),
		ContentType: eino.ContentType, State: state, Metadata: metadata}, checkpointd.MessageChain{}, checkpointd.ToolChain{})
	noJournal := uint64(0)
	if _, err := client.Checkpoints.Save(b.Context(), &checkpointv1.SaveRequest{RunId: runID, Step: step,
		ContentType: eino.ContentType, State: state, Metadata: metadata, Checksum: &checksum,
		ToolCount: &noJournal}); err != nil {
		b.Fatal(err)
	}
}

// bareLoad is one LoadLatest verified on the client.
func bareLoad(b *testing.B, client *checkpointd.Client, runID string) {
	answer, err := client.Checkpoints.LoadLatest(b.Context(), &checkpointv1.LoadLatestRequest{RunId: runID,
		Journal: checkpointv1.JournalScope_JOURNAL_SCOPE_NONE})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := checkpointd.VerifyCheckpoint(answer.GetCheckpoint(), nil, nil, checkpointd.MessageChain{}); err != nil {
		b.Fatal(err)
	}
}
