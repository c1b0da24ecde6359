// The arguments digest agrees with the Python client's json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) on the values below (the expected digests were
// computed with it), and a replay for other arguments is one typed error whoever finds it.

package checkpointd_test

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
)

func TestArgumentsDigestIsTheSHA256OfSortedCompactJSONAsPythonWritesIt(t *testing.T) {
	type inner struct {
		Z bool `json:"z"`
		A any  `json:"a"`
	}
	type outer struct {
		B []any  `json:"b"`
		A string `json:"a"`
	}
	cases := []struct {
		name      string
		args      any
		canonical string
		digest    string
	}{
		{"struct fields sorted, HTML and non-ASCII kept", outer{B: []any{1, 2, inner{Z: true}}, A: "x<y & é"},
			`{"a":"x<y & é","b":[1,2,{"a":null,"z":true}]}`,
			"cac2092982651f6d9e46aad4d0f50cf9e0aa909dd4bd0c6b46104788c7aba184"},
		{"the replay-mismatch scenario's intent", map[string]string{"env": "prod"}, `{"env":"prod"}`,
			"fdf65bc0fcace2d9faa201074629f8b59f8fed36951697309a4df91be5b0261b"},
		{"an empty list", []int{}, `[]`, "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"},
		{"a big integer keeps its digits", map[string]uint64{"n": 12345678901234567890}, `{"n":12345678901234567890}`,
			"8716eed5e3ea73042324b69568de421fc67f1547923dcb85ab0d1e156d6e0588"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			canonical, err := checkpointd.CanonicalArguments(c.args)
			if err != nil || string(canonical) != c.canonical {
				t.Fatalf("canonical %s (%v), want %s", canonical, err, c.canonical)
			}
			digest, err := checkpointd.ArgumentsDigest(c.args)
			if err != nil || digest != c.digest {
				t.Fatalf("digest %s (%v), want %s", digest, err, c.digest)
			}
		})
	}
}

func TestArgumentsJSONCannotCarryAreRefusedNotDigested(t *testing.T) {
	for _, args := range []any{math.NaN(), make(chan int), map[string]any{"f": func() {}}} {
		if digest, err := checkpointd.ArgumentsDigest(args); err == nil {
			t.Errorf("%T digested to %s", args, digest)
		}
	}
}

func TestCheckReplayRefusesOnlyTwoDifferentDigests(t *testing.T) {
	const a, b = "aaaa", "bbbb"
	for _, ok := range [][2]string{{a, a}, {"", b}, {a, ""}, {"", ""}} {
		if err := checkpointd.CheckReplay("step-1/x/0", ok[0], ok[1]); err != nil {
			t.Errorf("stored %q, call %q: %v", ok[0], ok[1], err)
		}
	}
	err := checkpointd.CheckReplay("step-1/x/0", a, b)
	var mismatch *checkpointd.ReplayMismatchError
	if !errors.As(err, &mismatch) || mismatch.CallID != "step-1/x/0" || mismatch.StoredDigest != a || mismatch.RequestDigest != b {
		t.Fatalf("got %#v", err)
	}
	var refusal *checkpointd.Error
	if !errors.As(err, &refusal) || refusal.Code != codes.AlreadyExists || refusal.Metadata["stored_digest"] != a ||
		refusal.Metadata["request_digest"] != b || refusal.Metadata["call_id"] != "step-1/x/0" {
		t.Fatalf("the refusal is not shaped as the server's: %#v", refusal)
	}
	if !errors.Is(err, checkpointd.ErrArgumentsMismatch) || status.Code(err) != codes.AlreadyExists {
		t.Fatalf("errors.Is or status.Code do not see ARGUMENTS_MISMATCH: %v", err)
	}
}

func TestTheServersArgumentsMismatchBecomesAReplayMismatchError(t *testing.T) {
	err := checkpointd.FromError(refusal(t, codes.AlreadyExists, "ARGUMENTS_MISMATCH",
		map[string]string{"call_id": "c", "stored_digest": "s", "request_digest": "r"}))
	var mismatch *checkpointd.ReplayMismatchError
	if !errors.As(err, &mismatch) || mismatch.CallID != "c" || mismatch.StoredDigest != "s" || mismatch.RequestDigest != "r" {
		t.Fatalf("got %#v", err)
	}
	if !errors.Is(err, checkpointd.ErrArgumentsMismatch) || status.Code(err) != codes.AlreadyExists {
		t.Fatalf("errors.Is or status.Code lost the refusal: %v", err)
	}
	if checkpointd.FromError(err) != err {
		t.Fatal("FromError changed an error it had already typed")
	}
	other := checkpointd.FromError(refusal(t, codes.AlreadyExists, "STEP_CONFLICT", nil))
	if errors.As(other, &mismatch) {
		t.Fatal("another ALREADY_EXISTS reason became a replay mismatch")
	}
}
