// Benchmarks: the adapter against ADK's own database session service (gorm on Postgres), on
// the same Postgres (checkpointd serves from a schema of it, gorm writes another), measured
// side by side in one loop, each iteration one call of each, so both see the same machine.
// Each reports both times and checkpointd/database as a ratio (below 1: the adapter is faster).
//
//	CHECKPOINTD_BIN=... go test -run '^$' -bench . -benchtime 200x

package adk

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/checkpointd/checkpointd/clients/go/internal/testserver"
)

// benchServices are the adapter on a checkpointd serving from Postgres and ADK's database
// service on a fresh schema of the same Postgres.
func benchServices(b *testing.B) (adapter, baseline session.Service) {
	server := testserver.Start(b, testserver.Options{Backend: testserver.Postgres})
	baseline, err := database.NewSessionService(postgres.Open(freshGormSchema(b)),
		&gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		b.Fatal(err)
	}
	if err := database.AutoMigrate(baseline); err != nil {
		b.Fatal(err)
	}
	return newService(b, server), baseline
}

// freshGormSchema makes a schema in $TEST_DATABASE_URL for the baseline, dropped at the end.
func freshGormSchema(b *testing.B) string {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test"
	}
	name := fmt.Sprintf("adk_bench_%d_%d", os.Getpid(), time.Now().UnixNano())
	psql := func(sql string) {
		if out, err := exec.Command("psql", base, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql).CombinedOutput(); err != nil {
			b.Fatalf("the benchmark needs psql and the Postgres at %s: %v: %s", base, err, out)
		}
	}
	psql("CREATE SCHEMA " + name)
	b.Cleanup(func() { psql("DROP SCHEMA IF EXISTS " + name + " CASCADE") })
	separator := "?"
	if strings.Contains(base, "?") {
		separator = "&"
	}
	return base + separator + "search_path=" + name
}

// benchEvent is a model turn of about 300 bytes of text with a state change in the scope given
// by prefix ("" for the session's own, "user:" for the user's).
func benchEvent(i int, prefix string) *session.Event {
	return textEvent(fmt.Sprintf("bench-%d", i), strings.Repeat("the agent answers ", 16), time.Now(),
		map[string]any{prefix + "turn": float64(i)})
}

// sideBySide times one call of each per iteration and reports both and their ratio.
func sideBySide(b *testing.B, adapterCall, baselineCall func(i int) error) {
	var adapterTime, baselineTime time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := adapterCall(i); err != nil {
			b.Fatal(err)
		}
		adapterTime += time.Since(start)
		start = time.Now()
		if err := baselineCall(i); err != nil {
			b.Fatal(err)
		}
		baselineTime += time.Since(start)
	}
	b.StopTimer()
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perOp(adapterTime), "checkpointd-ms/op")
	b.ReportMetric(perOp(baselineTime), "database-ms/op")
	b.ReportMetric(float64(adapterTime)/float64(baselineTime), "ratio")
	b.ReportMetric(0, "ns/op") // the loop's total time mixes both: not a figure of either
}

func createBoth(b *testing.B, adapter, baseline session.Service) (session.Session, session.Session) {
	ctx := context.Background()
	request := &session.CreateRequest{AppName: "bench", UserID: "u", State: map[string]any{"k": "v"}}
	a, err := adapter.Create(ctx, request)
	if err != nil {
		b.Fatal(err)
	}
	d, err := baseline.Create(ctx, request)
	if err != nil {
		b.Fatal(err)
	}
	return a.Session, d.Session
}

func BenchmarkAppendEvent(b *testing.B) {
	for _, scope := range []struct{ name, prefix string }{{"session_state", ""}, {"user_state", "user:"}} {
		b.Run(scope.name, func(b *testing.B) {
			adapter, baseline := benchServices(b)
			a, d := createBoth(b, adapter, baseline)
			ctx := context.Background()
			sideBySide(b,
				func(i int) error { return adapter.AppendEvent(ctx, a, benchEvent(i, scope.prefix)) },
				func(i int) error { return baseline.AppendEvent(ctx, d, benchEvent(i, scope.prefix)) })
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, events := range []int{10, 100} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			adapter, baseline := benchServices(b)
			a, d := createBoth(b, adapter, baseline)
			ctx := context.Background()
			for i := range events {
				if err := adapter.AppendEvent(ctx, a, benchEvent(i, "")); err != nil {
					b.Fatal(err)
				}
				if err := baseline.AppendEvent(ctx, d, benchEvent(i, "")); err != nil {
					b.Fatal(err)
				}
			}
			get := func(service session.Service, s session.Session) func(int) error {
				return func(int) error {
					got, err := service.Get(ctx, &session.GetRequest{AppName: "bench", UserID: "u", SessionID: s.ID()})
					if err == nil && got.Session.Events().Len() != events {
						err = fmt.Errorf("Get returned %d events, want %d", got.Session.Events().Len(), events)
					}
					return err
				}
			}
			sideBySide(b, get(adapter, a), get(baseline, d))
		})
	}
}
