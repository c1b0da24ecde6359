// Package checkpointd is the Go client of checkpointd, the crash-recovery service for
// long-running AI agents: typed gRPC clients for every service in proto/ (dialled with TLS,
// mTLS, a bearer token, a tenant, default deadlines and the server's message limits), every
// refusal as an [*Error] carrying its gRPC code and ErrorInfo reason, checksum v1 and
// idempotency key v1, and verification of loaded checkpoints.
//
// The generated messages and service stubs live in the gen/checkpoint/v1 package.
package checkpointd
