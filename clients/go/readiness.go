// Calls wait for a server that is not up yet, within a bound, instead of failing at once: a
// program started beside `checkpointd serve &`, or a run resurrected while the server
// restarts, would otherwise spend its first calls (and its recovery budget) on "connection
// refused". As the Python and TypeScript clients do: each call on a connection that is not
// ready first waits for it, for at most the connect timeout and never past the call's own
// deadline; a server that does not come up in time fails the call with UNAVAILABLE naming
// the address and the wait, then grpc's reason.

package checkpointd

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// DefaultConnectTimeout is how long a call waits for an unreachable server by default: the
// Python client's CONNECT_TIMEOUT, about as long as the Rust runner retries its first
// connection.
const DefaultConnectTimeout = 5 * time.Second

// WithConnectTimeout sets how long a call waits for the server to become reachable before it
// fails with UNAVAILABLE (default [DefaultConnectTimeout]); the call's own deadline bounds the
// wait too. Zero or less does not wait: a call on a connection that is not ready is sent at
// once and fails as grpc fails it.
func WithConnectTimeout(timeout time.Duration) Option {
	return func(s *settings) { s.connectTimeout = timeout }
}

// reconnectParams replace grpc's default backoff (1 s growing to 120 s), so a waiting call
// notices a fresh server within a fraction of a second, and a restarted one within a few
// seconds (the Python client's reconnect options).
var reconnectParams = grpc.ConnectParams{
	Backoff: backoff.Config{BaseDelay: 200 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2,
		MaxDelay: 2 * time.Second},
	MinConnectTimeout: 2 * time.Second,
}

// readiness waits for a connection to be ready.
type readiness struct {
	address string
	timeout time.Duration
}

// wait returns once cc is ready (false, nil), once the connect timeout passed (true, nil: the
// call is then sent anyway, so grpc's own reason, "connection refused" or a TLS handshake
// error, reaches the caller through unreachable), or with the call's error when its deadline
// or cancellation came first.
func (r readiness) wait(ctx context.Context, cc *grpc.ClientConn) (timedOut bool, err error) {
	state := cc.GetState()
	if state == connectivity.Ready || r.timeout <= 0 {
		return false, nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	started := time.Now()
	for {
		switch state {
		case connectivity.Ready, connectivity.Shutdown: // a closed client: the call says so
			return false, nil
		case connectivity.Idle:
			cc.Connect()
		}
		if !cc.WaitForStateChange(waitCtx, state) {
			if err := ctx.Err(); err != nil {
				return false, FromError(status.Errorf(status.FromContextError(err).Code(),
					"%s not reachable before the call's deadline (waited %s; is checkpointd serving there?)",
					r.address, time.Since(started).Round(time.Millisecond)))
			}
			return true, nil
		}
		state = cc.GetState()
	}
}

// unreachable is the error of a call sent after the wait timed out: an UNAVAILABLE one names
// the address and the wait before grpc's reason.
func (r readiness) unreachable(err error) error {
	var typed *Error
	if !errors.As(err, &typed) || typed.Code != codes.Unavailable {
		return err
	}
	return FromError(status.Errorf(codes.Unavailable, "%s not reachable within %s (is checkpointd serving there?): %s",
		r.address, r.timeout, typed.Message))
}
