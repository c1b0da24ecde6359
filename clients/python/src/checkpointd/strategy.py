"""When to checkpoint: every step, every N steps, or hybrid, with `after_tools`/`before_llm`.

Written as the Rust runner's `--strategy`: `every_step`, `every_n:N` (`every_n` is N=3),
`hybrid[:N]` (every N steps plus after tools), then any of `,after_tools` and `,before_llm`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strategy:
    #: Save after every `every_n`-th step; 1 is every step.
    every_n: int = 3
    #: Also save after a step that executed a tool (not one replayed from the journal).
    after_tools: bool = False
    #: Also save the state a step starts from, right before its first LLM call.
    before_llm: bool = False

    def __post_init__(self) -> None:
        if self.every_n < 1:
            raise ValueError(f"checkpoint interval must be a positive integer, got {self.every_n}")

    def saves_after(self, step: int, executed_tools: bool) -> bool:
        """Whether the state after `step` is checkpointed."""
        return step % self.every_n == 0 or (self.after_tools and executed_tools)

    @classmethod
    def parse(cls, text: str) -> Strategy:
        base, *modifiers = [part.strip() for part in text.split(",")]
        name, _, argument = base.partition(":")

        def interval() -> int:
            if not argument:
                return 3
            if not argument.isdigit() or int(argument) < 1:
                raise ValueError(f"checkpoint interval must be a positive integer, got {argument!r}")
            return int(argument)

        if name == "every_step" and not argument:
            every_n, after_tools = 1, False
        elif name == "every_n":
            every_n, after_tools = interval(), False
        elif name == "hybrid":
            every_n, after_tools = interval(), True
        else:
            raise ValueError(f"unknown checkpoint strategy {base!r}: use every_step, every_n:N or hybrid:N")
        before_llm = False
        for modifier in modifiers:
            if modifier == "after_tools":
                after_tools = True
            elif modifier == "before_llm":
                before_llm = True
            else:
                raise ValueError(f"unknown strategy modifier {modifier!r}")
        return cls(every_n=every_n, after_tools=after_tools, before_llm=before_llm)

    def __str__(self) -> str:
        text = "every_step" if self.every_n == 1 else f"every_n:{self.every_n}"
        if self.after_tools:
            text += ",after_tools"
        if self.before_llm:
            text += ",before_llm"
        return text
