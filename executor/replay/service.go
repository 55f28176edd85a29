package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// Slot is where a replay started from the Knowledge page runs in the
// background (*executor.Executor): it holds one run or one replay at a
// time per launcher, and stops the replay when the launcher stops.
type Slot interface {
	CanReplay() error
	StartReplay(ctx context.Context, what string, replay func(ctx context.Context)) error
	// CanCompare and StartComparison are the same for a comparison of
	// models started from Settings.
	CanCompare() error
	StartComparison(ctx context.Context, compare func(ctx context.Context)) error
}

// Service is replay as the Knowledge page offers it: a lesson with the
// evidence a person confirms it on (its latest replay, the replay of it
// going), and Replay this lesson, which runs in the background like a run
// and can be followed while it goes.
type Service struct {
	h        *Harness
	slot     Slot
	servings *knowledge.Servings
	log      *slog.Logger

	mu sync.Mutex
	// last is the replay started here that goes, or the last that ended.
	last *Going
	// compared is the comparison started here that goes, or the last that
	// ended.
	compared *ComparisonGoing
}

// NewService builds the page's side of the harness h; replays run in
// slot, and a lesson's servings are read from servings.
func NewService(h *Harness, slot Slot, servings *knowledge.Servings, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{h: h, slot: slot, servings: servings, log: log}
}

// Going is a replay started from the page: the one going, or the last
// that ended.
type Going struct {
	LessonID, CaseID int64
	Started          time.Time
	// Total is how many runs it plans: both arms and the regression set.
	Total int
	// Judged are its runs judged so far, in the order they ran; Now is the
	// run going, nil between two runs.
	Judged []Progress
	Now    *Progress
	// Ended is zero while it goes.
	Ended time.Time
	// Problem says why it ended before every run finished; "" when it
	// finished.
	Problem string
}

// Going says it has not ended.
func (g Going) Going() bool { return g.Ended.IsZero() }

// Plan is what Replay this lesson would spend: Runs runs an arm on the
// lesson's case, then one run for each case of the regression set.
type Plan struct {
	CaseID     int64
	Runs       int
	Regression int
	// Cannot says why the lesson cannot be replayed from the page; ""
	// when it can.
	Cannot string
}

// Turns is how many turns of the engineer the replay spends: two arms of
// Runs, then the regression set.
func (p Plan) Turns() int { return 2*p.Runs + p.Regression }

// LessonPage is a lesson as its page shows it: with its case, where it
// was served, its latest replay and the replay of it going.
type LessonPage struct {
	Lesson knowledge.Lesson
	// Case is the case it was distilled from; nil when written by hand or
	// the case is gone.
	Case     *knowledge.Case
	Servings []knowledge.Serving
	// Counts are its servings by outcome; Versions the corpus versions
	// that name it, oldest first.
	Counts   knowledge.ServingCounts
	Versions []knowledge.CorpusVersion
	// Latest is the newest replay that tested the lesson and finished a
	// run; nil when none did.
	Latest *Result
	// Going is the replay of the lesson started from the page that goes,
	// or the last one if it ended; nil when the page started none.
	Going *Going
	Plan  Plan
}

// Lesson reads lesson id's page.
func (s *Service) Lesson(ctx context.Context, id int64) (LessonPage, error) {
	l, err := s.h.d.Lessons.Get(ctx, id)
	if err != nil {
		return LessonPage{}, err
	}
	p := LessonPage{Lesson: l}
	if l.CaseID != 0 {
		c, err := s.h.d.Cases.Get(ctx, l.CaseID)
		switch {
		case err == nil:
			p.Case = &c
		case !isRefusal(err):
			return LessonPage{}, err
		}
	}
	if p.Servings, err = s.servings.ForLesson(ctx, id); err != nil {
		return LessonPage{}, err
	}
	counts, err := s.servings.Counts(ctx, id)
	if err != nil {
		return LessonPage{}, err
	}
	p.Counts = counts[id]
	if p.Versions, err = s.h.d.Lessons.Versions(ctx, id); err != nil {
		return LessonPage{}, err
	}
	latest, ok, err := s.h.Latest(ctx, id)
	if err != nil {
		return LessonPage{}, err
	}
	if ok {
		p.Latest = &latest
	}
	if p.Plan, err = s.plan(ctx, l, p.Case); err != nil {
		return LessonPage{}, err
	}
	s.mu.Lock()
	if g := s.last; g != nil && g.LessonID == id {
		cp := *g
		cp.Judged = append([]Progress(nil), g.Judged...)
		p.Going = &cp
	}
	s.mu.Unlock()
	return p, nil
}

// plan is what replaying lesson l, from case c, would spend, or why it
// cannot be replayed from the page.
func (s *Service) plan(ctx context.Context, l knowledge.Lesson, c *knowledge.Case) (Plan, error) {
	p := Plan{CaseID: l.CaseID, Runs: DefaultRuns}
	switch {
	case l.MethodUnclear:
		p.Cannot = "This is a note on the way of working, never served to a turn, so there is nothing to replay."
	case !l.Servable():
		p.Cannot = fmt.Sprintf("Lesson %d is %s; only a provisional or confirmed lesson can be replayed.", l.ID, l.Status)
	case l.CaseID == 0:
		p.Cannot = fmt.Sprintf("Lesson %d was written by hand and comes from no case: replay it on a case it is for with autoapp knowledge replay <caseId> --with %d.", l.ID, l.ID)
	case c == nil:
		p.Cannot = fmt.Sprintf("Case %d, which lesson %d came from, is no longer kept, so there is nothing to replay it on.", l.CaseID, l.ID)
	}
	if p.Cannot != "" {
		return p, nil
	}
	set, err := s.h.d.Replays.RegressionSet(ctx, c.AppID, c.ID)
	if err != nil {
		return Plan{}, err
	}
	p.Regression = len(set)
	return p, nil
}

// Start replays lesson id on its case, DefaultRuns runs an arm and then
// the regression set, in the background: it answers once the replay has
// begun, refused with a sentence when it cannot begin, and while a run or
// another replay goes.
func (s *Service) Start(ctx context.Context, id int64) error {
	l, err := s.h.d.Lessons.Get(ctx, id)
	if err != nil {
		return err
	}
	var c *knowledge.Case
	if l.CaseID != 0 {
		k, err := s.h.d.Cases.Get(ctx, l.CaseID)
		if err == nil {
			c = &k
		} else if !isRefusal(err) {
			return err
		}
	}
	p, err := s.plan(ctx, l, c)
	if err != nil {
		return err
	}
	if p.Cannot != "" {
		return refuse(refusal.Conflict, "%s", p.Cannot)
	}
	// Refused before the case is read, when a run or a replay goes;
	// StartReplay decides again, under the executor's lock.
	if err := s.slot.CanReplay(); err != nil {
		return err
	}
	b, err := s.h.begin(ctx, l.CaseID, Options{With: l.ID, Runs: p.Runs})
	if err != nil {
		return err
	}
	g := &Going{LessonID: l.ID, CaseID: l.CaseID, Started: s.h.d.Now(), Total: len(b.plan)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.slot.StartReplay(ctx, fmt.Sprintf("A replay of lesson %d", l.ID), func(ctx context.Context) {
		res, err := s.h.run(ctx, b, func(p Progress) { s.heard(g, p) })
		problem := s.problem(l.ID, res, err)
		s.mu.Lock()
		g.Ended, g.Now, g.Problem = s.h.d.Now(), nil, problem
		s.mu.Unlock()
	}); err != nil {
		return err
	}
	s.last = g
	return nil
}

// heard keeps what a run of g says as it starts and as it is judged.
func (s *Service) heard(g *Going, p Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !p.Done {
		g.Now = &p
		return
	}
	g.Now = nil
	g.Judged = append(g.Judged, p)
}

// problem is the sentence for a replay that ended with err; "" when it
// finished.
func (s *Service) problem(lessonID int64, res Result, err error) string {
	kept := len(res.Runs) + len(res.Regression)
	switch r, ok := refusal.As(err); {
	case err == nil:
		return ""
	case errors.Is(err, ErrStopped):
		return fmt.Sprintf("The launcher stopped during the replay; the %d runs that finished are kept, the one cut short left nothing.", kept)
	case ok:
		return r.Message
	default:
		s.log.Error("the replay could not finish", "lesson", lessonID, "err", err)
		return fmt.Sprintf("The replay could not finish; the %d runs that finished are kept, and the launcher's log has the detail.", kept)
	}
}
