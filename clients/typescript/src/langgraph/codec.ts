/**
 * How a LangGraph checkpoint's metadata and pending writes become checkpointd fields
 * (docs/langgraph-mapping.md, "Bytes").
 *
 * - Each top-level metadata entry whose value survives a JSON round trip exactly is stored in
 *   the metadata map as `m.<key>` = canonical JSON, so `list({ filter })` becomes
 *   `ListCheckpoints(metadata_filter=)`. The canonical JSON is Python's
 *   `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True)`, byte for byte, so a
 *   filter written by either language's saver matches the other's entries.
 * - A pending write (and an exactly-once tool result) is a frame: `u32 big-endian length ||
 *   compact JSON header || value bytes`.
 */

import { codePointCompare } from "../digest.js";

/** Metadata map key prefix of LangGraph's own metadata entries. */
export const META_PREFIX = "m.";
/** Metadata key of the message-log chain digest `d_n` at the checkpoint, hex. */
export const LOG_DIGEST_KEY = "lg.log";
/** Largest canonical JSON kept in the metadata map (filterable); bigger values stay in the state. */
export const MAX_FILTER_JSON = 16 * 1024;
const MAX_KEY_BYTES = 256;
export const ENVELOPE_VERSION = 1;

/** A string as Python's JSON encoder writes it with `ensure_ascii`: `\uXXXX` beyond `' '..'~'`. */
function pyString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x08) out += "\\b";
    else if (c === 0x0c) out += "\\f";
    else if (c >= 0x20 && c <= 0x7e) out += text[i];
    else out += `\\u${c.toString(16).padStart(4, "0")}`;
  }
  return out + '"';
}

/**
 * A number as Python writes it: integers without a fraction; other floats in `repr` form (fixed
 * notation for exponents -4..15, else `d.ddde±XX`). JavaScript cannot tell `1.0` from `1`, so an
 * integral value below 2^53 is written as the integer.
 */
function pyNumber(value: number): string {
  if (Number.isSafeInteger(value)) return String(value);
  const [mantissa, exp] = value.toExponential().split("e") as [string, string];
  const exponent = Number(exp);
  if (exponent >= -4 && exponent < 16) {
    const fixed = String(value); // JavaScript writes fixed notation from 1e-6 to 1e21
    return fixed.includes(".") ? fixed : `${fixed}.0`;
  }
  const sign = exponent < 0 ? "-" : "+";
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Canonical JSON of a value made of JSON types only; undefined for anything else. */
function canonical(value: unknown): string | undefined {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return pyString(value);
  if (typeof value === "number") {
    // NaN, infinities and -0 do not come back from JSON as they went in.
    return Number.isFinite(value) && !Object.is(value, -0) ? pyNumber(value) : undefined;
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return undefined;
      const item = canonical(value[i]);
      if (item === undefined) return undefined;
      items.push(item);
    }
    return `[${items.join(",")}]`;
  }
  if (isPlainObject(value)) {
    const parts: string[] = [];
    for (const key of Object.keys(value).sort(codePointCompare)) {
      const item = canonical(value[key]);
      if (item === undefined) return undefined;
      parts.push(`${pyString(key)}:${item}`);
    }
    return `{${parts.join(",")}}`;
  }
  return undefined;
}

/**
 * The canonical JSON of a metadata value, or undefined when JSON cannot carry it faithfully
 * (undefined, a class instance, a bigint, NaN) or it is too big to filter on.
 */
export function canonicalJson(value: unknown): string | undefined {
  const text = canonical(value);
  return text !== undefined && text.length <= MAX_FILTER_JSON ? text : undefined;
}

/** The metadata map key of a LangGraph metadata key; undefined when it cannot be one. */
export function filterKey(key: string): string | undefined {
  const mapped = META_PREFIX + key;
  if (Buffer.byteLength(mapped, "utf8") > MAX_KEY_BYTES) return undefined;
  for (let i = 0; i < mapped.length; i++) {
    const c = mapped.charCodeAt(i);
    if (c < 32 || (c >= 127 && c < 160)) return undefined;
  }
  return mapped;
}

/** The map entry `[m.<key>, json]` of one metadata entry, undefined when it stays in the envelope. */
export function filterable(key: string, value: unknown): [string, string] | undefined {
  const name = filterKey(key);
  const text = name === undefined ? undefined : canonicalJson(value);
  return name === undefined || text === undefined ? undefined : [name, text];
}

/** (filterable map entries, the rest) of LangGraph metadata. */
export function splitMetadata(metadata: Record<string, unknown>): {
  mapped: Record<string, string>;
  rest: Record<string, unknown>;
} {
  const mapped: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (value === undefined) continue;
    const entry = filterable(key, value);
    if (entry === undefined) rest[key] = value;
    else mapped[entry[0]] = entry[1];
  }
  return { mapped, rest };
}

/** LangGraph metadata back from the map entries and the envelope's remainder. */
export function joinMetadata(mapped: Record<string, string>, rest: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, text] of Object.entries(mapped)) {
    if (key.startsWith(META_PREFIX)) out[key.slice(META_PREFIX.length)] = JSON.parse(text);
  }
  return Object.assign(out, rest);
}

/** The part of a `list({ filter })` the server can apply exactly; the client re-checks all. */
export function serverFilter(filter: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(filter)) {
    const entry = filterable(key, value);
    if (entry !== undefined) out[entry[0]] = entry[1];
  }
  return out;
}

/** `u32 big-endian length || header || payload`. */
export function frame(header: string, payload: Uint8Array): Uint8Array {
  const head = Buffer.from(header, "utf8");
  const out = new Uint8Array(4 + head.length + payload.length);
  new DataView(out.buffer).setUint32(0, head.length);
  out.set(head, 4);
  out.set(payload, 4 + head.length);
  return out;
}

/** The journal output of one pending write; its header keys in the mapping's order. */
export function encodeWrite(taskId: string, taskPath: string, idx: number, type: string, value: Uint8Array): Uint8Array {
  return frame(JSON.stringify({ task: taskId, path: taskPath, idx, type }), value);
}

/** The journal output of an exactly-once tool result. */
export function encodeToolResult(type: string, value: Uint8Array): Uint8Array {
  return frame(JSON.stringify({ v: 1, type }), value);
}

/** One pending write as read back from the journal. */
export interface Write {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array;
  seq: bigint;
}

/** The write a journal entry holds; undefined for an entry this saver did not write. */
export function decodeWrite(output: Uint8Array, channel: string, seq: bigint): Write | undefined {
  if (output.length < 4) return undefined;
  const size = new DataView(output.buffer, output.byteOffset, output.byteLength).getUint32(0);
  const end = 4 + size;
  if (end > output.length) return undefined;
  try {
    const header = JSON.parse(Buffer.from(output.subarray(4, end)).toString("utf8")) as Record<string, unknown>;
    if (typeof header["task"] !== "string" || typeof header["idx"] !== "number" || typeof header["type"] !== "string") {
      return undefined;
    }
    return {
      taskId: header["task"],
      taskPath: typeof header["path"] === "string" ? header["path"] : "",
      idx: header["idx"],
      channel,
      type: header["type"],
      value: output.slice(end),
      seq,
    };
  } catch {
    return undefined;
  }
}
