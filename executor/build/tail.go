package build

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// Tail keeps the last bytes written to it, up to a limit, and counts the
// ones it let go. It is safe for concurrent use: one process writes while
// a page reads.
type Tail struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps p, letting go of the oldest bytes beyond the limit.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	// Compact only when twice the limit, so a stream of small writes does
	// not move the whole buffer each time.
	if len(t.buf) > 2*t.max {
		n := len(t.buf) - t.max
		t.dropped += int64(n)
		t.buf = append(t.buf[:0], t.buf[n:]...)
	}
	return len(p), nil
}

// String is the kept tail, at most the limit.
func (t *Tail) String() string {
	s, _ := t.tail()
	return s
}

// Dropped is how many bytes were written but not kept.
func (t *Tail) Dropped() int64 {
	_, d := t.tail()
	return d
}

// Text is the kept tail for a person: when bytes were let go it starts
// with a line saying how many, and at a whole line.
func (t *Tail) Text() string {
	s, dropped := t.tail()
	if dropped == 0 {
		return s
	}
	// Start at a whole line when one begins soon enough.
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 4096 {
		dropped += int64(i + 1)
		s = s[i+1:]
	}
	return fmt.Sprintf("[output cut: the first %d bytes are not shown]\n%s", dropped, s)
}

func (t *Tail) tail() (string, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, dropped := t.buf, t.dropped
	if n := len(b) - t.max; n > 0 {
		b, dropped = b[n:], dropped+int64(n)
	}
	return string(b), dropped
}

// LastOutput is the last n non-blank lines of output, joined by newlines,
// with terminal colour codes and carriage returns removed.
func LastOutput(output string, n int) string {
	lines := strings.Split(cleanOutput(output), "\n")
	var kept []string
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			kept = append(kept, strings.TrimRight(lines[i], " \t"))
		}
	}
	var b bytes.Buffer
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString(kept[i])
		if i > 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
