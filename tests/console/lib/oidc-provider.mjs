// A real OpenID provider for the console's sign-in tests: the certified `oidc-provider`, over
// HTTPS with a certificate signed by a test CA made here with the openssl CLI (nothing is
// downloaded or checked in). Its accounts' claims are the test's to choose; its login and
// consent pages are oidc-provider's development interactions (any password).

import { execFile } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Provider from "oidc-provider";

const run = promisify(execFile);

/** The scope that puts the console's role and tenant claims in the ID token. */
export const CLAIMS_SCOPE = "checkpointd";

/**
 * A test CA and a server certificate it signed for `localhost` and 127.0.0.1, as PEM files in
 * `dir`: { ca, cert, key }.
 */
async function testCertificates(dir) {
  const file = (name) => join(dir, name);
  await run("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
    "-keyout", file("ca.key"), "-out", file("ca.pem"),
    "-subj", "/CN=checkpointd console test CA",
    "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  await run("openssl", [
    "req", "-newkey", "rsa:2048", "-nodes",
    "-keyout", file("idp.key"), "-out", file("idp.csr"), "-subj", "/CN=localhost",
  ]);
  await writeFile(
    file("idp.ext"),
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ].join("\n"),
  );
  await run("openssl", [
    "x509", "-req", "-days", "1", "-in", file("idp.csr"),
    "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial",
    "-extfile", file("idp.ext"), "-out", file("idp.pem"),
  ]);
  return { ca: file("ca.pem"), cert: file("idp.pem"), key: file("idp.key") };
}

/**
 * Starts the provider on a free port of localhost. `client` is the console's registration
 * ({ clientId, clientSecret, redirectUri }); `accounts` maps a login name to the extra claims
 * its ID token carries (e.g. { role: "operator", tenant_id: "acme" }). Resolves to
 * { issuer, caFile, stop() }.
 */
export async function startProvider({ client, accounts }) {
  const dir = await mkdtemp(join(tmpdir(), "checkpointd-oidc-"));
  const files = await testCertificates(dir);
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: "jwk" }), kid: "test-key", use: "sig", alg: "RS256" };
  const server = createServer({
    cert: await readFile(files.cert),
    key: await readFile(files.key),
  });
  await new Promise((listening) => server.listen(0, "127.0.0.1", listening));
  const issuer = `https://localhost:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [client.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    // Every client proves PKCE, as the console always does.
    pkce: { required: () => true },
    scopes: ["openid", CLAIMS_SCOPE],
    claims: { openid: ["sub"], [CLAIMS_SCOPE]: ["role", "tenant_id"] },
    // The console reads role and tenant from the ID token, not from the userinfo endpoint.
    conformIdTokenClaims: false,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    async findAccount(_ctx, accountId) {
      if (!Object.hasOwn(accounts, accountId)) {
        return undefined;
      }
      return {
        accountId,
        claims: async () => ({ sub: accountId, ...accounts[accountId] }),
      };
    },
  });
  // The development login page warns on every start; the test knows.
  provider.on("server_error", (_ctx, error) => console.error("oidc-provider:", error));
  server.on("request", provider.callback());
  return {
    issuer,
    caFile: files.ca,
    async stop() {
      const closed = new Promise((done) => server.close(done));
      server.closeAllConnections();
      await closed;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
