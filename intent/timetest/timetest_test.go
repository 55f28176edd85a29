package timetest_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"autoapp/intent/timetest"
)

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func TestTheClockMovesOnlyWhenTheTestMovesIt(t *testing.T) {
	c := timetest.NewClock(start)
	time.Sleep(2 * time.Millisecond)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("the clock read %v without being moved, want %v", got, start)
	}
	c.Advance(90 * time.Second)
	if got := c.Now(); !got.Equal(start.Add(90 * time.Second)) {
		t.Fatalf("advanced 90s, the clock reads %v", got)
	}
	c.Advance(-time.Hour)
	if got := c.Now(); !got.Equal(start.Add(90*time.Second - time.Hour)) {
		t.Fatalf("moved back an hour, the clock reads %v", got)
	}
	later := start.AddDate(0, 1, 0)
	if got := c.Set(later); !got.Equal(later) {
		t.Fatalf("Set returned %v, want %v", got, later)
	}
	if got := c.Now(); !got.Equal(later) {
		t.Fatalf("set to %v, the clock reads %v", later, got)
	}
}

// A service reads its clock from its own goroutines while the test moves
// it: every move is seen whole (go test -race checks the rest).
func TestTheClockIsReadAndMovedFromManyGoroutines(t *testing.T) {
	c := timetest.NewClock(start)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if c.Now().Before(start) {
					t.Error("the clock went back")
					return
				}
				c.Advance(time.Second)
			}
		})
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(8000*time.Second); !got.Equal(want) {
		t.Fatalf("8000 moves of a second left the clock at %v, want %v", got, want)
	}
}

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var asked atomic.Int32
	began := time.Now()
	timetest.WaitFor(t, 5*time.Second, "the third ask to hold", func() bool { return asked.Add(1) == 3 })
	if n := asked.Load(); n != 3 {
		t.Fatalf("the condition was asked %d times, want 3", n)
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("WaitFor took %s for a condition that held at the third ask", took)
	}
}

// failing is a test that records its failure instead of ending.
type failing struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (f *failing) Helper() {}

func (f *failing) Fatalf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = fmt.Sprintf(format, args...)
}

func TestWaitForFailsSayingWhatDidNotHappen(t *testing.T) {
	f := &failing{TB: t}
	began := time.Now()
	timetest.WaitFor(f, 100*time.Millisecond, "the build to end", func() bool { return false })
	took := time.Since(began)
	if want := "gave up after 100ms waiting for the build to end"; f.failed != want {
		t.Fatalf("WaitFor failed with %q, want %q", f.failed, want)
	}
	if took < 100*time.Millisecond {
		t.Fatalf("WaitFor gave up after %s, before the 100ms it was given", took)
	}
}
