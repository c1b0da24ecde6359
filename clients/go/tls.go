// Transport credentials: plaintext, or TLS from files (a CA to trust and, for mTLS, the
// client's certificate and key), checked when dialling so a mistake fails at once.

package checkpointd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// transportCredentials picks the connection's security. useTLS is what the address's scheme
// asked for ("https://"), or false for a bare host:port.
func transportCredentials(s *settings, useTLS bool) (credentials.TransportCredentials, error) {
	switch {
	case s.tls != nil && s.tlsConfig != nil:
		return nil, errors.New("checkpointd: WithTLS and WithTLSConfig exclude each other")
	case s.tlsConfig != nil:
		return credentials.NewTLS(s.tlsConfig), nil
	case s.tls != nil:
		config, err := tlsConfigFromFiles(*s.tls)
		if err != nil {
			return nil, err
		}
		return credentials.NewTLS(config), nil
	case useTLS:
		return credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12}), nil
	default:
		return insecure.NewCredentials(), nil
	}
}

func tlsConfigFromFiles(opts TLSOptions) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: opts.ServerName}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("checkpointd: cannot read the CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("checkpointd: no PEM certificate in the CA file %s", opts.CAFile)
		}
		config.RootCAs = pool
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("checkpointd: CertFile and KeyFile go together (mTLS needs both)")
	}
	if opts.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("checkpointd: cannot load the client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}
