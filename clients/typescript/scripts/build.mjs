// Builds the package twice from src/: ES modules into dist/ and CommonJS into dist/cjs/, each
// with its declarations and source maps (into src/, which the package ships), so `import` and
// `require` both work for every entry point (package.json `exports`).
//
// Why a package.json in src/ for the CommonJS pass: under `module: NodeNext` TypeScript picks a
// file's output format from the package.json nearest to the *source*, and emits CommonJS that
// keeps `import()` as it is. `module: CommonJS` would turn `import()` into `require()`, and the
// worker's agent loader (worker/load.ts) must import ES module agents from the CommonJS build
// too. The marker lives only for that pass (tshy builds dual packages the same way).
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const marker = join(root, "src", "package.json");
const commonjs = '{\n  "type": "commonjs"\n}\n';

function compile(project) {
  execFileSync(process.execPath, [tsc, "-p", join(root, project)], { stdio: "inherit" });
}

rmSync(join(root, "dist"), { recursive: true, force: true });
rmSync(marker, { force: true }); // a pass killed half-way must not turn the ES build CommonJS
compile("tsconfig.json");
writeFileSync(marker, commonjs);
try {
  compile("tsconfig.cjs.json");
} finally {
  rmSync(marker, { force: true });
}
writeFileSync(join(root, "dist", "cjs", "package.json"), commonjs);
