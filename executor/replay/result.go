package replay

import (
	"context"
	"encoding/json"
	"fmt"

	"autoapp/knowledge"
)

// Result is a replay's finished runs, the two arms' tally and the verdict
// beside them, and the regression set's runs. Nothing in it is applied: it
// is evidence for the person who confirms the lesson.
type Result struct {
	// ManifestHash names the manifest blob every row of the replay names.
	ManifestHash string   `json:"manifestHash"`
	Manifest     Manifest `json:"manifest"`
	// Arms tally the with and without arms, in that order.
	Arms    []Arm   `json:"arms"`
	Verdict Verdict `json:"verdict"`
	// Runs are the arms' finished runs, in the order they ran.
	Runs []knowledge.ReplayRun `json:"runs"`
	// Regression are the regression set's finished runs.
	Regression []knowledge.ReplayRun `json:"regression"`
	// Stopped says the replay ended before every run finished.
	Stopped bool `json:"stopped,omitempty"`
}

// Arm is one arm's tally: its finished runs and how many passed.
type Arm struct {
	Arm    string `json:"arm"`
	Runs   int    `json:"runs"`
	Passed int    `json:"passed"`
}

// The verdicts: what the two arms say of the lesson.
const (
	// Helped: with the lesson more runs passed than without it.
	Helped = "helped"
	// NoDifference: as many passed, in proportion, with it as without.
	NoDifference = "no difference"
	// Worse: fewer passed with the lesson than without it.
	Worse = "worse"
	// Untested: an arm has no finished run, so there is nothing to compare.
	Untested = "untested"
)

// Verdict is what the arms say, in a word and a sentence. It is printed
// beside the arms and never applied.
type Verdict struct {
	Outcome  string `json:"outcome"`
	Sentence string `json:"sentence"`
}

// tally splits the runs into the arms and the regression set and works out
// the verdict.
func (r Result) tally() Result {
	with, without := Arm{Arm: knowledge.ArmWith}, Arm{Arm: knowledge.ArmWithout}
	var runs, regression []knowledge.ReplayRun
	for _, run := range append(r.Runs, r.Regression...) {
		switch run.Arm {
		case knowledge.ArmRegression:
			regression = append(regression, run)
			continue
		case knowledge.ArmWith:
			with.Runs++
			if run.Passed {
				with.Passed++
			}
		case knowledge.ArmWithout:
			without.Runs++
			if run.Passed {
				without.Passed++
			}
		}
		runs = append(runs, run)
	}
	r.Runs, r.Regression = runs, regression
	if r.Runs == nil {
		r.Runs = []knowledge.ReplayRun{}
	}
	if r.Regression == nil {
		r.Regression = []knowledge.ReplayRun{}
	}
	r.Arms = []Arm{with, without}
	r.Verdict = verdictOf(r.Manifest.Lesson != nil, with, without)
	return r
}

// verdictOf compares the arms' pass rates.
func verdictOf(tested bool, with, without Arm) Verdict {
	counts := fmt.Sprintf("with it %d of %d runs passed, without it %d of %d", with.Passed, with.Runs, without.Passed, without.Runs)
	switch {
	case !tested:
		return Verdict{Untested, "No lesson was under test: the case taught none, so only the without arm ran."}
	case with.Runs == 0 || without.Runs == 0:
		return Verdict{Untested, fmt.Sprintf("An arm has no finished run (%s), so there is nothing to compare.", counts)}
	}
	// with.Passed/with.Runs against without.Passed/without.Runs.
	a, b := with.Passed*without.Runs, without.Passed*with.Runs
	switch {
	case a > b:
		return Verdict{Helped, "The lesson helped: " + counts + "."}
	case a < b:
		return Verdict{Worse, "The lesson did not help: " + counts + "."}
	case without.Passed == without.Runs:
		return Verdict{NoDifference, "No difference: " + counts + "; the failure did not come back without the lesson either."}
	}
	return Verdict{NoDifference, "No difference: " + counts + "."}
}

// Latest is the newest replay that tested lesson id, as Replay answered
// it, and false when none has a finished run.
func (h *Harness) Latest(ctx context.Context, lessonID int64) (Result, bool, error) {
	hash, ok, err := h.d.Replays.LatestForLesson(ctx, lessonID)
	if err != nil || !ok {
		return Result{}, false, err
	}
	return h.Of(ctx, hash)
}

// Of is the replay whose manifest is hash, with the runs that finished.
func (h *Harness) Of(ctx context.Context, hash string) (Result, bool, error) {
	text, err := h.d.Replays.Manifest(ctx, hash)
	if err != nil {
		return Result{}, false, err
	}
	var m Manifest
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return Result{}, false, fmt.Errorf("replay: the manifest %s is not the JSON it should be: %w", short(hash), err)
	}
	runs, err := h.d.Replays.Runs(ctx, hash)
	if err != nil {
		return Result{}, false, err
	}
	planned := m.Runs
	if m.Lesson != nil {
		planned *= 2
	}
	planned += len(m.Regression)
	res := Result{ManifestHash: hash, Manifest: m, Runs: runs, Stopped: len(runs) < planned}
	return res.tally(), true, nil
}
