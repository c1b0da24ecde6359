// The arguments digest of a journalled call (DESIGN.md, contract 14: a replay must match its
// call). A journalled result or intent is reused only for a call with the same id and the same
// arguments, so each journal write sends arguments_digest and each replay compares it with the
// stored one first.

package checkpointd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// CanonicalArguments is the canonical JSON of a call's arguments, the bytes ArgumentsDigest
// hashes: the value through encoding/json, decoded into generic values (maps, slices, numbers
// as their JSON text) and encoded again, so that
//
//   - object keys are sorted (a struct's fields too: their order in the type does not count);
//   - there is no whitespace;
//   - strings carry only the escapes JSON requires ('<', '>' and '&' stay as they are, as in
//     the Python and TypeScript clients; encoding/json still escapes U+2028 and U+2029);
//   - numbers are written as encoding/json writes them (1.0 is "1", Python's json writes
//     "1.0"), so a digest is compared between languages only when both sides sent integers,
//     strings and the like, which the shared scenarios use.
//
// A value encoding/json refuses (a channel, a function, NaN) is an error.
func CanonicalArguments(args any) ([]byte, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("checkpointd: the call's arguments are not JSON: %w", err)
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber() // keeps each number's text: no detour through float64
	var generic any
	if err := decoder.Decode(&generic); err != nil {
		return nil, fmt.Errorf("checkpointd: the call's arguments are not JSON: %w", err)
	}
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(generic); err != nil {
		return nil, fmt.Errorf("checkpointd: the call's arguments are not JSON: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil // Encode ends each value with a newline
}

// ArgumentsDigest is the lower-case hex SHA-256 of [CanonicalArguments]: the arguments_digest a
// journal write sends and a replay compares.
func ArgumentsDigest(args any) (string, error) {
	canonical, err := CanonicalArguments(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}
