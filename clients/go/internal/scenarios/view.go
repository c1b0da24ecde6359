// The runner's view of a run (tests/scenarios/README.md, "The runner's view of a run"): the
// message log and tool journal as the server acknowledged them, from which a "checksum":
// "client" step computes checksum v1 with this module's functions, and against which a
// "verify" step checks a loaded checkpoint with checkpointd.VerifyCheckpoint.
package scenarios

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	checkpointd "github.com/checkpointd/checkpointd/clients/go"
	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
	"github.com/checkpointd/checkpointd/clients/go/recovery"
)

type runView struct {
	messages []*checkpointv1.Message
	results  map[uint64]*checkpointv1.ToolResult
	intents  map[uint64]*checkpointv1.ToolIntent
}

func (r *Runner) view(runID string) *runView {
	view, ok := r.views[runID]
	if !ok {
		view = &runView{results: map[uint64]*checkpointv1.ToolResult{}, intents: map[uint64]*checkpointv1.ToolIntent{}}
		r.views[runID] = view
	}
	return view
}

// tools is the chain over the journal's entries up to toolCount (all when nil).
func (v *runView) tools(toolCount *uint64) checkpointd.ToolChain {
	var results []*checkpointv1.ToolResult
	var intents []*checkpointv1.ToolIntent
	for _, result := range v.results {
		results = append(results, result)
	}
	for _, intent := range v.intents {
		intents = append(intents, intent)
	}
	chain, _ := recovery.JournalChain(results, intents, toolCount)
	return chain
}

// withChecksum sets a Save's checksum: "client" is v1 over the view, "upper" that in upper
// case, "wrong" a well-formed checksum of nothing.
func (r *Runner) withChecksum(request *checkpointv1.SaveRequest, kind string) error {
	view := r.view(request.GetRunId())
	offset := min(int(request.GetMessageOffset()), len(view.messages))
	messages := checkpointd.MessagesOf(checkpointd.MessagesOf(checkpointd.MessageChain{}, view.messages[:offset]),
		request.GetMessages())
	right := checkpointd.Checksum(checkpointd.CheckpointContent{RunID: request.GetRunId(), Step: uint64(request.GetStep()),
		ContentType: request.GetContentType(), State: request.GetState(), Metadata: request.GetMetadata()},
		messages, view.tools(request.ToolCount))
	r.vars["clientChecksum"] = right
	switch kind {
	case "client":
		request.Checksum = &right
	case "upper":
		upper := strings.ToUpper(right)
		request.Checksum = &upper
	case "wrong":
		wrong := strings.Repeat("0", 64)
		request.Checksum = &wrong
	default:
		return fmt.Errorf("unknown checksum kind %q", kind)
	}
	return nil
}

// observe keeps the view in step with what the server acknowledged.
func (r *Runner) observe(request, response proto.Message) {
	field := request.ProtoReflect().Descriptor().Fields().ByName("run_id")
	if field == nil {
		return // a task call: no run to follow
	}
	view := r.view(request.ProtoReflect().Get(field).String())
	switch answer := response.(type) {
	case *checkpointv1.SaveResponse:
		save := request.(*checkpointv1.SaveRequest)
		offset := min(int(save.GetMessageOffset()), len(view.messages))
		view.messages = append(append([]*checkpointv1.Message(nil), view.messages[:offset]...), save.GetMessages()...)
	case *checkpointv1.RecordToolResultResponse:
		if result := answer.GetResult(); result != nil {
			view.results[result.GetSeq()] = result
		}
	case *checkpointv1.RecordToolIntentResponse:
		if intent := answer.GetIntent(); intent != nil {
			view.intents[intent.GetSeq()] = intent
		}
	case *checkpointv1.LoadLatestResponse:
		view.restored(answer.GetCheckpoint(), answer.GetToolResults(), answer.GetToolIntents(), false)
	case *checkpointv1.ResumeResponse:
		view.restored(answer.GetCheckpoint(), answer.GetToolResults(), answer.GetToolIntents(), answer.GetRestartedFromScratch())
	}
}

// restored starts the view over from what a load or Resume returned.
func (v *runView) restored(checkpoint *checkpointv1.Checkpoint, results []*checkpointv1.ToolResult,
	intents []*checkpointv1.ToolIntent, scratch bool) {
	if checkpoint != nil && checkpoint.GetMessagesOffset() == 0 {
		v.messages = append([]*checkpointv1.Message(nil), checkpoint.GetMessages()...)
	} else if scratch {
		v.messages = nil
	}
	v.results, v.intents = map[uint64]*checkpointv1.ToolResult{}, map[uint64]*checkpointv1.ToolIntent{}
	for _, result := range results {
		v.results[result.GetSeq()] = result
	}
	for _, intent := range intents {
		v.intents[intent.GetSeq()] = intent
	}
}

// loaded is what a load or Resume answer holds.
type loaded interface {
	GetCheckpoint() *checkpointv1.Checkpoint
	GetToolResults() []*checkpointv1.ToolResult
	GetToolIntents() []*checkpointv1.ToolIntent
}

// verify checks the answer's checkpoint with checksum v1 recomputed on the client.
func (r *Runner) verify(response proto.Message) error {
	answer, ok := response.(loaded)
	if !ok || answer.GetCheckpoint() == nil {
		return fmt.Errorf("no checkpoint to verify in %T", response)
	}
	var previous checkpointd.MessageChain
	if offset := answer.GetCheckpoint().GetMessagesOffset(); offset > 0 {
		runID := answer.GetCheckpoint().GetRunId()
		messages := r.view(runID).messages
		previous = checkpointd.MessagesOf(previous, messages[:min(int(offset), len(messages))])
	}
	_, err := checkpointd.VerifyCheckpoint(answer.GetCheckpoint(), answer.GetToolResults(), answer.GetToolIntents(), previous)
	if err != nil {
		return fmt.Errorf("not verified: %w", err)
	}
	return nil
}

// codeName is a gRPC code as the scenarios write it, e.g. FAILED_PRECONDITION.
func codeName(code codes.Code) string {
	if code == codes.Canceled {
		return "CANCELLED"
	}
	var out strings.Builder
	for i, c := range code.String() {
		if i > 0 && c >= 'A' && c <= 'Z' {
			out.WriteByte('_')
		}
		out.WriteRune(c)
	}
	return strings.ToUpper(out.String())
}
