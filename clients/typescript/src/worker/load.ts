/**
 * Loads the agent a worker runs from `MODULE[:EXPORT]`, the TypeScript form of the Python
 * worker's `module:attribute`: MODULE is a file path (relative to the working directory) or a
 * package name, EXPORT a dotted path inside it (`default` when omitted). It names a step
 * function `(ctx) => ...`, or an object with a `step(ctx)` method and, optionally,
 * `initialState(task)`.
 */

import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** What the worker drives: the step function and the optional initial-state function. */
export interface LoadedAgent<Step, Initial> {
  step: Step;
  initialState: Initial | undefined;
}

/** Splits `MODULE[:EXPORT]`; a colon followed by something not an export path belongs to MODULE. */
export function parseAgentSpec(spec: string): { module: string; exportPath: string[] } {
  const match = /^(.*):([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$/.exec(spec);
  const module = match?.[1] ?? spec;
  if (module === "") throw new Error(`checkpointd-worker: expected MODULE[:EXPORT], got ${JSON.stringify(spec)}`);
  return { module, exportPath: (match?.[2] ?? "default").split(".") };
}

/** The URL `import()` takes for MODULE: a file path as a file URL, a package name as it is. */
function importTarget(module: string): string {
  const isPath = module.startsWith(".") || isAbsolute(module) || /\.[cm]?[jt]s$/.test(module);
  return isPath ? pathToFileURL(resolve(module)).href : module;
}

/** Imports the module `spec` names and picks the agent out of it; throws naming what is wrong. */
export async function loadAgent<Step extends (...args: never[]) => unknown, Initial extends (...args: never[]) => unknown>(
  spec: string,
): Promise<LoadedAgent<Step, Initial>> {
  const { module, exportPath } = parseAgentSpec(spec);
  let target: unknown;
  try {
    target = await import(importTarget(module));
  } catch (error) {
    throw new Error(`checkpointd-worker: cannot import the agent module ${module}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  for (const part of exportPath) {
    if (target === null || (typeof target !== "object" && typeof target !== "function") || !(part in target)) {
      throw new Error(`checkpointd-worker: ${module} has no export ${exportPath.join(".")} (from ${spec})`);
    }
    target = (target as Record<string, unknown>)[part];
  }
  const holder = target as { step?: unknown; initialState?: unknown } | null;
  if (holder !== null && typeof holder === "object" && typeof holder.step === "function") {
    const initial = holder.initialState;
    return {
      step: holder.step.bind(holder) as Step,
      initialState: typeof initial === "function" ? (initial.bind(holder) as Initial) : undefined,
    };
  }
  if (typeof target !== "function") {
    throw new Error(`checkpointd-worker: ${spec} is neither a step function nor an object with a step method`);
  }
  return { step: target as Step, initialState: undefined };
}
