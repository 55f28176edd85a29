package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"autoapp/intent/refusal"
)

// Cap is what an intent's runs may spend: dollars (where the models are
// priced), tokens and minutes of running (for every model, local ones
// included). A nil field caps nothing.
type Cap struct {
	Dollars *float64 `json:"dollars,omitempty"`
	Tokens  *int64   `json:"tokens,omitempty"`
	Minutes *float64 `json:"minutes,omitempty"`
}

// None says the cap caps nothing.
func (c Cap) None() bool { return c.Dollars == nil && c.Tokens == nil && c.Minutes == nil }

// The most a cap may say: far past anything a run spends, so that a typo
// is named rather than kept.
const (
	maxCapDollars = 1e6
	maxCapTokens  = 1e12
	maxCapMinutes = 365 * 24 * 60
)

// CapForm is a cap as the owner typed it; an empty field caps nothing.
type CapForm struct {
	Dollars, Tokens, Minutes string
}

// ParseCap checks a cap as typed: each field empty, or a number above 0
// ("$0.50", "200,000", "90"). Every problem is named, each field as the
// form labels it after prefix ("each intent's tokens").
func ParseCap(f CapForm, prefix string) (Cap, refusal.Problems) {
	var c Cap
	var ps refusal.Problems
	if s := strings.TrimSpace(f.Dollars); s != "" {
		v, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			ps = append(ps, refusal.Problem{Field: prefix + "US dollars", Message: fmt.Sprintf("%q is not a number of dollars", s)})
		case v <= 0:
			ps = append(ps, refusal.Problem{Field: prefix + "US dollars", Message: "a cap in dollars must be above 0, or left empty for none"})
		case v > maxCapDollars:
			ps = append(ps, refusal.Problem{Field: prefix + "US dollars", Message: fmt.Sprintf("%q is more than a million dollars", s)})
		default:
			c.Dollars = &v
		}
	}
	if s := strings.TrimSpace(f.Tokens); s != "" {
		v, err := strconv.ParseInt(strings.NewReplacer(",", "", "_", "", " ", "").Replace(s), 10, 64)
		switch {
		case err != nil:
			ps = append(ps, refusal.Problem{Field: prefix + "tokens", Message: fmt.Sprintf("%q is not a whole number of tokens", s)})
		case v <= 0:
			ps = append(ps, refusal.Problem{Field: prefix + "tokens", Message: "a cap in tokens must be above 0, or left empty for none"})
		case v > maxCapTokens:
			ps = append(ps, refusal.Problem{Field: prefix + "tokens", Message: fmt.Sprintf("%q is more than a trillion tokens", s)})
		default:
			c.Tokens = &v
		}
	}
	if s := strings.TrimSpace(f.Minutes); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			ps = append(ps, refusal.Problem{Field: prefix + "minutes of running", Message: fmt.Sprintf("%q is not a number of minutes", s)})
		case v <= 0:
			ps = append(ps, refusal.Problem{Field: prefix + "minutes of running", Message: "a cap in minutes must be above 0, or left empty for none"})
		case v > maxCapMinutes:
			ps = append(ps, refusal.Problem{Field: prefix + "minutes of running", Message: fmt.Sprintf("%q is more than a year of minutes", s)})
		default:
			c.Minutes = &v
		}
	}
	return c, ps
}

// Form is the cap as its form shows it.
func (c Cap) Form() CapForm {
	var f CapForm
	if c.Dollars != nil {
		f.Dollars = strconv.FormatFloat(*c.Dollars, 'f', -1, 64)
	}
	if c.Tokens != nil {
		f.Tokens = strconv.FormatInt(*c.Tokens, 10)
	}
	if c.Minutes != nil {
		f.Minutes = strconv.FormatFloat(*c.Minutes, 'f', -1, 64)
	}
	return f
}

// IntentCap is an intent's own cap, and whether the owner set one; an
// intent with none has the default of Settings.
func (s *Service) IntentCap(ctx context.Context, intentID int64) (Cap, bool, error) {
	var row struct {
		Dollars sql.NullFloat64 `db:"dollars"`
		Tokens  sql.NullInt64   `db:"tokens"`
		Minutes sql.NullFloat64 `db:"minutes"`
	}
	err := s.db.Read.GetContext(ctx, &row, `SELECT dollars, tokens, minutes FROM intent_caps WHERE intent_id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return Cap{}, false, nil
	}
	if err != nil {
		return Cap{}, false, fmt.Errorf("intent: cap of intent %d: %w", intentID, err)
	}
	var c Cap
	if row.Dollars.Valid {
		c.Dollars = &row.Dollars.Float64
	}
	if row.Tokens.Valid {
		c.Tokens = &row.Tokens.Int64
	}
	if row.Minutes.Valid {
		c.Minutes = &row.Minutes.Float64
	}
	return c, true, nil
}

// SetCap checks the owner's cap as typed and keeps it on the intent, in
// place of the default of Settings (every field empty caps nothing). It
// holds from the next request of a run going; a done or withdrawn
// intent's cap is refused, and every problem of the form is named.
func (s *Service) SetCap(ctx context.Context, intentID int64, f CapForm) error {
	c, ps := ParseCap(f, "")
	if len(ps) > 0 {
		return &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The cap was not saved: " + ps.Error() + "."}
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: set cap: %w", err)
	}
	defer tx.Rollback()
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return err
	}
	if in.Status == IntentDone || in.Status == IntentWithdrawn {
		return refuse(refusal.Conflict, "Intent #%d is %s: there is nothing left for a cap to bound.", intentID, in.Status)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO intent_caps (intent_id, dollars, tokens, minutes, set_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (intent_id) DO UPDATE SET dollars = excluded.dollars, tokens = excluded.tokens,
		   minutes = excluded.minutes, set_at = excluded.set_at`,
		intentID, c.Dollars, c.Tokens, c.Minutes, s.now().UnixMilli()); err != nil {
		return fmt.Errorf("intent: set cap: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: set cap: %w", err)
	}
	return nil
}

// RanFor is how long the intent's runs have run: each time from Run to
// the run's end, and the run going until now.
func (s *Service) RanFor(ctx context.Context, intentID int64) (time.Duration, error) {
	var events []struct {
		At   int64  `db:"at"`
		From string `db:"from_status"`
		To   string `db:"to_status"`
	}
	if err := s.db.Read.SelectContext(ctx, &events,
		`SELECT at, from_status, to_status FROM intent_events
		 WHERE intent_id = ? AND (to_status = 'running' OR from_status = 'running') ORDER BY id`, intentID); err != nil {
		return 0, fmt.Errorf("intent: how long intent %d ran: %w", intentID, err)
	}
	var ran time.Duration
	var since int64
	running := false
	for _, e := range events {
		if e.From == string(IntentRunning) && running {
			ran += time.Duration(e.At-since) * time.Millisecond
			running = false
		}
		if e.To == string(IntentRunning) {
			since, running = e.At, true
		}
	}
	if running {
		ran += max(s.now().Sub(time.UnixMilli(since)), 0)
	}
	return ran, nil
}

// Clone is a copy of c that shares nothing with it.
func (c Cap) Clone() Cap {
	var out Cap
	if c.Dollars != nil {
		v := *c.Dollars
		out.Dollars = &v
	}
	if c.Tokens != nil {
		v := *c.Tokens
		out.Tokens = &v
	}
	if c.Minutes != nil {
		v := *c.Minutes
		out.Minutes = &v
	}
	return out
}

// CapReached says reason is a cap's sentence (spend.Guard's): an intent's
// or the day's cap was reached. Attention's capStopped says the same in SQL.
func CapReached(reason string) bool {
	return (strings.HasPrefix(reason, "Intent #") && strings.Contains(reason, " reached its cap of ")) ||
		(strings.HasPrefix(reason, "Today's cap of ") && strings.Contains(reason, " is reached "))
}
