// The session.Session this service hands out: ADK's view (merged state, events, last update)
// plus the position in its run that the next AppendEvent continues from, so that an append
// from a stale copy is refused by the server instead of overwriting a newer one.

package adk

import (
	"iter"
	"maps"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"
)

// Session is a checkpointd-backed session. Only this service's Create, Get and List make one,
// and only its AppendEvent accepts one. Safe for concurrent use.
type Session struct {
	app, user, id string

	// appendMu makes appends to one copy take turns; mu guards the fields below.
	appendMu  sync.Mutex
	mu        sync.RWMutex
	state     map[string]any // merged: own keys, "app:" and "user:" keys, and temp: keys set here
	events    []*session.Event
	updatedAt time.Time
	// run is where the next append continues: its step, epoch, message chain and own state.
	run *scope
}

var _ session.Session = (*Session)(nil)

func (s *Session) ID() string      { return s.id }
func (s *Session) AppName() string { return s.app }
func (s *Session) UserID() string  { return s.user }

// State is the merged state; Set changes this copy only (ADK's runner persists state through
// events' StateDelta).
func (s *Session) State() session.State { return &sessionState{mu: &s.mu, values: s.state} }

// Events are the events this copy holds (after Get's filters).
func (s *Session) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return eventList(append([]*session.Event(nil), s.events...))
}

func (s *Session) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updatedAt
}

// sessionState guards the session's state map with the session's lock.
type sessionState struct {
	mu     *sync.RWMutex
	values map[string]any
}

func (s *sessionState) Get(key string) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	value, ok := s.values[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return value, nil
}

func (s *sessionState) Set(key string, value any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[key] = value
	return nil
}

func (s *sessionState) All() iter.Seq2[string, any] {
	s.mu.RLock()
	snapshot := maps.Clone(s.values)
	s.mu.RUnlock()
	return maps.All(snapshot)
}

type eventList []*session.Event

func (e eventList) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, event := range e {
			if !yield(event) {
				return
			}
		}
	}
}

func (e eventList) Len() int { return len(e) }

func (e eventList) At(i int) *session.Event {
	if i < 0 || i >= len(e) {
		return nil
	}
	return e[i]
}
