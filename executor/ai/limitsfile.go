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

// limitsJSON is limits.json.
type limitsJSON struct {
	IdleMinutes float64 `json:"idleMinutes"`
	TurnMinutes float64 `json:"turnMinutes"`
}

// LimitsFile reads and writes limits.json. It is read afresh whenever it
// changed, so a change in Settings holds from the next turn on; while it
// is the same, what was read of it last is kept (atomicfile.Kept).
type LimitsFile struct {
	path string
	kept *atomicfile.Kept[readLimits]
}

// readLimits is what a read of limits.json found: the limits in force and
// why the defaults hold, when they do.
type readLimits struct {
	l   Limits
	why string
}

// NewLimitsFile is the limits file of the data folder root.
func NewLimitsFile(root string) *LimitsFile {
	path := filepath.Join(root, "launcher", LimitsFileName)
	return &LimitsFile{path: path, kept: atomicfile.NewKept(path, func(b []byte, err error) readLimits {
		l, why := parseLimits(b, err)
		return readLimits{l, why}
	})}
}

// Read is the limits in force: limits.json's, or the defaults (8 minutes
// idle, 20 minutes a turn) when it is missing or cannot be used, with the
// sentence that says why in the second case.
func (f *LimitsFile) Read() (Limits, string) {
	r := f.kept.Get()
	return r.l, r.why
}

// parseLimits is Read of limits.json's bytes, or of the error reading them.
func parseLimits(b []byte, err error) (Limits, string) {
	d := Limits{}.WithDefaults()
	if errors.Is(err, fs.ErrNotExist) {
		return d, ""
	}
	var in limitsJSON
	if err == nil {
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&in)
	}
	if err != nil {
		return d, fmt.Sprintf("%s could not be read (%v), so the default limits hold.", LimitsFileName, err)
	}
	if ps := checkLimits(in); len(ps) > 0 {
		return d, fmt.Sprintf("%s is not usable (%s), so the default limits hold.", LimitsFileName, refusal.Problems(ps).Error())
	}
	d.Idle, d.Wall = minutes(in.IdleMinutes), minutes(in.TurnMinutes)
	return d, ""
}

// Limits is the limits in force, for a turn.
func (f *LimitsFile) Limits() Limits {
	l, _ := f.Read()
	return l
}

// Save checks the idle and turn minutes as typed in Settings and writes
// them to a temporary file renamed over limits.json.
func (f *LimitsFile) Save(idle, turn string) error {
	var in limitsJSON
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
