// Package adk is a session.Service of Google's Agent Development Kit for Go
// (google.golang.org/adk/v2) backed by checkpointd: every session is a run whose message log
// holds its events and whose checkpoints hold its state, so a session survives the process that
// wrote it, every event is covered by checksum v1 (sent with each save, recomputed on each read)
// and a stale writer is refused rather than merged. docs/adk-mapping.md describes the mapping.
//
// It is a module of its own so that users of the core client never pull in ADK's dependencies.
package adk
