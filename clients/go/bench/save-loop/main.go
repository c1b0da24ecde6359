// Command save-loop is the Go client's turn in `checkpointd-bench --scenarios languages`: Saves
// with a client checksum and LoadLatests verified on the client, each timed, printed as one JSON
// line of microseconds. Every language's save loop takes the same flags and does the same work.
//
//	go build -o save-loop ./bench/save-loop
//	./save-loop --target http://127.0.0.1:50051 --run r1 --state-file state.json \
//	    --iterations 300 --warmup 30 [--floor]
//
// --floor does the same work on a bare generated stub (grpc-go without the client's options):
// what grpc-go itself costs, so the client's own share is the difference.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/saveloop"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "save-loop:", err)
		os.Exit(1)
	}
}

// timings is the JSON line the bench reads: one entry per measured operation, in microseconds.
type timings struct {
	SaveMicros []int64 `json:"save_us"`
	LoadMicros []int64 `json:"load_us"`
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("save-loop", flag.ContinueOnError)
	target := flags.String("target", "", "the server, http://host:port")
	runID := flags.String("run", "", "the run to save")
	stateFile := flags.String("state-file", "", "the state saved at every step")
	iterations := flags.Int("iterations", 0, "measured operations")
	warmup := flags.Int("warmup", 0, "unmeasured operations first")
	floor := flags.Bool("floor", false, "use a bare generated stub instead of the client")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *target == "" || *runID == "" || *stateFile == "" || *iterations <= 0 {
		return errors.New("needs --target, --run, --state-file and --iterations")
	}
	state, err := os.ReadFile(*stateFile)
	if err != nil {
		return err
	}
	checkpoints, closeConn, err := connect(*target, *floor)
	if err != nil {
		return err
	}
	defer closeConn()

	loop := saveloop.New(checkpoints, *runID, state)
	measured := timings{SaveMicros: make([]int64, 0, *iterations), LoadMicros: make([]int64, 0, *iterations)}
	for operation := range *warmup + *iterations {
		start := time.Now()
		if err := loop.Save(ctx); err != nil {
			return err
		}
		saved := time.Now()
		if err := loop.LoadLatest(ctx); err != nil {
			return err
		}
		done := time.Now()
		if operation >= *warmup {
			measured.SaveMicros = append(measured.SaveMicros, saved.Sub(start).Microseconds())
			measured.LoadMicros = append(measured.LoadMicros, done.Sub(saved).Microseconds())
		}
	}
	return json.NewEncoder(stdout).Encode(measured)
}

// connect is the client's CheckpointService, or with floor a bare stub, and how to close it.
func connect(target string, floor bool) (checkpointv1.CheckpointServiceClient, func(), error) {
	if floor {
		stub, conn, err := saveloop.DialBare(strings.TrimPrefix(target, "http://"))
		if err != nil {
			return nil, nil, err
		}
		return stub, func() { _ = conn.Close() }, nil
	}
	client, err := checkpointd.Dial(target)
	if err != nil {
		return nil, nil, err
	}
	return client.Checkpoints, func() { _ = client.Close() }, nil
}
