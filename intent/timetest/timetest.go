// Package timetest is the time of the tests: a clock that stands still
// until the test moves it, given to a service as its clock, and a wait in
// real time for what another goroutine or process does.
package timetest

import (
	"sync"
	"testing"
	"time"
)

// Clock is a clock the test holds: it reads the same time until the test
// moves it. It may be read and moved from any goroutine.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time: give c.Now where a service takes its clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d, or back when d is negative.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t and returns t.
func (c *Clock) Set(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
	return t
}

// poll is how often WaitFor asks again.
const poll = 20 * time.Millisecond

// WaitFor asks cond every 20 ms until it holds, and fails tb when it
// still does not after within. what names what is waited for, as in "the
// port to stop answering".
func WaitFor(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %s waiting for %s", within, what)
			return
		}
		time.Sleep(poll)
	}
}
