/**
 * The worker's progress lines on stdout, `event KIND key=value ...`, the same lines the Python
 * worker prints, for operators and for tests that watch a worker process.
 */

/** Writes one `event KIND key=value ...` line. */
export function event(kind: string, fields: Record<string, string | number | bigint | boolean>): void {
  const pairs = Object.entries(fields).map(([key, value]) => `${key}=${String(value)}`);
  process.stdout.write(["event", kind, ...pairs].join(" ") + "\n");
}
