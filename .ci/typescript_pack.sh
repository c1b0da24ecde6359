#!/usr/bin/env bash
# The TypeScript package as a registry would ship it: `npm pack` of clients/typescript (its
# prepack script builds dist/ and dist/cjs/), the tarball installed into a fresh project with
# LangGraph.js, and both entry points (through import and through require) and the worker's bin
# present. .ci/consumer_typescript.sh runs programs from such projects against a server.
# Usage: .ci/typescript_pack.sh
set -euo pipefail
cd "$(dirname "$0")/../clients/typescript"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
npm pack --silent --pack-destination "$WORK" > /dev/null
mkdir "$WORK/app"
(cd "$WORK/app" && npm init -y > /dev/null \
  && npm install --engine-strict --silent --no-audit --no-fund "$WORK"/checkpointd-client-*.tgz \
       @langchain/langgraph@1.7.3 @langchain/core@1.4.0 > /dev/null)
(cd "$WORK/app" && node --input-type=module -e '
  const client = await import("@checkpointd/client");
  const langgraph = await import("@checkpointd/client/langgraph");
  for (const [name, value] of Object.entries({
    createCheckpointClient: client.createCheckpointClient, RecoverableAgent: client.RecoverableAgent,
    Worker: client.Worker, CheckpointdSaver: langgraph.CheckpointdSaver, exactlyOnce: langgraph.exactlyOnce,
  })) if (typeof value !== "function") throw new Error(`the packed package lacks ${name}`);
')
(cd "$WORK/app" && node -e '
  const client = require("@checkpointd/client");
  const langgraph = require("@checkpointd/client/langgraph");
  for (const [name, value] of Object.entries({
    createCheckpointClient: client.createCheckpointClient, RecoverableAgent: client.RecoverableAgent,
    Worker: client.Worker, CheckpointdSaver: langgraph.CheckpointdSaver, exactlyOnce: langgraph.exactlyOnce,
  })) if (typeof value !== "function") throw new Error(`the packed package lacks ${name} through require`);
')
[ -x "$WORK/app/node_modules/.bin/checkpointd-worker" ] \
  || { echo "the packed package does not install the checkpointd-worker bin" >&2; exit 1; }
echo "npm pack: ok (installed from the tarball: both entry points, imported and required, and checkpointd-worker)"
