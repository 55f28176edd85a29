package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"autoapp/knowledge/origin"
)

// logBatch is the most records one transaction of the log writer takes.
const logBatch = 256

// pending is a record waiting for the log writer: its attributes are
// already JSON, so nothing the caller later changes reaches the row.
type pending struct {
	event Event
	attrs string
}

// Handler returns an slog.Handler that records every record at or above
// level (info when nil) as an event: its message, level, attributes as JSON
// (groups nested) and the identity of the record's context. Each record is
// also passed to next, when next is not nil and takes its level.
//
// Recording never makes the caller wait on the database: records queue in
// a buffer and one goroutine writes them in batches; Close writes what is
// left. A record that finds the buffer full is not recorded — it is printed
// to stderr (unless next prints it) and counted, and the count is logged.
func (s *Store) Handler(level slog.Leveler, next slog.Handler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	s.startLog.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		s.queue = make(chan pending, s.opts.LogBuffer)
		s.written = make(chan struct{})
		go s.writeLog()
	})
	return &logHandler{store: s, level: level, next: next}
}

type logHandler struct {
	store *Store
	level slog.Leveler
	next  slog.Handler
	// attrs holds what WithAttrs added, nested under its groups; groups is
	// the path the record's own attributes go under.
	attrs  map[string]any
	groups []string
}

func (h *logHandler) records(l slog.Level) bool { return l >= h.level.Level() }

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.records(l) || (h.next != nil && h.next.Enabled(ctx, l))
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	nextTakes := h.next != nil && h.next.Enabled(ctx, r.Level)
	if h.records(r.Level) {
		var own []slog.Attr
		r.Attrs(func(a slog.Attr) bool {
			own = append(own, a)
			return true
		})
		attrs := withAttrs(h.attrs, h.groups, own)
		ctx = identityFromAttrs(ctx, attrs)
		e := stamped(ctx, Event{At: r.Time, Level: LevelOf(r.Level), Message: r.Message}, h.store.now())
		if !h.store.enqueue(pending{event: e, attrs: attrsJSON(attrs)}) && !nextTakes {
			fmt.Fprintf(h.store.stderr, "%s %s %s %s\n", e.At.Format(time.RFC3339), strings.ToUpper(string(e.Level)), e.Message, attrsJSON(attrs))
		}
	}
	if nextTakes {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := *h
	c.attrs = withAttrs(h.attrs, h.groups, as)
	if h.next != nil {
		c.next = h.next.WithAttrs(as)
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(h.groups[:len(h.groups):len(h.groups)], name)
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return &c
}

// withAttrs is m with as added under path. m is never changed: the maps on
// the path are copied, the rest shared, so handlers derived from one
// another never see each other's attributes.
func withAttrs(m map[string]any, path []string, as []slog.Attr) map[string]any {
	if len(as) == 0 {
		return m
	}
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	if len(path) == 0 {
		for _, a := range as {
			addAttr(out, a)
		}
		return out
	}
	child, _ := out[path[0]].(map[string]any)
	out[path[0]] = withAttrs(child, path[1:], as)
	return out
}

func addAttr(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		group := a.Value.Group()
		if len(group) == 0 {
			return
		}
		into := m
		if a.Key != "" {
			into = map[string]any{}
			m[a.Key] = into
		}
		for _, g := range group {
			addAttr(into, g)
		}
		return
	}
	if namesSecret(a.Key) {
		m[a.Key] = "[redacted]"
		return
	}
	m[a.Key] = plain(a.Value)
}

// plain is v as a value JSON encodes the way a person reads it.
func plain(v slog.Value) any {
	switch v.Kind() {
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return x.Error()
		case json.Marshaler:
			return x
		case fmt.Stringer:
			return x.String()
		}
		if _, err := json.Marshal(v.Any()); err != nil {
			return fmt.Sprint(v.Any())
		}
		return v.Any()
	default:
		return v.Any()
	}
}

// namesSecret says whether an attribute's key names a credential. The
// server does not log credentials; this keeps one logged by mistake out of
// the store.
func namesSecret(key string) bool {
	k := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(key))
	switch k {
	case "password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "bearer":
		return true
	}
	return strings.HasSuffix(k, "_password") || strings.HasSuffix(k, "_secret") ||
		strings.HasSuffix(k, "_token") || strings.HasSuffix(k, "_api_key")
}

// enqueue hands p to the log writer without waiting; false when the buffer
// is full (counted) or the store is closed.
func (s *Store) enqueue(p pending) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.queue == nil {
		return false
	}
	select {
	case s.queue <- p:
		return true
	default:
		s.dropped.Add(1)
		return false
	}
}

// writeLog is the one goroutine that writes the handler's records: it takes
// what is waiting, up to logBatch, and writes it in one transaction.
func (s *Store) writeLog() {
	defer close(s.written)
	batch := make([]pending, 0, logBatch)
	for p := range s.queue {
		batch = append(batch[:0], p)
	drain:
		for len(batch) < logBatch {
			select {
			case p, ok := <-s.queue:
				if !ok {
					break drain
				}
				batch = append(batch, p)
			default:
				break drain
			}
		}
		s.writeBatch(s.withDropped(batch))
	}
	// Lines dropped after the last batch are still counted.
	if batch := s.withDropped(batch[:0]); len(batch) > 0 {
		s.writeBatch(batch)
	}
}

// withDropped adds to batch a warning that says how many records found the
// buffer full since the last one, when any did.
func (s *Store) withDropped(batch []pending) []pending {
	n := s.dropped.Swap(0)
	if n == 0 {
		return batch
	}
	msg := fmt.Sprintf("%d log lines were not recorded: the log buffer was full", n)
	fmt.Fprintln(s.stderr, "knowledge: "+msg+"; they went to stderr")
	return append(batch, pending{event: Event{At: s.now(), Level: LevelWarn, Message: msg}, attrs: attrsJSON(map[string]any{"dropped": n})})
}

// writeBatch writes batch in one transaction; when it cannot, it says so
// on stderr, since there is nowhere else to say it.
func (s *Store) writeBatch(batch []pending) {
	err := func() error {
		ctx := context.Background()
		tx, err := s.db.Write.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, p := range batch {
			if err := insertEvent(ctx, tx, p.event, p.attrs); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		fmt.Fprintf(s.stderr, "knowledge: %d log lines could not be recorded: %v\n", len(batch), err)
	}
}

// identityFromAttrs fills what the record's context leaves empty of its
// run, call and application from the identity host code named in its
// top-level attributes ("run", "call", "app"): those are set by the run
// loop and the host from their own envelope, never from what a model wrote.
func identityFromAttrs(ctx context.Context, attrs map[string]any) context.Context {
	id := origin.IdentityFrom(ctx)
	str := func(key string) string {
		switch v := attrs[key].(type) {
		case string:
			return v
		case int64:
			return fmt.Sprint(v)
		}
		return ""
	}
	filled := id
	for _, f := range []struct {
		field *string
		key   string
	}{{&filled.RunID, "run"}, {&filled.CallID, "call"}, {&filled.AppID, "app"}} {
		if *f.field == "" {
			*f.field = str(f.key)
		}
	}
	if filled == id {
		return ctx
	}
	return origin.WithIdentity(ctx, filled)
}
