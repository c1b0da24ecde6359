// A session past the server's 16 MiB answer limit still opens: a Get of the last events reads
// only them (message_offset), a Get of the whole session comes back in pages, and appending
// goes on; with the checkpoint where a window starts deleted, the window is cut from the whole
// log instead.

package adk

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// largeEvents of a MiB each make a session of 18 MiB, over the server's default 16 MiB.
const largeEvents = 18

func largeText(i int) string { return fmt.Sprintf("event %d ", i) + strings.Repeat("x", 1<<20) }

func TestSessionOver16MiBOpensWholeAndByWindow(t *testing.T) {
	eachBackend(t, func(t *testing.T, server *testserver.Server) {
		ctx := context.Background()
		var received atomic.Int64 // bytes of every answer, to show what a Get reads
		counting := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
			invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if message, ok := reply.(proto.Message); ok {
				received.Add(int64(proto.Size(message)))
			}
			return err
		}
		client := dial(t, server, freshTenant(), checkpointd.WithInterceptors(
			[]grpc.UnaryClientInterceptor{counting}, nil))
		s := New(client)
		created := mustCreate(t, s, "big", "u", "s")
		base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
		for i := range largeEvents {
			event := textEvent(fmt.Sprintf("e%d", i), largeText(i), base.Add(time.Duration(i)*time.Second), nil)
			if err := s.AppendEvent(ctx, created, event); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		get := func(req *session.GetRequest) []*session.Event {
			t.Helper()
			req.AppName, req.UserID, req.SessionID = "big", "u", "s"
			got, err := New(client).Get(ctx, req)
			if err != nil {
				t.Fatalf("get %+v: %v", req, err)
			}
			var events []*session.Event
			for event := range got.Session.Events().All() {
				events = append(events, event)
			}
			return events
		}
		expect := func(events []*session.Event, first int) {
			t.Helper()
			if want := largeEvents - first; len(events) != want {
				t.Fatalf("%d events, want %d", len(events), want)
			}
			for i, event := range events {
				if event.ID != fmt.Sprintf("e%d", first+i) || event.Content.Parts[0].Text != largeText(first+i) {
					t.Fatalf("event %d is %s, want e%d intact", i, event.ID, first+i)
				}
			}
		}
		received.Store(0)
		expect(get(&session.GetRequest{NumRecentEvents: 1}), largeEvents-1)
		if read := received.Load(); read > 2<<20 {
			t.Fatalf("a Get of the last event read %d bytes: more than that event", read)
		}
		expect(get(&session.GetRequest{After: base.Add(15 * time.Second)}), 15)
		expect(get(&session.GetRequest{After: base.Add(10 * time.Second), NumRecentEvents: 2}), largeEvents-2)
		expect(get(&session.GetRequest{}), 0)

		// The step whose log ends where the last event starts is gone: the window is cut from
		// the whole log, read in pages.
		epoch := uint64(1)
		if _, err := client.Checkpoints.DeleteCheckpoints(ctx, &checkpointv1.DeleteCheckpointsRequest{
			RunId: "adk/s/big/u/s", Steps: []int64{largeEvents - 1}, Epoch: &epoch}); err != nil {
			t.Fatal(err)
		}
		expect(get(&session.GetRequest{NumRecentEvents: 1}), largeEvents-1)

		latest := mustGet(t, s, "big", "u", "s")
		if err := s.AppendEvent(ctx, latest, textEvent("more", "small", time.Now(), nil)); err != nil {
			t.Fatalf("append past 16 MiB: %v", err)
		}
		if events := get(&session.GetRequest{NumRecentEvents: 2}); len(events) != 2 || events[1].ID != "more" {
			t.Fatalf("after one more append: %d events", len(events))
		}
	})
}
