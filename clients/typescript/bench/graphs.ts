/**
 * The real graphs the LangGraph.js benchmark runs on every saver, as clients/python/bench/graphs.py
 * defines them: a short tool-calling graph with a `Send` fan-out, and a one-node chat loop.
 * Deterministic: the fake chat model decides from the messages it is shown and the text comes from
 * seeded generators, so every saver stores the same checkpoints.
 */

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { Annotation, END, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const WORDS = (
  "order shipping status carrier warehouse delivery tracking expected business days regional " +
  "sorting centre customer refund invoice address package label weight dispatch arrival " +
  "delay weather route driver signature receipt return policy support ticket update note " +
  "the a of to and in is it for on with as at by from that this will be can please thanks"
).split(" ");

export const BRANCHES = 3;

/** A seeded generator (FNV-1a of the seed, then mulberry32): the same seed, the same text. */
function seeded(seed: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
  return () => {
    h = (h + 0x6d2b79f5) | 0;
    let t = Math.imul(h ^ (h >>> 15), 1 | h);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Prose-like text from a small vocabulary, compressing about as real chat text does. */
export function text(seed: string | number, words: number): string {
  const next = seeded(String(seed));
  return Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ");
}

/**
 * A fake chat model that always asks for two `lookup` calls, named after the question's order
 * number, so a replay asks for exactly what the first run asked for.
 */
class ToolCallingModel extends BaseChatModel {
  constructor() {
    super({});
  }

  _llmType(): string {
    return "bench-tool-calling";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const order = String(messages.at(-1)?.content).split(" ").at(-1) ?? "";
    const reply = new AIMessage({
      content: `looking up order ${order}`,
      tool_calls: ["status", "carrier"].map((field) => ({
        name: "lookup",
        args: { order, field },
        id: `call-${field}`,
        type: "tool_call" as const,
      })),
    });
    return { generations: [{ message: reply, text: String(reply.content) }] };
  }
}

const ShortState = Annotation.Root({
  ...MessagesAnnotation.spec,
  parts: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
});

const lookup = tool(
  ({ order, field }: { order: string; field: string }) => `order ${order}: ${field} is ` + text(`${order}-${field}`, 12),
  {
    name: "lookup",
    description: "Looks one field of an order up.",
    schema: z.object({ order: z.string(), field: z.string() }),
  },
);

/** model (tool calls) -> ToolNode -> a `Send` fan-out of BRANCHES branches -> end. */
export function shortGraph(checkpointer: BaseCheckpointSaver) {
  const model = new ToolCallingModel().bindTools();

  const agent = async (state: typeof ShortState.State) => ({ messages: [await model.invoke(state.messages)] });

  const fanOut = (state: typeof ShortState.State) => {
    const found = String(state.messages.at(-1)?.content);
    return Array.from({ length: BRANCHES }, (_, part) => new Send("summarise", { part, found }));
  };

  // A `Send`'s node receives the Send's argument, not the graph's state.
  const summarise = (task: typeof ShortState.State) => {
    const { part, found } = task as unknown as { part: number; found: string };
    return { parts: [`part ${part}: ${found.slice(0, 40)}`] };
  };

  return new StateGraph(ShortState)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([lookup]))
    .addNode("summarise", summarise)
    .addEdge(START, "agent")
    .addEdge("agent", "tools")
    .addConditionalEdges("tools", fanOut, ["summarise"])
    .addEdge("summarise", END)
    .compile({ checkpointer });
}

export function shortInput(i: number) {
  return { messages: [new HumanMessage(`where is order ${1000 + i}`)] };
}

/** MessagesAnnotation, one node: each invocation appends the user's message and one answer. */
export function chatGraph(checkpointer: BaseCheckpointSaver) {
  const reply = (state: typeof MessagesAnnotation.State) => {
    const turn = state.messages.length;
    return { messages: [new AIMessage({ content: `[${turn}] ` + text(turn, 90), id: `a-${turn}` })] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", reply)
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}

export function chatInput(i: number) {
  return { messages: [new HumanMessage({ content: `[${i}] ` + text(-i, 25), id: `q-${i}` })] };
}
