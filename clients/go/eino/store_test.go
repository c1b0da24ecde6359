// The store's contract against a real checkpointd on SQLite and Postgres: what Eino relies on
// (a missing id is "not found", Set then Get, the newest Set wins, Delete), and what the
// mapping adds (checksum v1 on every save, tenants apart, ids of any length).

package eino_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/eino"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// The store is what Eino's options take.
var (
	_ compose.CheckPointStore = (*eino.Store)(nil)
	_ adk.CheckPointDeleter   = (*eino.Store)(nil)
)

func TestStoreContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, server *testserver.Server) {
		ctx := testContext(t)
		client := dial(t, server)
		log := &recordedLog{}

		t.Run("get of an unknown id is not found, not an error", func(t *testing.T) {
			data, found, err := newStore(client, log).Get(ctx, "never-set")
			if err != nil || found || data != nil {
				t.Fatalf("Get = %q, %v, %v; want nil, false, nil", data, found, err)
			}
		})

		t.Run("set then get returns the bytes, also to a new store", func(t *testing.T) {
			writer := newStore(client, log)
			if err := writer.Set(ctx, "roundtrip", []byte(`{"a":1}`)); err != nil {
				t.Fatal(err)
			}
			for name, store := range map[string]*eino.Store{"writer": writer, "new store": newStore(client, log)} {
				data, found, err := store.Get(ctx, "roundtrip")
				if err != nil || !found || string(data) != `{"a":1}` {
					t.Fatalf("%s: Get = %q, %v, %v", name, data, found, err)
				}
			}
		})

		t.Run("the newest set wins, whichever store wrote last", func(t *testing.T) {
			first, second := newStore(client, log), newStore(client, log)
			for i, write := range []struct {
				store *eino.Store
				data  string
			}{{first, "v1"}, {second, "v2"}, {first, "v3"}} { // first's cached head is stale at v3
				if err := write.store.Set(ctx, "overwrite", []byte(write.data)); err != nil {
					t.Fatalf("set %d: %v", i, err)
				}
				data, found, err := second.Get(ctx, "overwrite")
				if err != nil || !found || string(data) != write.data {
					t.Fatalf("after set %d: Get = %q, %v, %v; want %s", i, data, found, err, write.data)
				}
			}
		})

		t.Run("concurrent writers of one id all land, each at its own step", func(t *testing.T) {
			const writers = 8
			errs := make(chan error, writers)
			for i := range writers {
				store := newStore(client, log) // a store per writer: each starts from the server's head
				go func() { errs <- store.Set(ctx, "concurrent", []byte(fmt.Sprint("writer ", i))) }()
			}
			for range writers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			head, err := client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: eino.RunID("concurrent")})
			if err != nil {
				t.Fatal(err)
			}
			if head.GetRun().GetCheckpointCount() != writers || head.GetRun().GetLatestStep() != writers {
				t.Fatalf("run head %v; want %d checkpoints up to step %d", head.GetRun(), writers, writers)
			}
			if data, _, err := newStore(client, log).Get(ctx, "concurrent"); err != nil || !strings.HasPrefix(string(data), "writer ") {
				t.Fatalf("Get = %q, %v", data, err)
			}
		})

		t.Run("delete removes the checkpoints and a missing id deletes fine", func(t *testing.T) {
			store := newStore(client, log)
			for _, data := range []string{"one", "two"} {
				if err := store.Set(ctx, "deleted", []byte(data)); err != nil {
					t.Fatal(err)
				}
			}
			if err := store.Delete(ctx, "deleted"); err != nil {
				t.Fatal(err)
			}
			if _, found, err := store.Get(ctx, "deleted"); err != nil || found {
				t.Fatalf("Get after Delete = found %v, %v", found, err)
			}
			_, err := client.Checkpoints.GetRun(ctx, &checkpointv1.GetRunRequest{RunId: eino.RunID("deleted")})
			if !errors.Is(err, checkpointd.ErrRunNotFound) {
				t.Fatalf("the run is still there: %v", err)
			}
			if err := store.Delete(ctx, "deleted"); err != nil {
				t.Fatalf("second Delete: %v", err)
			}
			if err := store.Set(ctx, "deleted", []byte("again")); err != nil {
				t.Fatalf("Set after Delete: %v", err)
			}
			if data, _, err := store.Get(ctx, "deleted"); err != nil || string(data) != "again" {
				t.Fatalf("Get after a new Set = %q, %v", data, err)
			}
		})

		t.Run("every save carries checksum v1 over the bytes and the id", func(t *testing.T) {
			state := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
			if err := newStore(client, log).Set(ctx, "checksummed", state); err != nil {
				t.Fatal(err)
			}
			loaded, err := client.Checkpoints.LoadLatest(ctx, &checkpointv1.LoadLatestRequest{RunId: eino.RunID("checksummed")})
			if err != nil {
				t.Fatal(err)
			}
			checkpoint := loaded.GetCheckpoint()
			computed, err := checkpointd.VerifyCheckpoint(checkpoint, loaded.GetToolResults(), loaded.GetToolIntents(), checkpointd.MessageChain{})
			if err != nil {
				t.Fatal(err)
			}
			if computed != checkpoint.GetChecksum() || checkpoint.GetContentType() != eino.ContentType ||
				checkpoint.GetMetadata()[eino.MetadataCheckpointID] != "checksummed" || !bytes.Equal(checkpoint.GetState(), state) {
				t.Fatalf("stored checkpoint: %v", checkpoint)
			}
		})

		t.Run("a tenant never sees another tenant's id", func(t *testing.T) {
			acme := newStore(dial(t, server, checkpointd.WithTenant("acme")), log)
			globex := newStore(dial(t, server, checkpointd.WithTenant("globex")), log)
			if err := acme.Set(ctx, "shared-id", []byte("acme's")); err != nil {
				t.Fatal(err)
			}
			if _, found, err := globex.Get(ctx, "shared-id"); err != nil || found {
				t.Fatalf("globex Get = found %v, %v", found, err)
			}
			if err := globex.Delete(ctx, "shared-id"); err != nil {
				t.Fatal(err)
			}
			if data, _, err := acme.Get(ctx, "shared-id"); err != nil || string(data) != "acme's" {
				t.Fatalf("acme Get after globex's Delete = %q, %v", data, err)
			}
		})

		t.Run("ids of any length and alphabet stay apart", func(t *testing.T) {
			store := newStore(client, log)
			ids := []string{"a/b c", "a%2Fb%20c", strings.Repeat("long", 100), strings.Repeat("long", 100) + "!", "日本"}
			for _, id := range ids {
				if err := store.Set(ctx, id, []byte("for "+id)); err != nil {
					t.Fatalf("Set %q: %v", id, err)
				}
			}
			for _, id := range ids {
				if data, _, err := store.Get(ctx, id); err != nil || string(data) != "for "+id {
					t.Fatalf("Get %q = %q, %v", id, data, err)
				}
			}
		})
	})
}

func TestRunIDIsPrefixedPercentEncodedAndHashedWhenLong(t *testing.T) {
	for id, want := range map[string]string{
		"thread-1":   "eino:thread-1",
		"a/b c!":     "eino:a%2Fb%20c%21",
		"日":          "eino:%E6%97%A5",
		"~._-AZaz09": "eino:~._-AZaz09",
	} {
		if got := eino.RunID(id); got != want {
			t.Errorf("RunID(%q) = %q, want %q", id, got, want)
		}
	}
	long := strings.Repeat("x", 252)
	if got := eino.RunID(long[:251]); got != "eino:"+long[:251] {
		t.Errorf("a 256-byte run id was hashed: %q", got)
	}
	if got := eino.RunID(long); !strings.HasPrefix(got, "eino:!") || len(got) != len("eino:!")+64 {
		t.Errorf("a 257-byte run id was not hashed: %q", got)
	}
}
