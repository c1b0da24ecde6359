/**
 * The arguments digest of a journalled call (DESIGN contract 14, "a replay must match its
 * call"): a journalled result or intent is reused only for a call with the same id AND the same
 * arguments, so each call sends this digest with its journal writes and compares it with the
 * stored one before replaying.
 *
 * The digest is the lower-case hex SHA-256 of the arguments' canonical JSON:
 * - object keys sorted by Unicode code point (not UTF-16 code unit), recursively;
 * - no whitespace;
 * - scalars as `JSON.stringify` writes them (strings with only the escapes JSON requires, so
 *   non-ASCII text stays as it is; numbers in JavaScript's shortest form);
 * - a value with `toJSON` (a Date) as that; `undefined` object members left out and `undefined`
 *   array items as `null`, as `JSON.stringify` does.
 * Arguments JSON cannot carry (a bigint, a function, a symbol, NaN or an infinity) get no digest
 * (""): the call is journalled without one and its replays are not checked, as Python's package
 * does, rather than digested into something another call could collide with.
 *
 * The same form as the Python and Go packages' (Python: `json.dumps(args, sort_keys=True,
 * separators=(",", ":"), ensure_ascii=False)`), so a run recovered across languages compares
 * digests of the same text; a float with an integral value (`1.0`) is the one thing JavaScript
 * writes differently (`1`).
 */

import { createHash } from "node:crypto";

/**
 * Code point order of two strings (Python's `str` order), not UTF-16 code unit order: the key
 * order of every canonical JSON here (this digest, and the LangGraph metadata codec's).
 */
export function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] as string).codePointAt(0)! - (y[i] as string).codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function canonical(value: unknown, path: string): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (value === undefined) return undefined;
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`arguments at ${path} hold ${value}, which JSON cannot carry`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => canonical(item, `${path}[${i}]`) ?? "null").join(",")}]`;
  }
  if (typeof value === "object") {
    const parts: string[] = [];
    for (const key of Object.keys(value).sort(codePointCompare)) {
      const item = canonical((value as Record<string, unknown>)[key], `${path}.${key}`);
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
    }
    return `{${parts.join(",")}}`;
  }
  throw new TypeError(`arguments at ${path} hold a ${typeof value}, which JSON cannot carry`);
}

/** The canonical JSON of a call's arguments (see the module comment); TypeError when JSON cannot carry them. */
export function canonicalArguments(args: unknown): string {
  return canonical(args, "$") ?? "null";
}

/**
 * Lower-case hex SHA-256 of the arguments' canonical JSON: `arguments_digest` on the wire; ""
 * (no digest) when JSON cannot carry them.
 */
export function argumentsDigest(args: unknown): string {
  let text: string;
  try {
    text = canonicalArguments(args);
  } catch (error) {
    if (error instanceof TypeError) return "";
    throw error;
  }
  return createHash("sha256").update(text, "utf8").digest("hex");
}
