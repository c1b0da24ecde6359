// Throwaway certificates for the TLS tests, made with openssl as docs/security.md makes them:
// a private CA, a server certificate for localhost and 127.0.0.1, a client certificate for
// mTLS, and a second CA that signed nothing here.

package testserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Certs are the PEM files of one test's certificates.
type Certs struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey, OtherCA string
}

// MakeCerts writes the certificates into a temporary folder removed when the test ends.
func MakeCerts(t testing.TB) Certs {
	t.Helper()
	dir := t.TempDir()
	selfSignedCA(t, dir, "ca")
	selfSignedCA(t, dir, "other-ca")
	signed(t, dir, "server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
	signed(t, dir, "client", "/CN=go-client", "extendedKeyUsage=clientAuth\n")
	path := func(name string) string { return filepath.Join(dir, name) }
	return Certs{CA: path("ca.pem"), ServerCert: path("server.pem"), ServerKey: path("server.key"),
		ClientCert: path("client.pem"), ClientKey: path("client.key"), OtherCA: path("other-ca.pem")}
}

func openssl(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the TLS tests need openssl on PATH: openssl %v: %v: %s", args, err, out)
	}
}

func selfSignedCA(t testing.TB, dir, name string) {
	openssl(t, dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN="+name,
		"-keyout", name+".key", "-out", name+".pem")
}

// signed makes a key and a certificate called name, signed by ca.pem, with the extensions.
func signed(t testing.TB, dir, name, subject, extensions string) {
	if err := os.WriteFile(filepath.Join(dir, name+".ext"), []byte(extensions), 0o600); err != nil {
		t.Fatal(err)
	}
	openssl(t, dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", name+".key", "-out", name+".csr")
	openssl(t, dir, "x509", "-req", "-in", name+".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
		"-days", "1", "-extfile", name+".ext", "-out", name+".pem")
}
