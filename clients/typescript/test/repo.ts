/** Paths in the repository that the tests read: the shared test vectors. */

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root: the nearest folder above this file that holds tests/vectors/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "tests", "vectors", "checksum_v1.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("tests/vectors/checksum_v1.json not found above the tests");
    dir = parent;
  }
  return dir;
}

/**
 * A vector file from tests/vectors/. Integers of 16 digits or more come back as strings:
 * JSON.parse would round them to a double (2^63 - 1 is a vector's step) before a test could
 * turn them into a bigint.
 */
export function readVectors<T>(name: string): T {
  const text = readFileSync(join(repoRoot(), "tests", "vectors", name), "utf8");
  return JSON.parse(text.replace(/(:\s*)(\d{16,})(?=\s*[,}\]])/g, '$1"$2"')) as T;
}
