/**
 * Durations for the worker's flags: `500ms`, `30s`, `2m`, `1h` or plain seconds, read into
 * milliseconds, and milliseconds written as the protobuf Duration the queue's RPCs take.
 */

const UNITS: ReadonlyArray<[suffix: string, ms: number]> = [["ms", 1], ["s", 1_000], ["m", 60_000], ["h", 3_600_000]];

/** Milliseconds from `500ms`, `30s`, `2m`, `1h` or a plain number of seconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  for (const [suffix, scale] of UNITS) {
    if (trimmed.endsWith(suffix) && /^\d+(\.\d+)?$/.test(trimmed.slice(0, -suffix.length))) {
      return Number(trimmed.slice(0, -suffix.length)) * scale;
    }
  }
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1_000;
  throw new Error(`not a duration: ${JSON.stringify(text)} (expected e.g. 500ms, 30s, 2m, 1h or seconds)`);
}

/** A protobuf Duration (`google.protobuf.Duration` init shape) of `ms` milliseconds. */
export function protoDuration(ms: number): { seconds: bigint; nanos: number } {
  const whole = Math.floor(ms / 1_000);
  return { seconds: BigInt(whole), nanos: Math.round((ms - whole * 1_000) * 1_000_000) };
}
