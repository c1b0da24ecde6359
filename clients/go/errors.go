// Error: every refusal from checkpointd (or from the transport on the way to it) as one typed
// error carrying the gRPC code and the machine-readable google.rpc.ErrorInfo reason, so that
// callers branch on the reason, never on message text.

package checkpointd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the ErrorInfo domain of every refusal checkpointd sends.
const ErrorDomain = "checkpointd"

// Error is a call that checkpointd, or the transport on the way to it, refused. Get it with
// errors.As; match a reason with errors.Is(err, ErrChecksumMismatch) and the like. It also
// keeps the gRPC status, so status.Code(err) and status.FromError(err) work on it.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Reason is the ErrorInfo reason, e.g. ReasonChecksumMismatch; empty when the refusal
	// carried none (a transport failure, a deadline). An unknown reason is kept as sent: treat
	// it by its Code.
	Reason Reason
	// Domain is the ErrorInfo domain, ErrorDomain for the server's own refusals.
	Domain string
	// Metadata is the ErrorInfo metadata, e.g. "field" naming a bad field; never nil.
	Metadata map[string]string
	// Message is the status message as the server wrote it.
	Message string

	status *status.Status
}

// Error reads like "checkpointd: INVALID_ARGUMENT (CHECKSUM_MISMATCH): <message>".
func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("checkpointd: %s (%s): %s", codeName(e.Code), e.Reason, e.Message)
	}
	return fmt.Sprintf("checkpointd: %s: %s", codeName(e.Code), e.Message)
}

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Is matches a reason sentinel (ErrChecksumMismatch, ...) by reason, and context.DeadlineExceeded
// or context.Canceled by the gRPC codes DEADLINE_EXCEEDED and CANCELLED.
func (e *Error) Is(target error) bool {
	switch target := target.(type) {
	case reasonError:
		return e.Reason == Reason(target)
	default:
		switch {
		case errors.Is(target, context.DeadlineExceeded):
			return e.Code == codes.DeadlineExceeded
		case errors.Is(target, context.Canceled):
			return e.Code == codes.Canceled
		}
		return false
	}
}

// codeName is the gRPC name of a code as the docs write it, e.g. INVALID_ARGUMENT.
func codeName(code codes.Code) string {
	name := code.String() // "InvalidArgument"; "Code(17)" for unknown numbers
	var out strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			out.WriteByte('_')
		}
		out.WriteRune(r)
	}
	if code == codes.Canceled {
		return "CANCELLED" // gRPC's spelling, not Go's
	}
	return strings.ToUpper(out.String())
}

// FromError turns any error from a call into an *Error: a gRPC status (with its ErrorInfo
// detail, if any) keeps its code; anything else becomes UNKNOWN (context errors become
// DEADLINE_EXCEEDED or CANCELLED). nil stays nil, and an *Error passes unchanged. The reason
// ARGUMENTS_MISMATCH becomes a [*ReplayMismatchError] (which wraps the *Error), as the client's
// own finding of the same thing is.
func FromError(err error) error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	typed = &Error{Code: st.Code(), Message: st.Message(), Metadata: map[string]string{}, status: st}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			typed.Reason = Reason(info.GetReason())
			typed.Domain = info.GetDomain()
			maps.Copy(typed.Metadata, info.GetMetadata())
			break
		}
	}
	return replayMismatchOf(typed)
}

// newClientError is an *Error found by this client rather than sent by the server, e.g. a
// loaded checkpoint that fails verification; its metadata says "origin": "client".
func newClientError(code codes.Code, reason Reason, message string) *Error {
	info := &errdetails.ErrorInfo{Reason: string(reason), Domain: ErrorDomain,
		Metadata: map[string]string{"origin": "client"}}
	st := status.New(code, message)
	if withInfo, err := st.WithDetails(info); err == nil {
		st = withInfo
	}
	return &Error{Code: code, Reason: reason, Domain: ErrorDomain,
		Metadata: map[string]string{"origin": "client"}, Message: message, status: st}
}

func corrupt(message string) *Error {
	return newClientError(codes.DataLoss, ReasonCheckpointCorrupt, message)
}
