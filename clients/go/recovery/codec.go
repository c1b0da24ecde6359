// Codec: how the reference interface's values look on the wire, the same bytes the TypeScript
// and Python clients write, so a run saved by one language is restored by another: the state is
// a JSON object, a message is its role plus every other field as a JSON object, a tool's output
// is its JSON value.
package recovery

import (
	"encoding/json"
	"fmt"
	"maps"
	"unicode/utf8"
)

// ContentType is the content type of the state this interface writes: a JSON object.
const ContentType = "application/json"

// State is a run's state: a JSON object.
type State = map[string]any

// Message is one message of a run's history: a role, its content and any other JSON fields
// (tool-call fields and the like).
type Message struct {
	Role    string
	Content any
	// Fields are the message's other JSON fields; "role" and "content" are not among them.
	Fields map[string]any
}

// encodeMessage is the wire form: the role, and content plus the other fields as one JSON object.
func encodeMessage(message Message) (role string, content []byte, err error) {
	if message.Role == "" {
		return "", nil, fmt.Errorf("checkpointd: a message needs a non-empty role, got %+v", message)
	}
	body := make(map[string]any, len(message.Fields)+1)
	maps.Copy(body, message.Fields)
	delete(body, "role")
	if message.Content != nil {
		body["content"] = message.Content
	}
	content, err = json.Marshal(body)
	if err != nil {
		return "", nil, fmt.Errorf("checkpointd: message is not JSON-serialisable: %w", err)
	}
	return message.Role, content, nil
}

// decodeMessage is a stored message back; content another client wrote that is not a JSON
// object comes back as text.
func decodeMessage(role string, content []byte) Message {
	var body map[string]any
	if err := json.Unmarshal(content, &body); err == nil && body != nil {
		if _, hasRole := body["role"]; !hasRole {
			message := Message{Role: role, Content: body["content"]}
			delete(body, "content")
			if len(body) > 0 {
				message.Fields = body
			}
			return message
		}
	}
	if utf8.Valid(content) {
		return Message{Role: role, Content: string(content)}
	}
	return Message{Role: role, Content: content}
}

// encodeOutput is a tool's output as stored: bytes as they are, anything else as JSON.
func encodeOutput(value any) ([]byte, error) {
	if raw, ok := value.([]byte); ok {
		return raw, nil
	}
	out, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("checkpointd: tool output is not JSON-serialisable: %w", err)
	}
	return out, nil
}

// encodeState is the state as stored; nil is the empty object.
func encodeState(state State) ([]byte, error) {
	if state == nil {
		state = State{}
	}
	out, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("checkpointd: state is not JSON-serialisable: %w", err)
	}
	return out, nil
}

// decodeState is a stored state back; a state that is not a JSON object (another client's)
// is shown under "raw", not interpreted.
func decodeState(raw []byte) State {
	if len(raw) == 0 {
		return State{}
	}
	var state State
	if err := json.Unmarshal(raw, &state); err == nil && state != nil {
		return state
	}
	return State{"raw": string(raw)}
}

// cloneState is a deep copy through JSON, so that a failed step leaves no trace in the state
// that gets checkpointed.
func cloneState(state State) (State, error) {
	raw, err := encodeState(state)
	if err != nil {
		return nil, err
	}
	return decodeState(raw), nil
}
