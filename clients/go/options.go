// Dial options: where the server is, how to reach it (plaintext, TLS, mTLS), the credential
// and tenant every call carries, the default deadline and the message limits.

package checkpointd

import (
	"crypto/tls"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout is the deadline of a unary call whose context sets none.
const DefaultTimeout = 30 * time.Second

// DefaultMaxMessageBytes is the largest message sent and received, 64 MiB each way: above the
// server's 16 MiB --max-request-bytes and unpaged answer defaults, so the server, not the
// client, is the one to refuse (as the TypeScript and Python clients do).
const DefaultMaxMessageBytes = 64 << 20

// Option configures [Dial].
type Option func(*settings)

type settings struct {
	token           string
	tenant          string
	defaultTimeout  time.Duration
	connectTimeout  time.Duration
	maxRecvBytes    int
	maxSendBytes    int
	tls             *TLSOptions
	tlsConfig       *tls.Config
	extraDial       []grpc.DialOption
	unaryIntercept  []grpc.UnaryClientInterceptor
	streamIntercept []grpc.StreamClientInterceptor
}

func defaultSettings() settings {
	return settings{
		defaultTimeout: DefaultTimeout,
		connectTimeout: DefaultConnectTimeout,
		maxRecvBytes:   DefaultMaxMessageBytes,
		maxSendBytes:   DefaultMaxMessageBytes,
	}
}

// TLSOptions are the files of a TLS (or, with a client certificate, mTLS) connection.
type TLSOptions struct {
	// CAFile is a PEM bundle of the CA that signed the server's certificate; the system roots
	// when empty.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate chain and its key, presented to a
	// server that asks for one (serve --tls-client-ca). Both or neither.
	CertFile string
	KeyFile  string
	// ServerName overrides the name checked in the server's certificate (default: the
	// address's host).
	ServerName string
}

// WithToken sends a bearer credential (an API key or a JWT) as "authorization: Bearer <token>"
// on every call that does not set the header itself.
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithTenant sends "x-tenant-id" on every call that does not set it itself. With auth off it
// picks the tenant (default "default"); with auth on, the credential's tenant decides and
// another one is refused with TENANT_MISMATCH.
func WithTenant(tenant string) Option { return func(s *settings) { s.tenant = tenant } }

// WithDefaultTimeout sets the deadline of unary calls whose context has none (default
// [DefaultTimeout]); zero or less means none. Streams (WatchTasks, WatchRun, ValidateTenant)
// run until their context ends.
func WithDefaultTimeout(timeout time.Duration) Option {
	return func(s *settings) { s.defaultTimeout = timeout }
}

// WithMaxMessageBytes sets the largest message received and sent (default
// [DefaultMaxMessageBytes] each).
func WithMaxMessageBytes(receive, send int) Option {
	return func(s *settings) { s.maxRecvBytes, s.maxSendBytes = receive, send }
}

// WithTLS dials with TLS, trusting opts.CAFile (or the system roots) and presenting the client
// certificate if given (mTLS).
func WithTLS(opts TLSOptions) Option { return func(s *settings) { s.tls = &opts } }

// WithTLSConfig dials with TLS as config says, for what [TLSOptions] does not cover.
func WithTLSConfig(config *tls.Config) Option { return func(s *settings) { s.tlsConfig = config } }

// WithDialOptions passes more grpc.DialOptions to grpc.NewClient, after this package's own.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.extraDial = append(s.extraDial, opts...) }
}

// WithInterceptors adds the caller's interceptors, run inside this package's (so they see the
// credential and tenant headers, and the errors before they become *Error).
func WithInterceptors(unary []grpc.UnaryClientInterceptor, stream []grpc.StreamClientInterceptor) Option {
	return func(s *settings) {
		s.unaryIntercept = append(s.unaryIntercept, unary...)
		s.streamIntercept = append(s.streamIntercept, stream...)
	}
}
