// What a read fell back past (DESIGN.md, contract 13: corruption is reported to every reader
// until it is repaired). LoadLatest and Resume name every quarantined checkpoint newer than the
// one they return in passed_over, on every answer until an operator drops them (`checkpointd
// runs drop-quarantined RUN`) or a newer valid checkpoint is saved above them. The recovery
// store, the ADK session service and the Eino store read it here, so they say it alike.

package checkpointd

import (
	"fmt"
	"strings"
	"time"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// PassedOver is a quarantined (corrupt) checkpoint newer than the one a read returned. Its
// fields other than Step come from the row that failed verification: they tell people what was
// skipped (a framework's own checkpoint id in Label, its step in Metadata), never what to
// restore.
type PassedOver struct {
	Step         int64
	CheckpointID string
	Label        string
	Metadata     map[string]string
	// QuarantinedAt is zero when the server did not record it (or did not say).
	QuarantinedAt time.Time
	Reason        string
}

// fallbackAnswer is what LoadLatestResponse and ResumeResponse have in common.
type fallbackAnswer interface {
	GetPassedOver() []*checkpointv1.PassedOverCheckpoint
	GetSkippedSteps() []int64
}

// PassedOverOf is what a LoadLatest or Resume answer fell back past, newest first. A server
// older than passed_over names only what it found corrupt on this read (skipped_steps): those
// steps are returned, with nothing else known about them.
func PassedOverOf(answer fallbackAnswer) []PassedOver {
	if entries := answer.GetPassedOver(); len(entries) > 0 {
		out := make([]PassedOver, 0, len(entries))
		for _, entry := range entries {
			passed := PassedOver{Step: entry.GetStep(), CheckpointID: entry.GetCheckpointId(), Label: entry.GetLabel(),
				Metadata: map[string]string{}, Reason: entry.GetReason()}
			for key, value := range entry.GetMetadata() {
				passed.Metadata[key] = value
			}
			if at := entry.GetQuarantinedAt(); at != nil {
				passed.QuarantinedAt = at.AsTime()
			}
			out = append(out, passed)
		}
		return out
	}
	var out []PassedOver
	for _, step := range answer.GetSkippedSteps() {
		out = append(out, PassedOver{Step: step, Metadata: map[string]string{}})
	}
	return out
}

// PassedOverSteps are the steps of entries, in their order.
func PassedOverSteps(entries []PassedOver) []int64 {
	steps := make([]int64, len(entries))
	for i, entry := range entries {
		steps[i] = entry.Step
	}
	return steps
}

// DescribePassedOver names entries for a log line or an error: "5 (cp-5), 4 (cp-4), 3".
func DescribePassedOver(entries []PassedOver) string {
	parts := make([]string, len(entries))
	for i, entry := range entries {
		parts[i] = fmt.Sprint(entry.Step)
		if entry.Label != "" {
			parts[i] += " (" + entry.Label + ")"
		}
	}
	return strings.Join(parts, ", ")
}
