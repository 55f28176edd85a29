package knowledge

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// Retention's numbers (DESIGN.md, "Numbers the seeds lost").
const (
	// RetainFor is how long events, and blobs nothing refers to, are kept.
	RetainFor = 30 * 24 * time.Hour
	// MaxEvents is how many events are kept at most; the oldest beyond it go.
	MaxEvents = 100_000
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Options change what Open does; the zero value is what serve wants.
type Options struct {
	// MaxEvents caps the events kept; 0 means MaxEvents.
	MaxEvents int
	// LogBuffer is how many log records the slog handler holds while the
	// writer catches up; 0 means 4096. A record that finds it full is not
	// recorded: it goes to Stderr and is counted.
	LogBuffer int
	// Stderr receives what the store cannot record; nil means os.Stderr.
	Stderr io.Writer
}

// Store is the knowledge store: the event log and the turns.
type Store struct {
	db     *migrations.DB
	now    func() time.Time
	opts   Options
	stderr io.Writer

	// The slog handler's writer: records wait in queue and one goroutine
	// writes them in batches. mu guards closed so no send races Close.
	startLog sync.Once
	mu       sync.RWMutex
	closed   bool
	queue    chan pending
	written  chan struct{}
	dropped  atomic.Int64

	// The background retention (StartRetention), stopped by Close.
	retainStop context.CancelFunc
	retainDone chan struct{}
}

// Open opens (creating and migrating when needed) the store at path. It
// does not apply retention: StartRetention does, in the background. now is
// the clock every row is stamped with and retention measures from. At most
// one Options may be given.
func Open(path string, now func() time.Time, opts ...Options) (*Store, error) {
	if len(opts) > 1 {
		return nil, errors.New("knowledge: Open takes at most one Options")
	}
	var o Options
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = MaxEvents
	}
	if o.LogBuffer <= 0 {
		o.LogBuffer = 4096
	}
	stderr := o.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	db, err := migrations.Open(path, migrations.Knowledge)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, now: now, opts: o, stderr: stderr}, nil
}

// OpenReadOnly opens the existing store at path as it is, for a process
// that only reads it beside a running server: nothing is created, no
// migration runs, and every write fails (migrations.OpenReadOnly). Its log
// handler must not be used.
func OpenReadOnly(path string, now func() time.Time) (*Store, error) {
	db, err := migrations.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, now: now, opts: Options{MaxEvents: MaxEvents, LogBuffer: 1}, stderr: os.Stderr}, nil
}

// DB is the database under the store, for the packages that read it.
func (s *Store) DB() *migrations.DB { return s.db }

// Close stops the background retention, writes what the log handler still
// holds, then closes the database. Records handled after Close go to the
// next handler only.
func (s *Store) Close() error {
	s.mu.Lock()
	wasClosed := s.closed
	s.closed = true
	if !wasClosed && s.queue != nil {
		close(s.queue)
	}
	s.mu.Unlock()
	if wasClosed {
		return nil
	}
	if s.retainDone != nil {
		s.retainStop()
		<-s.retainDone
	}
	if s.written != nil {
		<-s.written
	}
	return s.db.Close()
}
