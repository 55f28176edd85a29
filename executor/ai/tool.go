package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"autoapp/intent/refusal"
)

// Tool is something the model may call in a turn.
type Tool struct {
	// Name is the tool's name in our words (source.read); on the wire a dot
	// is sent as an underscore (source_read).
	Name        string
	Description string
	// Schema is the JSON Schema every input is validated against before
	// the handler runs.
	Schema json.RawMessage
	// Example is one minimal valid input. It goes back to the model the
	// second time the tool is refused for the same problems; CheckExample
	// holds it to Schema.
	Example json.RawMessage
	// Edits says that a successful call may change the workspace: when
	// an edit lands, the count of repeated refusals starts again.
	Edits bool
	// Landed, when set, says whether a successful call's edit landed (a
	// cycle given no change lands none); nil: every successful call of an
	// Edits tool did.
	Landed func(input json.RawMessage, result any) bool
	// Handler runs a valid input. A *Refusal error answers the model
	// ok:false with its problems; a Question result ends the turn.
	Handler func(ctx context.Context, input json.RawMessage) (any, error)
}

// WireName is the tool's name as the model sees it.
func (t Tool) WireName() string { return strings.ReplaceAll(t.Name, ".", "_") }

// wireNameRE is what OpenAI-compatible APIs accept as a function name.
var wireNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckExample reports whether a tool can be offered as it is: a name the
// API accepts, a schema this layer can read, and an Example that the schema
// accepts. Each package that ships tools calls it in a test.
func CheckExample(t Tool) error {
	if !wireNameRE.MatchString(t.WireName()) {
		return fmt.Errorf("ai: tool %q: the name must be 1 to 64 letters, digits, dots, _ or -", t.Name)
	}
	s, err := compileSchema(t.Schema)
	if err != nil {
		return fmt.Errorf("ai: tool %s: %w", t.Name, err)
	}
	if len(t.Example) == 0 {
		return fmt.Errorf("ai: tool %s has no example input", t.Name)
	}
	if ps := s.validate(t.Example); len(ps) > 0 {
		return fmt.Errorf("ai: tool %s: the example is refused by its own schema: %w", t.Name, &Refusal{Problems: ps})
	}
	return nil
}

// Refusal is a tool's refusal of an input, with each problem named. A
// handler returns it (see Refuse) for what the schema cannot say.
type Refusal struct {
	Problems refusal.Problems
}

func (r *Refusal) Error() string { return r.Problems.Error() }

// Refuse is the error a handler returns to refuse its input.
func Refuse(problems ...refusal.Problem) error {
	return &Refusal{Problems: problems}
}

// Question is the result of a tool that asks the person something: the
// turn ends with Ended == EndQuestion and the question in Result.Question.
type Question struct {
	Text string
}

// idleClock measures the time since the last tool call, not counting the
// time it is held: while a tool runs, and while a question waits for the
// person. It is shared with handlers through their context.
type idleClock struct {
	now func() time.Time

	mu    sync.Mutex
	held  int
	since time.Time
	spent time.Duration
}

func newIdleClock(now func() time.Time) *idleClock {
	return &idleClock{now: now, since: now()}
}

// restart is a tool call: nothing is idle any more.
func (c *idleClock) restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spent, c.since = 0, c.now()
}

// hold stops the clock until release is called; release may be called more
// than once and from any goroutine.
func (c *idleClock) hold() (release func()) {
	c.mu.Lock()
	if c.held == 0 {
		c.spent += c.now().Sub(c.since)
	}
	c.held++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.held--
			if c.held == 0 {
				c.since = c.now()
			}
		})
	}
}

// idle is the time counted so far, and whether the clock is held now.
func (c *idleClock) idle() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held > 0 {
		return c.spent, true
	}
	return c.spent + c.now().Sub(c.since), false
}

type idleKey struct{}

// HoldIdle stops the turn's idle clock until the returned release is
// called: a handler calls it while a question waits for the person, and
// may release after it has returned. The clock is already held while a
// handler runs. Outside a turn it does nothing.
func HoldIdle(ctx context.Context) (release func()) {
	if c, ok := ctx.Value(idleKey{}).(*idleClock); ok {
		return c.hold()
	}
	return func() {}
}

// toolAnswer is what the model reads back from a tool call.
type toolAnswer struct {
	OK       bool              `json:"ok"`
	Result   json.RawMessage   `json:"result,omitempty"`
	Problems []refusal.Problem `json:"problems,omitempty"`
	Error    string            `json:"error,omitempty"`
	Hint     string            `json:"hint,omitempty"`
	Example  json.RawMessage   `json:"example,omitempty"`
}

// ExampleHint introduces a tool's example input after a repeated refusal.
const ExampleHint = "A valid input looks like:"

// refusalKind tells a refused input (the schema, or no such tool) from a
// handler's refusal of a valid one.
type refusalKind string

const (
	refusedInput   refusalKind = "input"
	refusedHandler refusalKind = "handler"
)

// boundTool is a tool offered in one turn, its schema compiled.
type boundTool struct {
	Tool
	schema *schema
	// broken is why the schema could not be compiled; every call is then
	// refused rather than run unchecked.
	broken error
}

// runHandler runs the handler, turning a panic into an error so a faulty
// tool cannot take the server down.
func runHandler(ctx context.Context, t *boundTool, input json.RawMessage) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, fmt.Errorf("the tool %s panicked: %v", t.Name, p)
		}
	}()
	if t.Handler == nil {
		return nil, errors.New("the tool " + t.Name + " has no handler")
	}
	return t.Handler(ctx, input)
}
