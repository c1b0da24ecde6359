// When to checkpoint: every step, every N steps, or hybrid, with after-tools and before-LLM
// saves, written as the Rust runner's --strategy: every_step, every_n:N (every_n is N=3),
// hybrid[:N] (every N steps plus after tools), then any of ",after_tools" and ",before_llm".
package recovery

import (
	"fmt"
	"strconv"
	"strings"
)

// Strategy says after which steps the state is checkpointed.
type Strategy struct {
	// EveryN saves after every EveryN-th step; 1 is every step.
	EveryN int
	// AfterTools also saves after a step that executed a tool (not one replayed from the journal).
	AfterTools bool
	// BeforeLLM also saves the state a step starts from, right before its first LLM call.
	BeforeLLM bool
}

// DefaultStrategy saves every 3 steps.
var DefaultStrategy = Strategy{EveryN: 3}

// SavesAfter says whether the state after step is checkpointed.
func (s Strategy) SavesAfter(step int64, executedTools bool) bool {
	return step%int64(s.EveryN) == 0 || (s.AfterTools && executedTools)
}

// ParseStrategy reads the text form.
func ParseStrategy(text string) (Strategy, error) {
	parts := strings.Split(text, ",")
	base := strings.TrimSpace(parts[0])
	name, argument, hasArgument := strings.Cut(base, ":")
	interval := func() (int, error) {
		if argument == "" {
			return 3, nil
		}
		n, err := strconv.Atoi(argument)
		if err != nil || n < 1 || strings.TrimLeft(argument, "0123456789") != "" {
			return 0, fmt.Errorf("checkpoint interval must be a positive integer, got %q", argument)
		}
		return n, nil
	}
	var strategy Strategy
	var err error
	switch {
	case name == "every_step" && !hasArgument:
		strategy.EveryN = 1
	case name == "every_n":
		strategy.EveryN, err = interval()
	case name == "hybrid":
		strategy.EveryN, err = interval()
		strategy.AfterTools = true
	default:
		return Strategy{}, fmt.Errorf("unknown checkpoint strategy %q: use every_step, every_n:N or hybrid:N", base)
	}
	if err != nil {
		return Strategy{}, err
	}
	for _, modifier := range parts[1:] {
		switch strings.TrimSpace(modifier) {
		case "after_tools":
			strategy.AfterTools = true
		case "before_llm":
			strategy.BeforeLLM = true
		default:
			return Strategy{}, fmt.Errorf("unknown strategy modifier %q", strings.TrimSpace(modifier))
		}
	}
	return strategy, nil
}

// String is the text form ParseStrategy reads.
func (s Strategy) String() string {
	text := fmt.Sprintf("every_n:%d", s.EveryN)
	if s.EveryN == 1 {
		text = "every_step"
	}
	if s.AfterTools {
		text += ",after_tools"
	}
	if s.BeforeLLM {
		text += ",before_llm"
	}
	return text
}

// validate refuses an interval below 1.
func (s Strategy) validate() error {
	if s.EveryN < 1 {
		return fmt.Errorf("checkpoint interval must be a positive integer, got %d", s.EveryN)
	}
	return nil
}
