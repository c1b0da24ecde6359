// Naming: how an Eino checkpoint id becomes a checkpointd run id, and what each saved
// checkpoint carries besides Eino's bytes. docs/eino-mapping.md is the specification; these
// rules are the part another language or an operator's tool must reproduce exactly.

package eino

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// RunIDPrefix opens the run id of every Eino checkpoint id, so ListRuns(run_id_prefix="eino:")
	// lists a tenant's Eino checkpoints and nothing else.
	RunIDPrefix = "eino:"
	// ContentType is the content type of every checkpoint saved: the bytes are Eino's own
	// serializer output (type-tagged JSON by default), opaque to checkpointd.
	ContentType = "application/vnd.cloudwego.eino.checkpoint"
	// MetadataCheckpointID holds the Eino checkpoint id as given. It is covered by the checksum,
	// so a load can tell its checkpoint from another id's whose run id happened to be the same.
	MetadataCheckpointID = "eino.checkpoint_id"
	// MetadataVersion holds the mapping's version, "1".
	MetadataVersion = "eino.v"
	mappingVersion  = "1"
	// maxRunIDBytes is checkpointd's limit on a run id.
	maxRunIDBytes = 256
)

// RunID is the checkpointd run that holds an Eino checkpoint id: "eino:" and the id
// percent-encoded (UTF-8, keeping only A-Z a-z 0-9 - . _ ~, upper-case hex). An id whose run
// id would pass 256 bytes becomes "eino:!" and the SHA-256 hex of the id; the id itself is in
// the metadata either way.
func RunID(checkPointID string) string {
	encoded := RunIDPrefix + percentEncode(checkPointID)
	if len(encoded) <= maxRunIDBytes {
		return encoded
	}
	digest := sha256.Sum256([]byte(checkPointID))
	return RunIDPrefix + "!" + hex.EncodeToString(digest[:])
}

// percentEncode escapes every byte outside RFC 3986's unreserved set. '!' is escaped too, so
// an encoded id can never look like a hashed one.
func percentEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0x0f])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// checkpointMetadata is the metadata map of every save for the id.
func checkpointMetadata(checkPointID string) map[string]string {
	return map[string]string{MetadataCheckpointID: checkPointID, MetadataVersion: mappingVersion}
}
