/**
 * When to checkpoint: every step, every N steps, or hybrid, with `afterTools`/`beforeLlm`.
 * Written as the Rust runner's `--strategy`: `every_step`, `every_n:N` (`every_n` is N=3),
 * `hybrid[:N]` (every N steps plus after tools), then any of `,after_tools` and `,before_llm`.
 */

export interface StrategyOptions {
  /** Save after every `everyN`-th step; 1 is every step. */
  everyN?: number;
  /** Also save after a step that executed a tool (not one replayed from the journal). */
  afterTools?: boolean;
  /** Also save the state a step starts from, right before its first LLM call. */
  beforeLlm?: boolean;
}

export class Strategy {
  readonly everyN: number;
  readonly afterTools: boolean;
  readonly beforeLlm: boolean;

  constructor(options: StrategyOptions = {}) {
    this.everyN = options.everyN ?? 3;
    this.afterTools = options.afterTools ?? false;
    this.beforeLlm = options.beforeLlm ?? false;
    if (!Number.isSafeInteger(this.everyN) || this.everyN < 1) {
      throw new RangeError(`checkpoint interval must be a positive integer, got ${this.everyN}`);
    }
  }

  /** Whether the state after `step` is checkpointed. */
  savesAfter(step: number, executedTools: boolean): boolean {
    return step % this.everyN === 0 || (this.afterTools && executedTools);
  }

  static parse(text: string): Strategy {
    const [base = "", ...modifiers] = text.split(",").map((part) => part.trim());
    const colon = base.indexOf(":");
    const name = colon < 0 ? base : base.slice(0, colon);
    const argument = colon < 0 ? "" : base.slice(colon + 1);
    const interval = (): number => {
      if (argument === "") return 3;
      if (!/^\d+$/.test(argument) || Number(argument) < 1) {
        throw new RangeError(`checkpoint interval must be a positive integer, got ${JSON.stringify(argument)}`);
      }
      return Number(argument);
    };
    let everyN: number;
    let afterTools: boolean;
    if (name === "every_step" && colon < 0) [everyN, afterTools] = [1, false];
    else if (name === "every_n") [everyN, afterTools] = [interval(), false];
    else if (name === "hybrid") [everyN, afterTools] = [interval(), true];
    else throw new RangeError(`unknown checkpoint strategy ${JSON.stringify(base)}: use every_step, every_n:N or hybrid:N`);
    let beforeLlm = false;
    for (const modifier of modifiers) {
      if (modifier === "after_tools") afterTools = true;
      else if (modifier === "before_llm") beforeLlm = true;
      else throw new RangeError(`unknown strategy modifier ${JSON.stringify(modifier)}`);
    }
    return new Strategy({ everyN, afterTools, beforeLlm });
  }

  toString(): string {
    let text = this.everyN === 1 ? "every_step" : `every_n:${this.everyN}`;
    if (this.afterTools) text += ",after_tools";
    if (this.beforeLlm) text += ",before_llm";
    return text;
  }
}
