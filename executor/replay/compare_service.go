package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// ComparisonGoing is a comparison of models started from Settings: the
// one going, or the last that ended.
type ComparisonGoing struct {
	Models    []string
	Condition string
	Started   time.Time
	// Tasks is how many tasks each model runs.
	Tasks int
	// Now is the attempt going, nil between two.
	Now *CompareProgress
	// Finished are the models that finished every task, in the order they
	// did; Attempts counts the attempts judged so far.
	Finished []string
	Attempts int
	// Ended is zero while it goes; Problem says why it ended before every
	// model finished, "" when it finished.
	Ended   time.Time
	Problem string
}

// Going says it has not ended.
func (g ComparisonGoing) Going() bool { return g.Ended.IsZero() }

// Scorecard is what Settings shows of the comparisons: every model a
// provider offers, or a comparison measured, with its latest row, and the
// comparison started from Settings.
type Scorecard struct {
	// Models are the models the turned-on providers offer, then those
	// measured before that no provider offers now.
	Models []string
	// Latest is each measured model's newest row, by model.
	Latest map[string]knowledge.Score
	// Going is the comparison started from Settings that goes, or the
	// last that ended; nil when none was started since the launcher began.
	Going *ComparisonGoing
}

// Scorecard reads what Settings shows of the comparisons.
func (s *Service) Scorecard(ctx context.Context) (Scorecard, error) {
	if s.h.d.Scorecards == nil {
		return Scorecard{}, errors.New("replay: Settings' scorecard needs the scorecards' store")
	}
	latest, err := s.h.d.Scorecards.Latest(ctx)
	if err != nil {
		return Scorecard{}, err
	}
	sc := Scorecard{Models: s.h.Known(ctx), Latest: latest}
	var gone []string
	for m := range latest {
		if !slices.Contains(sc.Models, m) {
			gone = append(gone, m)
		}
	}
	slices.Sort(gone)
	sc.Models = append(sc.Models, gone...)
	s.mu.Lock()
	if g := s.compared; g != nil {
		cp := *g
		cp.Finished = slices.Clone(g.Finished)
		sc.Going = &cp
	}
	s.mu.Unlock()
	return sc, nil
}

// Compare compares models, Settings → Compare models, in the background
// under the default condition: it answers once the comparison has begun,
// refused with a sentence when fewer than two models are chosen, one of
// them is no model a provider offers, or a run, a replay or another
// comparison holds the place it would run in.
func (s *Service) Compare(ctx context.Context, models []string) error {
	refs, err := s.h.CheckModels(ctx, models)
	if err != nil {
		return err
	}
	// Refused before anything is made; StartComparison decides again,
	// under the executor's lock.
	if err := s.slot.CanCompare(); err != nil {
		return err
	}
	g := &ComparisonGoing{Models: refs, Condition: DefaultCompareCondition, Started: s.h.d.Now(), Tasks: len(compareTasks())}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.slot.StartComparison(ctx, func(ctx context.Context) {
		cmp, err := s.h.Compare(ctx, CompareOptions{Models: refs}, func(p CompareProgress) { s.heardCompare(g, p) })
		problem := s.compareProblem(cmp, err)
		s.mu.Lock()
		g.Ended, g.Now, g.Problem = s.h.d.Now(), nil, problem
		s.mu.Unlock()
	}); err != nil {
		return err
	}
	s.compared = g
	return nil
}

// heardCompare keeps what an attempt of g says as it starts and as it is
// judged, and each model that finished.
func (s *Service) heardCompare(g *ComparisonGoing, p CompareProgress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case p.Row != nil:
		g.Finished = append(g.Finished, p.Model)
	case !p.Done:
		g.Now = &p
	default:
		g.Now = nil
		g.Attempts++
	}
}

// compareProblem is the sentence for a comparison that ended with err; ""
// when it finished.
func (s *Service) compareProblem(cmp Comparison, err error) string {
	switch r, ok := refusal.As(err); {
	case err == nil:
		return ""
	case errors.Is(err, ErrStopped):
		return fmt.Sprintf("The launcher stopped during the comparison; the %d models that finished have their row, the one cut short has none.", len(cmp.Rows))
	case ok:
		return r.Message
	default:
		s.log.Error("the comparison could not finish", "models", cmp.Models, "err", err)
		return fmt.Sprintf("The comparison could not finish; the %d models that finished have their row, and the launcher's log has the detail.", len(cmp.Rows))
	}
}
