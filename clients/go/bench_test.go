// Benchmark: the client's Save and LoadLatest against a real `checkpointd serve`, side by side
// with the same calls on a bare generated stub (grpc-go without the client's headers, default
// deadline and typed errors), each iteration one operation of each in turns, so both see the same
// machine. Each operation is the languages scenario's: a Save of the next step with a 1 KiB JSON
// state and checksum v1, then a LoadLatest verified on the client. It reports both times and
// client/bare as a ratio; `go test` without -bench does not run it.
//
//	CHECKPOINTD_BIN=... go test -run '^$' -bench SaveLoadLatest -benchtime 2000x

package checkpointd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/internal/saveloop"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// benchState is a 1 KiB JSON object, the size every language's save loop saves.
var benchState = []byte(fmt.Sprintf(`{"memory":%q}`, strings.Repeat("x", 1024-len(`{"memory":""}`))))

func BenchmarkSaveLoadLatest(b *testing.B) {
	for _, backend := range testserver.Backends {
		b.Run(string(backend), func(b *testing.B) {
			viaClient, viaBare := clientAndBareLoops(b, testserver.Start(b, testserver.Options{Backend: backend}))
			ctx := b.Context()
			var clientSave, clientLoad, bareSave, bareLoad time.Duration
			measure := func(loop *saveloop.Loop, save, load *time.Duration) {
				saved, loaded := timeOperation(ctx, b, loop)
				*save, *load = *save+saved, *load+loaded
			}
			for iteration := 0; b.Loop(); iteration++ {
				// Each goes first half the time, so neither profits from going second.
				if iteration%2 == 0 {
					measure(viaClient, &clientSave, &clientLoad)
					measure(viaBare, &bareSave, &bareLoad)
				} else {
					measure(viaBare, &bareSave, &bareLoad)
					measure(viaClient, &clientSave, &clientLoad)
				}
			}
			perOp := func(total time.Duration) float64 { return total.Seconds() * 1000 / float64(b.N) }
			b.ReportMetric(perOp(clientSave), "client-save-ms/op")
			b.ReportMetric(perOp(clientLoad), "client-load-ms/op")
			b.ReportMetric(perOp(bareSave), "bare-save-ms/op")
			b.ReportMetric(perOp(bareLoad), "bare-load-ms/op")
			b.ReportMetric(float64(clientSave)/float64(bareSave), "save-client/bare")
			b.ReportMetric(float64(clientLoad)/float64(bareLoad), "load-client/bare")
		})
	}
}

// clientAndBareLoops are save loops on two runs of server, one through the client and one
// through a bare stub, their connections closed when the benchmark ends.
func clientAndBareLoops(b *testing.B, server *testserver.Server) (viaClient, viaBare *saveloop.Loop) {
	client, err := checkpointd.Dial(server.Addr())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	bare, conn, err := saveloop.DialBare(server.Addr())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return saveloop.New(client.Checkpoints, "bench-go-client", benchState),
		saveloop.New(bare, "bench-go-bare", benchState)
}

// timeOperation times one Save and the LoadLatest after it.
func timeOperation(ctx context.Context, b *testing.B, loop *saveloop.Loop) (save, load time.Duration) {
	start := time.Now()
	if err := loop.Save(ctx); err != nil {
		b.Fatal(err)
	}
	saved := time.Now()
	if err := loop.LoadLatest(ctx); err != nil {
		b.Fatal(err)
	}
	return saved.Sub(start), time.Since(saved)
}
