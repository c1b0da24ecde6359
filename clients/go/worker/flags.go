// The worker's command-line flags, named as `checkpointd worker` and the TypeScript
// `checkpointd-worker` name them, and Main, which makes a worker program of an agent in one
// line (examples/worker); a program that wants more binds the flags itself and calls Run.
package worker

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

// Flags are the parsed values of the worker's flags: the connection, the recovery policy's
// text forms, and the worker's own Options, bound in place.
type Flags struct {
	Server, Tenant, Token     string
	CAFile, CertFile, KeyFile string

	Strategy         string
	MaxResurrections int
	Cooldown         time.Duration
	FatalPatterns    patternList

	Worker Options
}

// patternList collects a repeated --fatal-pattern.
type patternList []string

func (p *patternList) String() string { return strings.Join(*p, ",") }
func (p *patternList) Set(value string) error {
	*p = append(*p, value)
	return nil
}

// BindFlags defines the worker's flags on set, with the defaults of the other workers.
func BindFlags(set *flag.FlagSet) *Flags {
	f := &Flags{}
	set.StringVar(&f.Server, "server", "http://127.0.0.1:50051", "the server: host:port, http://host:port or https://host:port")
	set.StringVar(&f.Tenant, "tenant", "", "the tenant (x-tenant-id) when the server runs without --auth")
	set.StringVar(&f.Token, "token", "", "an API key (bearer token)")
	set.StringVar(&f.CAFile, "ca", "", "PEM CA that signed the server's certificate (TLS)")
	set.StringVar(&f.CertFile, "cert", "", "PEM client certificate (mTLS)")
	set.StringVar(&f.KeyFile, "key", "", "PEM client key (mTLS)")
	set.StringVar(&f.Worker.WorkerID, "worker-id", "", "this worker's name in the queue (host-pid)")
	set.IntVar(&f.Worker.Concurrency, "concurrency", DefaultConcurrency, "tasks run at once")
	set.DurationVar(&f.Worker.Lease, "lease", DefaultLease, "lease per claim; heartbeats every third of it")
	set.DurationVar(&f.Worker.PollInterval, "poll-interval", DefaultPollInterval, "pause between claims while the queue is empty")
	set.IntVar(&f.Worker.ExitAfter, "exit-after", 0, "stop once this many tasks ended here (0: until SIGTERM)")
	set.DurationVar(&f.Worker.DrainDeadline, "drain-deadline", DefaultDrainDeadline, "on shutdown, how long a running step may still run")
	set.StringVar(&f.Strategy, "strategy", recovery.DefaultStrategy.String(), "every_step, every_n:N or hybrid:N, then ,after_tools and ,before_llm")
	set.IntVar(&f.MaxResurrections, "max-resurrections", recovery.DefaultMaxResurrections, "in-process resurrections per task attempt")
	set.DurationVar(&f.Cooldown, "cooldown", recovery.DefaultCooldown, "pause before each resurrection")
	set.Var(&f.FatalPatterns, "fatal-pattern", "a message fragment that makes an error fatal (repeatable; adds to the defaults)")
	return f
}

// Dial connects as the flags say: TLS when --ca, --cert or --key is given (or an https:// server).
func (f *Flags) Dial() (*checkpointd.Client, error) {
	var options []checkpointd.Option
	if f.Token != "" {
		options = append(options, checkpointd.WithToken(f.Token))
	}
	if f.Tenant != "" {
		options = append(options, checkpointd.WithTenant(f.Tenant))
	}
	if f.CAFile != "" || f.CertFile != "" || f.KeyFile != "" {
		options = append(options, checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: f.CAFile, CertFile: f.CertFile, KeyFile: f.KeyFile}))
	}
	return checkpointd.Dial(f.Server, options...)
}

// Options are the worker's Options the flags say, the policy's options first (so any in
// f.Worker.Recovery, set by the program, win).
func (f *Flags) Options() (Options, error) {
	strategy, err := recovery.ParseStrategy(f.Strategy)
	if err != nil {
		return Options{}, err
	}
	var classifier recovery.Classifier
	if len(f.FatalPatterns) > 0 {
		classifier.FatalPatterns = append(append([]string(nil), recovery.DefaultFatalPatterns...), f.FatalPatterns...)
	}
	options := f.Worker
	options.Recovery = append([]recovery.Option{recovery.WithStrategy(strategy), recovery.WithMaxResurrections(f.MaxResurrections),
		recovery.WithCooldown(f.Cooldown), recovery.WithClassifier(classifier)}, options.Recovery...)
	return options, nil
}

// Main is a worker program's whole main: the flags from the command line, Dial, and Run until
// SIGTERM or Ctrl-C, which drain (running steps finish, runs are checkpointed, tasks released).
// It exits 1 with the reason on bad flags or an unreachable setup, 0 after the drain.
func Main(agent recovery.AgentFunc) {
	flags := BindFlags(flag.CommandLine)
	flag.Parse()
	options, err := flags.Options()
	if err != nil {
		log.Fatal(err)
	}
	client, err := flags.Dial()
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if _, err := Run(ctx, client, agent, options); err != nil {
		log.Fatal(err)
	}
}
