package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// Kept is what was made of a settings file at its last read, kept until
// the file changes: a page polled every two seconds reads the launcher's
// settings on each request, and an unchanged file then costs one stat
// instead of a read and a parse. A change is seen by the file's identity,
// size and modification time: Write renames a new file over the old one,
// so every write through it is seen, and so is a change of its mode; an
// edit by hand in place is seen unless it keeps the size within one tick
// of the file system's clock.
type Kept[T any] struct {
	path string
	// made makes the value of the file's bytes, or of the error reading
	// them (fs.ErrNotExist for a missing file).
	made func(b []byte, err error) T

	mu   sync.Mutex
	kept bool
	// seen is the file as the kept value was made of it; nil when it was
	// missing.
	seen fs.FileInfo
	v    T
}

// NewKept keeps what made makes of the file at path.
func NewKept[T any](path string, made func(b []byte, err error) T) *Kept[T] {
	return &Kept[T]{path: path, made: made}
}

// Get is what the file holds now, as made makes it.
func (k *Kept[T]) Get() T {
	info, err := os.Stat(k.path)
	missing := errors.Is(err, fs.ErrNotExist)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil && !missing {
		// Neither there nor missing: nothing is known to keep.
		k.kept = false
		return k.made(os.ReadFile(k.path))
	}
	if k.kept && (missing && k.seen == nil || !missing && k.seen != nil && same(info, k.seen)) {
		return k.v
	}
	// What is read may be newer than what the stat saw, never older: the
	// next stat then differs, and the file is read again. A file that
	// cannot be read is not kept: what stops the read may change without
	// the file.
	b, err := os.ReadFile(k.path)
	k.v = k.made(b, err)
	k.kept, k.seen = err == nil || errors.Is(err, fs.ErrNotExist), info
	return k.v
}

func same(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode()
}
