/**
 * The arguments digest of journalled calls (src/digest.ts): canonical JSON with keys in code
 * point order at every depth and no whitespace, hashed with SHA-256; values JSON cannot carry
 * are refused rather than digested.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { argumentsDigest, canonicalArguments } from "../src/index.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

test("canonical JSON sorts keys by code point at every depth, with no whitespace", () => {
  // U+FFFF sorts before U+1F600 by code point, after it by UTF-16 code unit (a surrogate).
  const args = { b: [1, { z: true, a: null }], a: "é", "\u{1F600}": 1, "\uFFFF": 2 };
  assert.equal(canonicalArguments(args), '{"a":"é","b":[1,{"a":null,"z":true}],"\uFFFF":2,"\u{1F600}":1}');
  assert.equal(argumentsDigest(args), sha256('{"a":"é","b":[1,{"a":null,"z":true}],"\uFFFF":2,"\u{1F600}":1}'));
});

test("the digest is of the canonical form: key order and spacing do not change it, a value does", () => {
  assert.equal(argumentsDigest({ to: "ada", body: "hi" }), argumentsDigest({ body: "hi", to: "ada" }));
  assert.notEqual(argumentsDigest({ to: "ada", body: "hi" }), argumentsDigest({ to: "bob", body: "hi" }));
  assert.notEqual(argumentsDigest(["1"]), argumentsDigest([1]));
  assert.match(argumentsDigest([]), /^[0-9a-f]{64}$/);
});

test("scalars are written as JSON.stringify writes them; undefined as JSON.stringify leaves it", () => {
  assert.equal(canonicalArguments([1.5, -0, 1e21, "a\nb", new Date(0)]), '[1.5,0,1e+21,"a\\nb","1970-01-01T00:00:00.000Z"]');
  assert.equal(canonicalArguments({ a: undefined, b: [undefined] }), '{"b":[null]}');
});

test("values JSON cannot carry are refused, not digested", () => {
  assert.throws(() => argumentsDigest([1n]), /\$\[0\] hold a bigint/);
  assert.throws(() => argumentsDigest({ n: Number.NaN }), /\$\.n hold NaN/);
  assert.throws(() => argumentsDigest([() => 1]), /function/);
});
