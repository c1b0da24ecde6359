// ReplayMismatchError: a journalled call id reused for a call with other arguments, found by
// this client before a replay or refused by the server (ALREADY_EXISTS, ARGUMENTS_MISMATCH).
// Both read alike, so a caller has one error to branch on whoever found it.

package checkpointd

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReplayMismatchError says that a call id is journalled with another arguments digest than the
// call's: replaying the stored result (or running the tool under the stored intent) would answer
// a different call, so neither happens. Get it with errors.As; it wraps the refusal as an
// [*Error] (reason [ReasonArgumentsMismatch]), so errors.Is(err, ErrArgumentsMismatch) holds too.
// Retrying does not help: the same call fails the same way.
type ReplayMismatchError struct {
	// CallID is the journalled call id.
	CallID string
	// StoredDigest is the arguments digest journalled with it.
	StoredDigest string
	// RequestDigest is the digest of the refused call's arguments.
	RequestDigest string
	// Err is the refusal: the server's, or one shaped as the server's when this client found it.
	Err *Error
}

func (e *ReplayMismatchError) Error() string { return e.Err.Error() }

// Unwrap is the refusal, for errors.As(err, **Error) and errors.Is by reason.
func (e *ReplayMismatchError) Unwrap() error { return e.Err }

// GRPCStatus is the refusal's status, for status.Code and status.FromError.
func (e *ReplayMismatchError) GRPCStatus() *status.Status { return e.Err.GRPCStatus() }

// NewReplayMismatch is the mismatch this client finds itself before replaying: ALREADY_EXISTS,
// reason ARGUMENTS_MISMATCH, with the metadata the server would send and "origin": "client".
func NewReplayMismatch(callID, storedDigest, requestDigest string) *ReplayMismatchError {
	refusal := newClientError(codes.AlreadyExists, ReasonArgumentsMismatch, fmt.Sprintf(
		"tool call %s is journalled with arguments digest %s, but this call's arguments digest to %s: "+
			"a journalled result is replayed only for the same arguments, and the tool is not called",
		callID, storedDigest, requestDigest))
	for key, value := range map[string]string{"call_id": callID, "stored_digest": storedDigest,
		"request_digest": requestDigest} {
		refusal.Metadata[key] = value
	}
	return &ReplayMismatchError{CallID: callID, StoredDigest: storedDigest, RequestDigest: requestDigest, Err: refusal}
}

// CheckReplay is nil when a journalled entry may be reused for this call: the digests are equal,
// or either is empty (an entry journalled before digests or by a client that sends none, or a
// call with no arguments to compare). Otherwise it is the [*ReplayMismatchError].
func CheckReplay(callID, storedDigest, requestDigest string) error {
	if storedDigest == "" || requestDigest == "" || storedDigest == requestDigest {
		return nil
	}
	return NewReplayMismatch(callID, storedDigest, requestDigest)
}

// replayMismatchOf is the server's ARGUMENTS_MISMATCH refusal as a *ReplayMismatchError.
func replayMismatchOf(refusal *Error) error {
	if refusal.Reason != ReasonArgumentsMismatch {
		return refusal
	}
	return &ReplayMismatchError{CallID: refusal.Metadata["call_id"], StoredDigest: refusal.Metadata["stored_digest"],
		RequestDigest: refusal.Metadata["request_digest"], Err: refusal}
}
