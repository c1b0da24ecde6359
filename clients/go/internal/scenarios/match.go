// Matching answers against a scenario's expectations, as tests/scenarios/README.md defines it:
// objects by subset, arrays whole, scalars by their text (so 3 matches int64's "3"), a key
// proto JSON leaves out matching the default value; and the `{"$utf8": TEXT}` bytes shorthand.
package scenarios

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// expandBytes turns every {"$utf8": TEXT} into TEXT's UTF-8 bytes in base64, as proto JSON
// writes bytes.
func expandBytes(value any) any {
	switch v := value.(type) {
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = expandBytes(item)
		}
		return out
	case map[string]any:
		if text, ok := v["$utf8"]; ok && len(v) == 1 {
			return base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(text)))
		}
		out := make(map[string]any, len(v))
		for key, item := range v {
			out[key] = expandBytes(item)
		}
		return out
	}
	return value
}

// scalar is a value's text: 3, "3" and json.Number("3") are the same.
func scalar(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return "null"
	}
	return fmt.Sprint(value)
}

// isDefault says whether proto JSON leaves value out: zero, false, empty, an UNSPECIFIED enum.
func isDefault(value any) bool {
	switch v := value.(type) {
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	text := scalar(value)
	return text == "0" || text == "false" || text == "" || strings.HasSuffix(text, "_UNSPECIFIED")
}

// match returns why actual does not hold expected, or nil.
func match(expected, actual any, where string) error {
	switch want := expected.(type) {
	case map[string]any:
		got, ok := actual.(map[string]any)
		if actual == nil {
			got, ok = map[string]any{}, true
		}
		if !ok {
			return fmt.Errorf("%s: expected an object, got %s", where, show(actual))
		}
		for key, value := range want {
			item, present := got[key]
			if !present {
				if !isDefault(value) {
					return fmt.Errorf("%s.%s: expected %s, absent", where, key, show(value))
				}
				continue
			}
			if err := match(value, item, where+"."+key); err != nil {
				return err
			}
		}
		return nil
	case []any:
		got, ok := actual.([]any)
		if actual == nil {
			got, ok = []any{}, true
		}
		if !ok || len(got) != len(want) {
			return fmt.Errorf("%s: expected %d items, got %s", where, len(want), show(actual))
		}
		for i := range want {
			if err := match(want[i], got[i], fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if scalar(actual) != scalar(expected) {
		return fmt.Errorf("%s: expected %s, got %s", where, show(expected), show(actual))
	}
	return nil
}

// lookup is the value at a dotted path (tasks.0.attempt) of an answer.
func lookup(value any, path string) (any, error) {
	current := value
	for _, part := range strings.Split(path, ".") {
		switch v := current.(type) {
		case map[string]any:
			current = v[part]
		case []any:
			index, err := strconv.Atoi(part)
			if err != nil || index < 0 || index >= len(v) {
				return nil, fmt.Errorf("no %s in %s", path, show(value))
			}
			current = v[index]
		default:
			current = nil
		}
		if current == nil {
			return nil, fmt.Errorf("no %s in %s", path, show(value))
		}
	}
	return current, nil
}

func show(value any) string {
	out, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return string(out)
}

// decodeJSON decodes keeping numbers as their text.
func decodeJSON(data []byte) (any, error) {
	decoder := json.NewDecoder(strings.NewReader(string(data)))
	decoder.UseNumber()
	var value any
	err := decoder.Decode(&value)
	return value, err
}
