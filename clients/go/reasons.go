// The ErrorInfo reasons checkpointd sends (proto/checkpoint/v1/checkpoint.proto, "Errors", and
// docs/errors.md), as constants and as sentinels for errors.Is. A test keeps this list equal to
// the two documents.

package checkpointd

// Reason is a machine-readable ErrorInfo reason. New reasons may be added to the server; a
// client treats an unknown one by its gRPC code.
type Reason string

// reasonError is the type of the sentinels: it matches any *Error with the same reason.
type reasonError Reason

func (r reasonError) Error() string { return "checkpointd: reason " + string(r) }

// The reasons, with the gRPC code each comes with.
const (
	ReasonInvalidArgument         Reason = "INVALID_ARGUMENT"           // INVALID_ARGUMENT; metadata "field"
	ReasonChecksumMismatch        Reason = "CHECKSUM_MISMATCH"          // INVALID_ARGUMENT
	ReasonRunNotFound             Reason = "RUN_NOT_FOUND"              // NOT_FOUND
	ReasonCheckpointNotFound      Reason = "CHECKPOINT_NOT_FOUND"       // NOT_FOUND
	ReasonTaskNotFound            Reason = "TASK_NOT_FOUND"             // NOT_FOUND
	ReasonWebhookEndpointNotFound Reason = "WEBHOOK_ENDPOINT_NOT_FOUND" // NOT_FOUND
	ReasonStepConflict            Reason = "STEP_CONFLICT"              // ALREADY_EXISTS
	ReasonLabelTaken              Reason = "LABEL_TAKEN"                // ALREADY_EXISTS
	ReasonArgumentsMismatch       Reason = "ARGUMENTS_MISMATCH"         // ALREADY_EXISTS; metadata "call_id", "stored_digest", "request_digest"
	ReasonConflict                Reason = "CONFLICT"                   // ALREADY_EXISTS; retry
	ReasonStaleEpoch              Reason = "STALE_EPOCH"                // FAILED_PRECONDITION
	ReasonEpochNotIssued          Reason = "EPOCH_NOT_ISSUED"           // FAILED_PRECONDITION
	ReasonStepBehindLatest        Reason = "STEP_BEHIND_LATEST"         // FAILED_PRECONDITION
	ReasonMessageLogBehind        Reason = "MESSAGE_LOG_BEHIND"         // FAILED_PRECONDITION
	ReasonJournalBehind           Reason = "JOURNAL_BEHIND"             // FAILED_PRECONDITION
	ReasonCapabilityRequired      Reason = "CAPABILITY_REQUIRED"        // FAILED_PRECONDITION; metadata "capability"
	ReasonCheckpointChanged       Reason = "CHECKPOINT_CHANGED"         // FAILED_PRECONDITION
	ReasonLeaseLost               Reason = "LEASE_LOST"                 // FAILED_PRECONDITION
	ReasonTaskState               Reason = "TASK_STATE"                 // FAILED_PRECONDITION
	ReasonJournalState            Reason = "JOURNAL_STATE"              // FAILED_PRECONDITION
	ReasonTooLarge                Reason = "TOO_LARGE"                  // RESOURCE_EXHAUSTED
	ReasonAnswerTooLarge          Reason = "ANSWER_TOO_LARGE"           // RESOURCE_EXHAUSTED
	ReasonCredentialInvalid       Reason = "CREDENTIAL_INVALID"         // UNAUTHENTICATED
	ReasonRoleForbidden           Reason = "ROLE_FORBIDDEN"             // PERMISSION_DENIED
	ReasonTenantMismatch          Reason = "TENANT_MISMATCH"            // PERMISSION_DENIED
	ReasonCheckpointCorrupt       Reason = "CHECKPOINT_CORRUPT"         // DATA_LOSS
	ReasonAllCheckpointsCorrupt   Reason = "ALL_CHECKPOINTS_CORRUPT"    // DATA_LOSS
	ReasonUnavailable             Reason = "UNAVAILABLE"                // UNAVAILABLE; retry later
	ReasonOverloaded              Reason = "OVERLOADED"                 // UNAVAILABLE; retry later
	ReasonBodyTimeout             Reason = "BODY_TIMEOUT"               // DEADLINE_EXCEEDED
	ReasonInternal                Reason = "INTERNAL"                   // INTERNAL
)

// Sentinels for errors.Is, one per reason: errors.Is(err, ErrChecksumMismatch).
var (
	ErrInvalidArgument         error = reasonError(ReasonInvalidArgument)
	ErrChecksumMismatch        error = reasonError(ReasonChecksumMismatch)
	ErrRunNotFound             error = reasonError(ReasonRunNotFound)
	ErrCheckpointNotFound      error = reasonError(ReasonCheckpointNotFound)
	ErrTaskNotFound            error = reasonError(ReasonTaskNotFound)
	ErrWebhookEndpointNotFound error = reasonError(ReasonWebhookEndpointNotFound)
	ErrStepConflict            error = reasonError(ReasonStepConflict)
	ErrLabelTaken              error = reasonError(ReasonLabelTaken)
	ErrArgumentsMismatch       error = reasonError(ReasonArgumentsMismatch)
	ErrConflict                error = reasonError(ReasonConflict)
	ErrStaleEpoch              error = reasonError(ReasonStaleEpoch)
	ErrEpochNotIssued          error = reasonError(ReasonEpochNotIssued)
	ErrStepBehindLatest        error = reasonError(ReasonStepBehindLatest)
	ErrMessageLogBehind        error = reasonError(ReasonMessageLogBehind)
	ErrJournalBehind           error = reasonError(ReasonJournalBehind)
	ErrCapabilityRequired      error = reasonError(ReasonCapabilityRequired)
	ErrCheckpointChanged       error = reasonError(ReasonCheckpointChanged)
	ErrLeaseLost               error = reasonError(ReasonLeaseLost)
	ErrTaskState               error = reasonError(ReasonTaskState)
	ErrJournalState            error = reasonError(ReasonJournalState)
	ErrTooLarge                error = reasonError(ReasonTooLarge)
	ErrAnswerTooLarge          error = reasonError(ReasonAnswerTooLarge)
	ErrCredentialInvalid       error = reasonError(ReasonCredentialInvalid)
	ErrRoleForbidden           error = reasonError(ReasonRoleForbidden)
	ErrTenantMismatch          error = reasonError(ReasonTenantMismatch)
	ErrCheckpointCorrupt       error = reasonError(ReasonCheckpointCorrupt)
	ErrAllCheckpointsCorrupt   error = reasonError(ReasonAllCheckpointsCorrupt)
	ErrUnavailable             error = reasonError(ReasonUnavailable)
	ErrOverloaded              error = reasonError(ReasonOverloaded)
	ErrBodyTimeout             error = reasonError(ReasonBodyTimeout)
	ErrInternal                error = reasonError(ReasonInternal)
)

// KnownReasons lists every reason above, in the order the proto documents them.
var KnownReasons = []Reason{
	ReasonInvalidArgument, ReasonChecksumMismatch, ReasonRunNotFound, ReasonCheckpointNotFound,
	ReasonTaskNotFound, ReasonWebhookEndpointNotFound, ReasonStepConflict, ReasonLabelTaken,
	ReasonArgumentsMismatch, ReasonConflict, ReasonStaleEpoch, ReasonEpochNotIssued, ReasonStepBehindLatest,
	ReasonMessageLogBehind, ReasonJournalBehind, ReasonCapabilityRequired, ReasonCheckpointChanged,
	ReasonLeaseLost, ReasonTaskState, ReasonJournalState, ReasonTooLarge, ReasonAnswerTooLarge,
	ReasonCredentialInvalid, ReasonRoleForbidden, ReasonTenantMismatch, ReasonCheckpointCorrupt,
	ReasonAllCheckpointsCorrupt, ReasonUnavailable, ReasonOverloaded, ReasonBodyTimeout,
	ReasonInternal,
}

// Sentinel is the errors.Is target of a reason (a known one or not).
func (r Reason) Sentinel() error { return reasonError(r) }
