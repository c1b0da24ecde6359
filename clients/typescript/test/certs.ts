/**
 * Throwaway certificates for the TLS tests, made with `openssl` as docs/security.md's five-minute
 * path makes them: a private CA, a server certificate for localhost and 127.0.0.1, and a client
 * certificate for mTLS. Without openssl the tests fail: they never pass by skipping.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCerts {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing here: a client trusting only it must fail. */
  otherCaCert: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`the TLS tests need openssl on PATH: openssl ${args.join(" ")} failed: ${String(error)} ${stderr}`);
  }
}

function selfSignedCa(dir: string, name: string): void {
  openssl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${name}`,
    "-keyout", `${name}.key`, "-out", `${name}.pem`]);
}

/** A key and a certificate `name` signed by the CA `ca`, with the given extensions. */
function signed(dir: string, ca: string, name: string, subject: string, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", `${name}.key`, "-out", `${name}.csr`]);
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.pem`, "-CAkey", `${ca}.key`, "-CAcreateserial",
    "-days", "1", "-extfile", `${name}.ext`, "-out", `${name}.pem`]);
}

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), "checkpointd-ts-tls-"));
  try {
    selfSignedCa(dir, "ca");
    selfSignedCa(dir, "other-ca");
    signed(dir, "ca", "server", "/CN=localhost",
      "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    signed(dir, "ca", "client", "/CN=ts-client", "extendedKeyUsage=clientAuth\n");
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const path = (file: string) => join(dir, file);
  return {
    dir,
    caCert: path("ca.pem"),
    serverCert: path("server.pem"),
    serverKey: path("server.key"),
    clientCert: path("client.pem"),
    clientKey: path("client.key"),
    otherCaCert: path("other-ca.pem"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
