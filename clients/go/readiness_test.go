// A client started before its server waits for it (within the connect timeout) instead of
// failing on "connection refused"; with no server at all, the call fails after the wait with
// UNAVAILABLE naming the address.

package checkpointd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

func TestFirstCallWaitsForAServerStartedTwoSecondsLater(t *testing.T) {
	port := testserver.FreePort(t)
	client, err := checkpointd.Dial(fmtAddr(port))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	answered := make(chan error, 1)
	started := time.Now()
	go func() {
		_, err := client.Checkpoints.Save(context.Background(), &checkpointv1.SaveRequest{RunId: "early",
			Step: 1, ContentType: "application/json", State: []byte(`{}`)})
		answered <- err
	}()
	time.Sleep(2 * time.Second) // the scenario: the server comes up after the client's call
	testserver.Start(t, testserver.Options{Port: port})
	if err := <-answered; err != nil {
		t.Fatalf("the call made before the server started failed after %s: %v", time.Since(started), err)
	}
}

func TestNoServerFailsAfterTheConnectTimeoutNamingTheAddress(t *testing.T) {
	addr := fmtAddr(testserver.FreePort(t))
	client, err := checkpointd.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	started := time.Now()
	_, err = client.Checkpoints.GetRun(context.Background(), &checkpointv1.GetRunRequest{RunId: "r"})
	waited := time.Since(started)
	var typed *checkpointd.Error
	if !errors.As(err, &typed) || typed.Code != codes.Unavailable || !strings.Contains(typed.Message, addr) ||
		!strings.Contains(typed.Message, "not reachable within 5s") {
		t.Fatalf("want UNAVAILABLE naming %s and the wait, got %v", addr, err)
	}
	if waited < checkpointd.DefaultConnectTimeout || waited > checkpointd.DefaultConnectTimeout+2*time.Second {
		t.Fatalf("gave up after %s, want about %s", waited, checkpointd.DefaultConnectTimeout)
	}
}

func TestTheCallsDeadlineBoundsTheWait(t *testing.T) {
	addr := fmtAddr(testserver.FreePort(t))
	client, err := checkpointd.Dial(addr, checkpointd.WithConnectTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err = client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: "r"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("want DEADLINE_EXCEEDED naming %s, got %v", addr, err)
	}
	if waited := time.Since(started); waited > 2*time.Second {
		t.Fatalf("waited %s past a 300 ms deadline", waited)
	}
}

func fmtAddr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
