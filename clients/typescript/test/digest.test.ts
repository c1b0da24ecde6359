/**
 * The arguments digest of journalled calls (src/digest.ts): canonical JSON with keys in code
 * point order at every depth and no whitespace, hashed with SHA-256, equal to Python's digest of
 * the same arguments; arguments JSON cannot carry get no digest.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { argumentsDigest, canonicalArguments } from "../src/index.js";

const PYTHON_DIGEST = "9dd33fe71bb110d17e9c91b8a6749c1476eb85e85fb49719476d89e3be580cb3";
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

test("arguments JSON cannot carry get no digest: the call is journalled unchecked, as in Python", () => {
  assert.throws(() => canonicalArguments([1n]), /\$\[0\] hold a bigint/);
  assert.throws(() => canonicalArguments({ n: Number.NaN }), /\$\.n hold NaN/);
  assert.equal(argumentsDigest([1n]), "");
  assert.equal(argumentsDigest([() => 1]), "");
  assert.equal(argumentsDigest({ n: Number.POSITIVE_INFINITY }), "");
});

test("the digest of Python's canonical form: the same text hashes alike in both packages", () => {
  // python3 -c 'import hashlib,json; print(hashlib.sha256(json.dumps(["ops@example.com", {"b": 1, "a": "é"}],
  //   sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest())'
  assert.equal(argumentsDigest(["ops@example.com", { b: 1, a: "é" }]), PYTHON_DIGEST);
});
