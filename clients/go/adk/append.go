// AppendEvent: one event is one checkpoint of the session's run, the event's JSON its one new
// message and the session's own state after the event its state, saved with checksum v1 at the
// step after the one the session was read at. The step is the fence: a copy of the session
// read before another writer appended is refused (STEP_CONFLICT), never merged.

package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"google.golang.org/adk/v2/session"

	checkpointv1 "github.com/checkpointd/checkpointd/clients/go/gen/checkpoint/v1"
)

// AppendEvent persists event and adds it to sess, which must come from this service. Partial
// events are neither stored nor added. "temp:" keys of the state delta change sess's state but
// are not stored (the caller's event is left as it is). The session's step is saved first and
// the "app:" and "user:" changes after it, so a failure in between leaves the event stored and
// the shared state behind; calling AppendEvent again with the same event on the same session
// finishes it (the identical save is accepted again and changes nothing).
func (s *Service) AppendEvent(ctx context.Context, current session.Session, event *session.Event) error {
	if current == nil {
		return fmt.Errorf("adk: session is nil")
	}
	if event == nil {
		return fmt.Errorf("adk: event is nil")
	}
	if event.Partial {
		return nil
	}
	sess, ok := current.(*Session)
	if !ok {
		return fmt.Errorf("adk: session %s is a %T, not one of this service's sessions", current.ID(), current)
	}
	stored := *event
	stored.Actions.StateDelta = withoutTemp(event.Actions.StateDelta)
	content, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("adk: event %s is not JSON: %w", event.ID, err)
	}
	split := splitDelta(event.Actions.StateDelta)

	sess.appendMu.Lock()
	defer sess.appendMu.Unlock()
	sess.mu.RLock()
	run := sess.run
	sess.mu.RUnlock()

	own := maps.Clone(run.state)
	maps.Copy(own, split.session)
	next, err := saveNext(ctx, s.client, run.runID, run, nextStep{
		state:    own,
		messages: []*checkpointv1.Message{{Role: eventRole, Content: content}},
		metadata: map[string]string{metaEventID: event.ID, metaUpdatedAt: formatTime(event.Timestamp)},
		label:    eventLabel(event.ID),
	})
	if err != nil {
		if isStepTaken(err) {
			return fmt.Errorf("adk: session %s changed since this copy was read (Get it again): %w", sess.id, err)
		}
		return err
	}
	err = parallel(
		func() (err error) {
			if len(split.app) > 0 {
				_, err = s.updateApp(ctx, sess.app, split.app)
			}
			return err
		},
		func() (err error) {
			if len(split.user) > 0 {
				_, err = s.updateUser(ctx, sess.app, sess.user, split.user)
			}
			return err
		},
	)
	if err != nil {
		return fmt.Errorf("adk: event %s is stored, its shared state is not (append it again): %w", event.ID, err)
	}

	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.run = next
	maps.Copy(sess.state, event.Actions.StateDelta)
	sess.events = append(sess.events, &stored)
	sess.updatedAt = event.Timestamp
	return nil
}

// eventLabel names the checkpoint after its event, so that a second event with an id the
// session already holds is refused (LABEL_TAKEN), as a primary key would. Ids outside a
// conservative alphabet (the server takes printable text) go without a label.
func eventLabel(id string) string {
	if id == "" || len(id) > maxRunIDBytes-len("event:") {
		return ""
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return ""
		}
	}
	return "event:" + id
}
