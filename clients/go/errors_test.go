// *Error from a gRPC status: the code, the ErrorInfo reason and metadata, errors.As and
// errors.Is through wrapping, and the status still visible to grpc's own helpers.

package checkpointd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func refusal(t *testing.T, code codes.Code, reason string, metadata map[string]string) error {
	t.Helper()
	st, err := status.New(code, "refused").WithDetails(&errdetails.ErrorInfo{
		Reason: reason, Domain: checkpointd.ErrorDomain, Metadata: metadata})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestAStatusWithErrorInfoBecomesATypedErrorMatchedByReason(t *testing.T) {
	err := checkpointd.FromError(refusal(t, codes.InvalidArgument, "CHECKSUM_MISMATCH", map[string]string{"field": "checksum"}))
	wrapped := fmt.Errorf("saving: %w", err)
	var typed *checkpointd.Error
	if !errors.As(wrapped, &typed) {
		t.Fatalf("errors.As found no *Error in %v", wrapped)
	}
	if typed.Code != codes.InvalidArgument || typed.Reason != checkpointd.ReasonChecksumMismatch ||
		typed.Domain != "checkpointd" || typed.Metadata["field"] != "checksum" {
		t.Fatalf("wrong fields: %+v", typed)
	}
	if !errors.Is(wrapped, checkpointd.ErrChecksumMismatch) || errors.Is(wrapped, checkpointd.ErrStaleEpoch) {
		t.Fatal("errors.Is does not match by reason")
	}
	if status.Code(wrapped) != codes.InvalidArgument {
		t.Fatalf("status.Code sees %v", status.Code(wrapped))
	}
	if got := typed.Error(); got != "checkpointd: INVALID_ARGUMENT (CHECKSUM_MISMATCH): refused" {
		t.Fatalf("message %q", got)
	}
}

func TestAnUnknownReasonIsKeptAndMatchesOnlyItsOwnSentinel(t *testing.T) {
	err := checkpointd.FromError(refusal(t, codes.FailedPrecondition, "SOMETHING_NEW", nil))
	if !errors.Is(err, checkpointd.Reason("SOMETHING_NEW").Sentinel()) {
		t.Fatal("an unknown reason is not matchable")
	}
	for _, reason := range checkpointd.KnownReasons {
		if errors.Is(err, reason.Sentinel()) {
			t.Fatalf("matched %s", reason)
		}
	}
}

func TestADeadlineStatusMatchesContextDeadlineExceeded(t *testing.T) {
	err := checkpointd.FromError(status.Error(codes.DeadlineExceeded, "too slow"))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatal("DEADLINE_EXCEEDED does not read as context.DeadlineExceeded")
	}
	if got := checkpointd.FromError(context.Canceled).(*checkpointd.Error).Code; got != codes.Canceled {
		t.Fatalf("context.Canceled became %v", got)
	}
}

func TestFromErrorKeepsNilAndTypedErrors(t *testing.T) {
	if checkpointd.FromError(nil) != nil {
		t.Fatal("nil became an error")
	}
	typed := checkpointd.FromError(status.Error(codes.NotFound, "x"))
	if checkpointd.FromError(typed) != typed {
		t.Fatal("an *Error was wrapped again")
	}
}
