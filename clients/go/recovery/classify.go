// Fatal versus transient, as the Python and TypeScript clients decide it: typed errors first,
// then the gRPC code of a refusal, then message patterns. Fatal stops a run at once; transient
// resurrects it from its latest valid checkpoint.
package recovery

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

// FatalError will fail again on retry: the run is not resurrected.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return "fatal: " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal marks err as fatal.
func Fatal(err error) error { return &FatalError{Err: err} }

// TransientError may succeed on retry: the run is resurrected.
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return "transient: " + e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Transient marks err as transient.
func Transient(err error) error { return &TransientError{Err: err} }

// Decision is a human's decision on an approval request.
type Decision struct {
	Action    string
	Approved  bool
	DecidedBy string
	Comment   string
}

// ApprovalRequired says a step needs a human decision first (StepContext.RequestApproval).
type ApprovalRequired struct {
	Action  string
	Details any
}

func (e *ApprovalRequired) Error() string { return "approval required for " + e.Action }

// ErrorKind is fatal or transient.
type ErrorKind string

const (
	KindFatal     ErrorKind = "fatal"
	KindTransient ErrorKind = "transient"
)

// DefaultFatalPatterns are message fragments that make an untyped error fatal (matched
// case-insensitively): configuration and credential problems a retry does not fix.
var DefaultFatalPatterns = []string{
	"credential", "unauthorized", "unauthenticated", "authentication", "invalid api key",
	"permission denied", "forbidden", "no module named", "module not found", "cannot find module",
	"missing configuration", "not configured",
}

// fatalCodes: the service refused the data or the caller, and a retry sends the same thing.
var fatalCodes = map[codes.Code]bool{
	codes.InvalidArgument: true, codes.Unauthenticated: true, codes.PermissionDenied: true,
	codes.DataLoss: true, codes.ResourceExhausted: true,
}

// Classifier decides whether an error of a step (or of the store under it) is fatal.
type Classifier struct {
	// FatalPatterns are lower-case message fragments; DefaultFatalPatterns when nil.
	FatalPatterns []string
}

// Classify is the kind of err.
func (c Classifier) Classify(err error) ErrorKind {
	var fatal *FatalError
	var transient *TransientError
	var approval *ApprovalRequired
	var refusal *checkpointd.Error
	var mismatch *checkpointd.ReplayMismatchError
	switch {
	case errors.As(err, &fatal), errors.As(err, &mismatch):
		// A replay for other arguments fails the same way on every retry.
		return KindFatal
	case errors.As(err, &transient), errors.As(err, &approval):
		return KindTransient
	case errors.As(err, &refusal):
		if fatalCodes[refusal.Code] {
			return KindFatal
		}
		return KindTransient
	}
	patterns := c.FatalPatterns
	if patterns == nil {
		patterns = DefaultFatalPatterns
	}
	message := strings.ToLower(fmt.Sprint(err))
	for _, pattern := range patterns {
		if strings.Contains(message, strings.ToLower(pattern)) {
			return KindFatal
		}
	}
	return KindTransient
}

// resumableReasons are FAILED_PRECONDITION reasons that do not mean another owner has the run:
// the server lost saves (or journal entries) this process built on, so the run resumes.
var resumableReasons = map[checkpointd.Reason]bool{
	checkpointd.ReasonMessageLogBehind: true, checkpointd.ReasonJournalBehind: true,
}

// IsFenced says whether err is a write refused for a stale epoch or a lost lease: another
// owner has the run, and this one must stop without writing.
func IsFenced(err error) bool {
	var refusal *checkpointd.Error
	return errors.As(err, &refusal) && refusal.Code == codes.FailedPrecondition && !resumableReasons[refusal.Reason]
}
