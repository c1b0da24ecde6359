// TLS, mTLS and API keys against a real server: a client trusting the server's CA connects, one
// trusting another CA does not; a server asking for client certificates admits only a client
// that presents one; with --auth api-key a call without the key or with a wrong one is refused
// as CREDENTIAL_INVALID, and the key's tenant decides.

package checkpointd_test

import (
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

// reachesService is true when a call got through to the service: an unknown run answers
// NOT_FOUND, which only the service itself can say.
func reachesService(t *testing.T, client *checkpointd.Client) error {
	t.Helper()
	_, err := client.Checkpoints.GetRun(testContext(t), &checkpointv1.GetRunRequest{RunId: "unknown"})
	if errors.Is(err, checkpointd.ErrRunNotFound) {
		return nil
	}
	if err == nil {
		return errors.New("an unknown run was found")
	}
	return err
}

func TestTLS(t *testing.T) {
	certs := testserver.MakeCerts(t)
	trusting := checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: certs.CA})
	server := testserver.Start(t, testserver.Options{
		Args:         []string{"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey},
		ProbeOptions: []checkpointd.Option{trusting},
	})
	t.Run("AClientTrustingTheServersCAConnects", func(t *testing.T) {
		if err := reachesService(t, dial(t, server.Addr(), trusting)); err != nil {
			t.Fatal(err)
		}
		httpsAddress := fmt.Sprintf("https://localhost:%d", server.Port)
		if err := reachesService(t, dial(t, httpsAddress, trusting)); err != nil {
			t.Fatalf("%s: %v", httpsAddress, err)
		}
	})
	t.Run("AClientTrustingAnotherCAIsRefusedAsUnavailable", func(t *testing.T) {
		err := reachesService(t, dial(t, server.Addr(), checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: certs.OtherCA})))
		if codeOf(t, err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("want UNAVAILABLE naming the certificate, got %v", err)
		}
	})
	t.Run("APlaintextClientDoesNotReachATLSPort", func(t *testing.T) {
		if err := reachesService(t, dial(t, server.Addr(), checkpointd.WithDefaultTimeout(2*time.Second))); err == nil {
			t.Fatal("plaintext reached a TLS port")
		}
	})
}

func TestMutualTLS(t *testing.T) {
	certs := testserver.MakeCerts(t)
	withClientCert := checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: certs.CA,
		CertFile: certs.ClientCert, KeyFile: certs.ClientKey})
	server := testserver.Start(t, testserver.Options{
		Args: []string{"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey,
			"--tls-client-ca", certs.CA},
		ProbeOptions: []checkpointd.Option{withClientCert},
	})
	t.Run("AClientPresentingACertificateSignedByTheClientCAConnects", func(t *testing.T) {
		if err := reachesService(t, dial(t, server.Addr(), withClientCert)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("AClientWithoutACertificateIsRefused", func(t *testing.T) {
		err := reachesService(t, dial(t, server.Addr(), checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: certs.CA})))
		if code := codeOf(t, err); code != codes.Unavailable {
			t.Fatalf("want UNAVAILABLE, got %v", err)
		}
	})
	t.Run("ACertificateWithoutItsKeyIsRefusedAtDial", func(t *testing.T) {
		_, err := checkpointd.Dial(server.Addr(), checkpointd.WithTLS(checkpointd.TLSOptions{CAFile: certs.CA,
			CertFile: certs.ClientCert}))
		if err == nil || !strings.Contains(err.Error(), "go together") {
			t.Fatalf("want a dial error, got %v", err)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	server := testserver.Start(t, testserver.Options{Args: []string{"--auth", "api-key"}})
	key := server.CreateKey(t, "acme", "agent")
	t.Run("ACallWithoutAKeyIsRefusedAsCredentialInvalid", func(t *testing.T) {
		err := reachesService(t, dial(t, server.Addr()))
		if codeOf(t, err) != codes.Unauthenticated || !errors.Is(err, checkpointd.ErrCredentialInvalid) {
			t.Fatalf("want UNAUTHENTICATED, CREDENTIAL_INVALID, got %v", err)
		}
	})
	t.Run("AWrongKeyIsRefusedAsCredentialInvalid", func(t *testing.T) {
		err := reachesService(t, dial(t, server.Addr(), checkpointd.WithToken(key+"x")))
		if !errors.Is(err, checkpointd.ErrCredentialInvalid) {
			t.Fatalf("want CREDENTIAL_INVALID, got %v", err)
		}
	})
	t.Run("TheKeyIsAcceptedAndItsTenantDecides", func(t *testing.T) {
		if err := reachesService(t, dial(t, server.Addr(), checkpointd.WithToken(key), checkpointd.WithTenant("acme"))); err != nil {
			t.Fatal(err)
		}
		err := reachesService(t, dial(t, server.Addr(), checkpointd.WithToken(key), checkpointd.WithTenant("other")))
		if codeOf(t, err) != codes.PermissionDenied || !errors.Is(err, checkpointd.ErrTenantMismatch) {
			t.Fatalf("want PERMISSION_DENIED, TENANT_MISMATCH, got %v", err)
		}
	})
}
