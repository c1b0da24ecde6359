package recovery

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func TestClassifierTellsFatalFromTransient(t *testing.T) {
	var classifier Classifier
	cases := []struct {
		err  error
		want ErrorKind
	}{
		{Fatal(errors.New("x")), KindFatal},
		{fmt.Errorf("wrapped: %w", Fatal(errors.New("x"))), KindFatal},
		{Transient(errors.New("invalid api key")), KindTransient},
		{&ApprovalRequired{Action: "deploy"}, KindTransient},
		{clientRefusal(codes.InvalidArgument, checkpointd.ReasonChecksumMismatch, "m"), KindFatal},
		{clientRefusal(codes.DataLoss, checkpointd.ReasonCheckpointCorrupt, "m"), KindFatal},
		{clientRefusal(codes.Unavailable, "", "m"), KindTransient},
		{errors.New("Invalid API key for provider"), KindFatal},
		{errors.New("connection reset by peer"), KindTransient},
	}
	for _, c := range cases {
		if got := classifier.Classify(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
	if got := (Classifier{FatalPatterns: []string{"quota"}}).Classify(errors.New("QUOTA exceeded")); got != KindFatal {
		t.Errorf("custom pattern: %s", got)
	}
}

func TestFencingIsAFailedPreconditionOtherThanALogBehind(t *testing.T) {
	if !IsFenced(clientRefusal(codes.FailedPrecondition, checkpointd.ReasonStaleEpoch, "m")) ||
		!IsFenced(clientRefusal(codes.FailedPrecondition, checkpointd.ReasonLeaseLost, "m")) {
		t.Error("a stale epoch or a lost lease is not fenced")
	}
	if IsFenced(clientRefusal(codes.FailedPrecondition, checkpointd.ReasonMessageLogBehind, "m")) ||
		IsFenced(errors.New("STALE_EPOCH")) {
		t.Error("a log behind, or untyped text, counts as fenced")
	}
}

func TestStrategiesParseAsTheRunnerWritesThem(t *testing.T) {
	for text, want := range map[string]Strategy{
		"every_step":                        {EveryN: 1},
		"every_n":                           {EveryN: 3},
		"every_n:5":                         {EveryN: 5},
		"hybrid":                            {EveryN: 3, AfterTools: true},
		"hybrid:2,before_llm":               {EveryN: 2, AfterTools: true, BeforeLLM: true},
		"every_n:4, after_tools":            {EveryN: 4, AfterTools: true},
		"every_step,after_tools,before_llm": {EveryN: 1, AfterTools: true, BeforeLLM: true},
	} {
		got, err := ParseStrategy(text)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", text, got, err, want)
		}
		if again, err := ParseStrategy(got.String()); err != nil || again != got {
			t.Errorf("%q does not round-trip through %q", text, got.String())
		}
	}
	for _, bad := range []string{"every_n:0", "every_n:x", "every_n:-1", "every_step:2", "sometimes", "hybrid,later"} {
		if _, err := ParseStrategy(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	hybrid := Strategy{EveryN: 3, AfterTools: true}
	if !hybrid.SavesAfter(3, false) || !hybrid.SavesAfter(1, true) || hybrid.SavesAfter(2, false) {
		t.Error("hybrid saves at the wrong steps")
	}
}
