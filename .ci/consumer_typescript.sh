#!/usr/bin/env bash
# The TypeScript package as its users get it, outside the repository: `npm pack` of
# clients/typescript, then four fresh projects in temporary folders, each installing the tarball
# with LangGraph.js (`npm install --engine-strict`, the versions the package's tests pin) and
# running a program against a live server (save, verified load, a typed refusal, a LangGraph.js
# graph on CheckpointdSaver): (a) CommonJS made by `npm init -y` (require), (b) ES modules
# ("type": "module", import), (c) TypeScript under `module: nodenext`, (d) TypeScript under
# `module: commonjs` with `moduleResolution: node10`, (e) TypeScript under `module: nodenext` in a
# CommonJS project. Each must print its check line; an npm
# warning about engines fails it. The tarball itself must carry no install scripts and source
# maps whose sources it ships. Ends with "N passed, N failed".
#
# Self-contained on a fresh clone: it runs `npm ci` in clients/typescript when its dependencies
# are missing, and npm pack's prepack builds dist/.
# Usage: .ci/consumer_typescript.sh [PATH/TO/checkpointd]   (default $CHECKPOINTD_BIN, then
# target/release/checkpointd). Needs network access to the npm registry for the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=$(realpath "${1:-${CHECKPOINTD_BIN:-target/release/checkpointd}}")
[ -x "$BIN" ] || { echo "no checkpointd binary at $BIN" >&2; exit 1; }
PACKAGE=$REPO/clients/typescript
APPS=$REPO/.ci/consumers/typescript
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
# The pins are exact, so a warm cache is as good as the registry (and keeps this under 3 minutes).
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_prefer_offline=true

# The versions the package's own tests use, read from its package.json so they never drift.
pin() { node -p "const p = require('$PACKAGE/package.json'); '$1@' + (p.devDependencies['$1'] ?? p.dependencies['$1'])"; }
LANGGRAPH=("$(pin @langchain/langgraph)" "$(pin @langchain/langgraph-checkpoint)" "$(pin @langchain/core)")
TYPESCRIPT=("$(pin typescript)" "$(pin @types/node)")

echo "== npm pack of clients/typescript"
if [ ! -x "$PACKAGE/node_modules/.bin/tsc" ]; then
  (cd "$PACKAGE" && npm ci --silent)
fi
(cd "$PACKAGE" && npm pack --silent --pack-destination "$WORK" > "$WORK/pack.out")
TARBALL=$WORK/$(tail -n 1 "$WORK/pack.out")
[ -f "$TARBALL" ] || { cat "$WORK/pack.out"; echo "npm pack made no tarball" >&2; exit 1; }

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok: $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAILED: $1" >&2; }

# The tarball: no install-time scripts, and every source map's sources inside it.
mkdir "$WORK/unpacked"
tar -xzf "$TARBALL" -C "$WORK/unpacked"
if node -e '
  const fs = require("fs"), path = require("path");
  const root = process.argv[1];
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const scripts = Object.keys(manifest.scripts ?? {}).filter((s) => /^(pre|post)?(install|prepare)$/.test(s));
  if (scripts.length > 0) throw new Error(`install scripts in the packed package.json: ${scripts}`);
  let maps = 0;
  const walk = (dir) => { for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(file);
    else if (file.endsWith(".map")) {
      maps++;
      for (const source of JSON.parse(fs.readFileSync(file, "utf8")).sources) {
        if (!fs.existsSync(path.resolve(dir, source))) throw new Error(`${path.relative(root, file)} names ${source}, not in the package`);
      }
    }
  } };
  walk(path.join(root, "dist"));
  if (maps === 0) throw new Error("no source maps in dist/");
  console.log(`${maps} source maps, each naming sources the package ships; no install scripts`);
' "$WORK/unpacked/package"; then pass "tarball"; else fail "tarball"; fi

echo "== server"
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
PORT=$(free_port)
ADMIN_PORT=$(free_port)
"$BIN" serve --listen "127.0.0.1:$PORT" --admin-listen "127.0.0.1:$ADMIN_PORT" \
  --database "sqlite://$WORK/consumers.db" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "http://127.0.0.1:$ADMIN_PORT/healthz" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; echo "checkpointd exited" >&2; exit 1; }
  sleep 0.1
done
export CHECKPOINTD_ADDRESS=127.0.0.1:$PORT

# A fresh project in $WORK/$1: npm init -y, then $2 (a "type" for package.json, or "") and the
# installs; fails on any npm warning about engines.
project() {
  local dir=$WORK/$1 type=$2
  shift 2
  mkdir "$dir"
  (cd "$dir" && npm init -y > /dev/null)
  if [ -n "$type" ]; then (cd "$dir" && npm pkg set type="$type"); fi
  if ! (cd "$dir" && npm install --engine-strict "$TARBALL" "$@" > "$dir/install.log" 2>&1); then
    cat "$dir/install.log" >&2
    return 1
  fi
  if grep -Eiq 'EBADENGINE|unsupported engine' "$dir/install.log"; then
    cat "$dir/install.log" >&2
    echo "npm warned about engines" >&2
    return 1
  fi
  grep -i 'warn' "$dir/install.log" || true
}

# Runs a program in $1 and checks that it printed its check line.
check() {
  local name=$1 dir=$WORK/$2
  shift 2
  local out
  if out=$(cd "$dir" && timeout 60 "$@" 2>&1) && grep -q "^check: $name: .*graph said \"you said: hi\"" <<<"$out"; then
    echo "$out"
    pass "$name"
  else
    echo "$out" >&2
    fail "$name"
  fi
}

echo "== (a) CommonJS project: npm init -y, require()"
if project cjs "" "${LANGGRAPH[@]}"; then
  cp "$APPS/app.cjs" "$WORK/cjs/app.js"
  check commonjs cjs node app.js commonjs
else fail commonjs; fi

echo "== (b) ES module project: \"type\": \"module\", import"
if project esm module "${LANGGRAPH[@]}"; then
  cp "$APPS/app.mjs" "$WORK/esm/app.js"
  check esm esm node app.js esm
else fail esm; fi

# TypeScript: the same source, strict, type-checked against the package's declarations.
typescript_project() {
  local name=$1 type=$2 module=$3 resolution=$4
  if ! project "$name" "$type" "${LANGGRAPH[@]}" "${TYPESCRIPT[@]}"; then fail "$name"; return; fi
  mkdir "$WORK/$name/src"
  cp "$APPS/app.ts" "$WORK/$name/src/app.ts"
  cat > "$WORK/$name/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "target": "ES2022", "lib": ["ES2022"], "module": "$module", "moduleResolution": "$resolution",
    "types": ["node"], "strict": true, "esModuleInterop": true, "skipLibCheck": true,
    "rootDir": "src", "outDir": "build"
  },
  "include": ["src"]
}
JSON
  if ! (cd "$WORK/$name" && npx tsc -p tsconfig.json); then fail "$name (tsc)"; return; fi
  check "$name" "$name" node build/app.js "$name"
}

echo "== (c) TypeScript, module nodenext (an ES module project)"
typescript_project ts-nodenext module nodenext nodenext
echo "== (d) TypeScript, module commonjs, moduleResolution node10"
typescript_project ts-commonjs "" commonjs node10
echo "== (e) TypeScript, module nodenext in a CommonJS project (the require condition's types)"
typescript_project ts-nodenext-cjs "" nodenext nodenext

echo
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
