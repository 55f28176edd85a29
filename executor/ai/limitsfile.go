package ai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
)

// LimitsFileName is the turn limits the owner sets in Settings, in
// <root>/launcher.
const LimitsFileName = "limits.json"

// Bounds of what limits.json may say, in minutes: a few seconds (for a
// test) to a day.
const (
	minLimitMinutes = 0.05
	maxLimitMinutes = 24 * 60
)

// MaxRunsAtOnce is the most runs Settings lets go at once.
const MaxRunsAtOnce = 8

// limitsJSON is limits.json. RunsAtOnce is how many intents of different
// applications may run at once; absent, one.
type limitsJSON struct {
	IdleMinutes float64 `json:"idleMinutes"`
	TurnMinutes float64 `json:"turnMinutes"`
	RunsAtOnce  int     `json:"runsAtOnce,omitempty"`
}

// LimitsFile reads and writes limits.json. It is read afresh whenever it
// changed, so a change in Settings holds from the next turn on; while it
// is the same, what was read of it last is kept (atomicfile.Kept).
type LimitsFile struct {
	path string
	kept *atomicfile.Kept[readLimits]
}

// readLimits is what a read of limits.json found: the limits in force,
// why the defaults hold when they do, and the file as written (for a save
// of one part to keep the other).
type readLimits struct {
	l    Limits
	why  string
	runs int
	in   limitsJSON
}

// NewLimitsFile is the limits file of the data folder root.
func NewLimitsFile(root string) *LimitsFile {
	path := filepath.Join(root, "launcher", LimitsFileName)
	return &LimitsFile{path: path, kept: atomicfile.NewKept(path, func(b []byte, err error) readLimits {
		return parseLimits(b, err)
	})}
}

// Read is the limits in force: limits.json's, or the defaults (8 minutes
// idle, 20 minutes a turn) when it is missing or cannot be used, with the
// sentence that says why in the second case.
func (f *LimitsFile) Read() (Limits, string) {
	r := f.kept.Get()
	return r.l, r.why
}

// RunsAtOnce is how many intents (each of a different application) may
// run at once: limits.json's runsAtOnce, or 1 when it is absent or the
// file cannot be used.
func (f *LimitsFile) RunsAtOnce() int {
	return f.kept.Get().runs
}

// parseLimits is Read of limits.json's bytes, or of the error reading them.
func parseLimits(b []byte, err error) readLimits {
	d := Limits{}.WithDefaults()
	if errors.Is(err, fs.ErrNotExist) {
		return readLimits{l: d, runs: 1}
	}
	var in limitsJSON
	if err == nil {
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&in)
	}
	if err != nil {
		return readLimits{l: d, runs: 1, why: fmt.Sprintf("%s could not be read (%v), so the default limits hold.", LimitsFileName, err)}
	}
	if ps := checkLimits(in); len(ps) > 0 {
		return readLimits{l: d, runs: 1, why: fmt.Sprintf("%s is not usable (%s), so the default limits hold.", LimitsFileName, refusal.Problems(ps).Error())}
	}
	d.Idle, d.Wall = minutes(in.IdleMinutes), minutes(in.TurnMinutes)
	return readLimits{l: d, runs: max(in.RunsAtOnce, 1), in: in}
}

// Limits is the limits in force, for a turn.
func (f *LimitsFile) Limits() Limits {
	l, _ := f.Read()
	return l
}

// Save checks the idle and turn minutes as typed in Settings and writes
// them to a temporary file renamed over limits.json.
func (f *LimitsFile) Save(idle, turn string) error {
	in := f.kept.Get().in
	var ps []refusal.Problem
	read := func(field, text string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			ps = append(ps, refusal.Problem{Field: field, Message: fmt.Sprintf("%q is not a number of minutes", text)})
		case v < minLimitMinutes || v > maxLimitMinutes:
			ps = append(ps, boundProblem(field, v))
		}
		return v
	}
	in.IdleMinutes, in.TurnMinutes = read("idleMinutes", idle), read("turnMinutes", turn)
	if len(ps) == 0 {
		ps = checkLimits(in)
	}
	if len(ps) > 0 {
		return &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The limits were not saved: " + refusal.Problems(ps).Error() + "."}
	}
	return f.write(in)
}

// SaveRunsAtOnce checks how many runs may go at once, as typed in
// Settings (1 to MaxRunsAtOnce), and writes it beside the turn limits.
func (f *LimitsFile) SaveRunsAtOnce(text string) error {
	r := f.kept.Get()
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < 1 || n > MaxRunsAtOnce {
		p := refusal.Problem{Field: "runsAtOnce", Message: fmt.Sprintf("%q is not a whole number from 1 to %d", text, MaxRunsAtOnce)}
		return &refusal.Error{Code: refusal.Invalid, Problems: []refusal.Problem{p}, Message: "Runs at once was not saved: " + p.Message + "."}
	}
	in := r.in
	if r.why != "" || in.IdleMinutes == 0 {
		// The turn limits in force are written beside it, so that the
		// file is whole.
		in.IdleMinutes, in.TurnMinutes = r.l.Idle.Minutes(), r.l.Wall.Minutes()
	}
	in.RunsAtOnce = n
	return f.write(in)
}

func (f *LimitsFile) write(in limitsJSON) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("ai: limits: %w", err)
	}
	if err := atomicfile.Write(f.path, append(b, '\n')); err != nil {
		return fmt.Errorf("ai: limits: %w", err)
	}
	return nil
}

func checkLimits(in limitsJSON) []refusal.Problem {
	var ps []refusal.Problem
	bound := func(field string, v float64) {
		if v < minLimitMinutes || v > maxLimitMinutes {
			ps = append(ps, boundProblem(field, v))
		}
	}
	bound("idleMinutes", in.IdleMinutes)
	bound("turnMinutes", in.TurnMinutes)
	if in.RunsAtOnce < 0 || in.RunsAtOnce > MaxRunsAtOnce {
		ps = append(ps, refusal.Problem{Field: "runsAtOnce", Message: fmt.Sprintf("%d runs at once is not between 1 and %d", in.RunsAtOnce, MaxRunsAtOnce)})
	}
	if len(ps) == 0 && in.IdleMinutes > in.TurnMinutes {
		ps = append(ps, refusal.Problem{Field: "idleMinutes", Message: fmt.Sprintf("%g minutes without a tool call is longer than the turn (%g minutes)", in.IdleMinutes, in.TurnMinutes)})
	}
	return ps
}

func boundProblem(field string, v float64) refusal.Problem {
	return refusal.Problem{Field: field, Message: fmt.Sprintf("%g minutes is not between %g and %d", v, minLimitMinutes, maxLimitMinutes)}
}

func minutes(m float64) time.Duration {
	return time.Duration(m * float64(time.Minute)).Round(time.Millisecond)
}

// Minutes writes d as a number of minutes for a form: "8", "0.5".
func Minutes(d time.Duration) string {
	return strconv.FormatFloat(d.Minutes(), 'f', -1, 64)
}
