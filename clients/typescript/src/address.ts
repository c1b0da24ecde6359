/**
 * The server address a client option takes, parsed once: `http://host:port`, `https://host:port`,
 * or `host:port` as the Python client takes it (plaintext, or TLS when TLS options are given).
 * Without this a bare `host:port` reached Node's URL parser and failed as a bare
 * `TypeError: Invalid URL` that named neither the option nor what it expects.
 */

/** What every refusal says the option takes. */
const EXPECTED = "a server address such as http://127.0.0.1:50051, https://host:50443 or 127.0.0.1:50051";

/**
 * The base URL for `address` (`option` names it in errors, e.g. `baseUrl` or `--server`): a
 * scheme-less `host:port` gets `https://` when `tls` is set, `http://` otherwise. Throws a
 * TypeError naming the option for anything that is not a server address.
 */
export function resolveBaseUrl(address: unknown, tls: boolean, option = "baseUrl"): string {
  const refuse = (why: string): never => {
    throw new TypeError(`checkpointd client: ${option} must be ${EXPECTED}; got ${JSON.stringify(address)} (${why})`);
  };
  if (typeof address !== "string" || address === "") return refuse("not a non-empty string");
  if (/\s/.test(address)) return refuse("it holds whitespace");
  // A scheme is whatever precedes "://"; without one, "localhost:50051" would parse as a URL
  // whose scheme is "localhost:", so the check is on "://", not on what URL makes of it.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(address)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
    return refuse(`the scheme ${scheme}:// is neither http:// nor https://`);
  }
  const candidate = scheme === undefined ? `${tls ? "https" : "http"}://${address}` : address;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return refuse("not a URL");
  }
  if (url.hostname === "") refuse("no host");
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    refuse("credentials, a query or a fragment have no place in it");
  }
  return candidate;
}
