// Client: one gRPC connection to checkpointd and a typed client for each of its services, so
// every RPC in proto/ is one method call away, with the dial options applied to all of them.

package checkpointd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// Client holds one connection and the service clients over it. Every method takes a
// context.Context (its deadline is the call's; unary calls without one get the default
// timeout) and returns refusals as *Error. Safe for concurrent use.
type Client struct {
	// Checkpoints: Save, LoadLatest, LoadAtStep, Validate, Resume, the tool journal, runs,
	// retention, pins and the ValidateTenant stream.
	Checkpoints checkpointv1.CheckpointServiceClient
	// Tasks: the durable queue (Enqueue, Claim, Heartbeat, Complete, Fail, approvals, ...).
	Tasks checkpointv1.TaskServiceClient
	// Notifications: webhook endpoints and deliveries, and the WatchTasks and WatchRun streams.
	Notifications checkpointv1.NotificationServiceClient

	conn *grpc.ClientConn
}

// Dial makes a client for the server at address: "host:port" (plaintext unless a TLS option
// is given), "http://host:port" (plaintext) or "https://host:port" (TLS; the system roots
// unless WithTLS names a CA). Like grpc.NewClient, it does not wait for the connection: the
// first call makes it, waiting up to the connect timeout (WithConnectTimeout, 5 s by
// default) for a server that is not up yet.
func Dial(address string, opts ...Option) (*Client, error) {
	s := defaultSettings()
	for _, opt := range opts {
		opt(&s)
	}
	target, useTLS, err := parseAddress(address)
	if err != nil {
		return nil, err
	}
	if !useTLS && strings.HasPrefix(address, "http://") && (s.tls != nil || s.tlsConfig != nil) {
		return nil, fmt.Errorf("checkpointd: TLS options need an https:// address or host:port, not %s", address)
	}
	creds, err := transportCredentials(&s, useTLS)
	if err != nil {
		return nil, err
	}
	headers := newCallHeaders(s.token, s.tenant)
	ready := readiness{address: address, timeout: s.connectTimeout}
	dialOptions := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(reconnectParams),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(s.maxRecvBytes), grpc.MaxCallSendMsgSize(s.maxSendBytes)),
		grpc.WithChainUnaryInterceptor(append([]grpc.UnaryClientInterceptor{
			unaryInterceptor(headers, s.defaultTimeout, ready)}, s.unaryIntercept...)...),
		grpc.WithChainStreamInterceptor(append([]grpc.StreamClientInterceptor{
			streamInterceptor(headers, ready)}, s.streamIntercept...)...),
	}
	conn, err := grpc.NewClient(target, append(dialOptions, s.extraDial...)...)
	if err != nil {
		return nil, fmt.Errorf("checkpointd: dial %s: %w", address, err)
	}
	return &Client{
		Checkpoints:   checkpointv1.NewCheckpointServiceClient(conn),
		Tasks:         checkpointv1.NewTaskServiceClient(conn),
		Notifications: checkpointv1.NewNotificationServiceClient(conn),
		conn:          conn,
	}, nil
}

// Conn is the underlying connection, e.g. for the gRPC health service.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection; calls under way fail with CANCELLED.
func (c *Client) Close() error { return c.conn.Close() }

// parseAddress strips an http:// or https:// scheme into a gRPC target and whether TLS was
// asked for; any other address is a gRPC target as it is (host:port, dns:///..., unix:...).
func parseAddress(address string) (target string, useTLS bool, err error) {
	target = address
	switch {
	case strings.HasPrefix(address, "https://"):
		target, useTLS = strings.TrimPrefix(address, "https://"), true
	case strings.HasPrefix(address, "http://"):
		target = strings.TrimPrefix(address, "http://")
	default:
		if address == "" {
			return "", false, errors.New("checkpointd: empty address: want host:port or https://host:port")
		}
		return address, false, nil
	}
	target = strings.TrimSuffix(target, "/")
	if target == "" || strings.Contains(target, "/") {
		return "", false, fmt.Errorf("checkpointd: bad address %q: want http(s)://host:port with no path", address)
	}
	return target, useTLS, nil
}

// streamError keeps io.EOF, the end of a stream, as it is.
func streamError(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return FromError(err)
}
