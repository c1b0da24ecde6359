// PassedOverOf reads passed_over, and falls back to skipped_steps for an older server.

package checkpointd_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

func TestPassedOverIsReadFromTheAnswerNewestFirstWithLabelsAndMetadata(t *testing.T) {
	at := time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC)
	answer := &checkpointv1.LoadLatestResponse{SkippedSteps: []int64{}, PassedOver: []*checkpointv1.PassedOverCheckpoint{
		{Step: 5, CheckpointId: "c5", Label: "cp-5", Metadata: map[string]string{"fw.step": "4"},
			QuarantinedAt: timestamppb.New(at), Reason: "checksum mismatch"},
		{Step: 3},
	}}
	got := checkpointd.PassedOverOf(answer)
	if len(got) != 2 || got[0].Step != 5 || got[0].CheckpointID != "c5" || got[0].Label != "cp-5" ||
		got[0].Metadata["fw.step"] != "4" || !got[0].QuarantinedAt.Equal(at) || got[0].Reason != "checksum mismatch" ||
		got[1].Step != 3 || !got[1].QuarantinedAt.IsZero() {
		t.Fatalf("got %+v", got)
	}
	if text := checkpointd.DescribePassedOver(got); text != "5 (cp-5), 3" {
		t.Fatalf("described as %q", text)
	}
}

func TestAnOlderServersSkippedStepsStandInForPassedOver(t *testing.T) {
	got := checkpointd.PassedOverOf(&checkpointv1.ResumeResponse{SkippedSteps: []int64{6, 4}})
	if fmt.Sprint(checkpointd.PassedOverSteps(got)) != "[6 4]" {
		t.Fatalf("got %+v", got)
	}
	if got := checkpointd.PassedOverOf(&checkpointv1.ResumeResponse{}); len(got) != 0 {
		t.Fatalf("a quiet answer passed over %+v", got)
	}
}
