package verdict

import "fmt"

// The attempt policy's limits.
const (
	// MaxCounted is how many counted attempts of one run fail the task.
	MaxCounted = 2
	// MaxTurns is the ceiling of turns a task gets in one run, however
	// much each improves.
	MaxTurns = 4
)

// Attempt is one earlier attempt of a task in this run: how many criteria
// it passed, and whether it counted towards MaxCounted.
type Attempt struct {
	Passed  int
	Counted bool
}

// Outcome is what happens to a task after a verdict.
type Outcome string

// The outcomes of a verdict.
const (
	// Complete: the task is completed; the run goes on to the next.
	Complete Outcome = "complete"
	// Retry: another attempt, told the reasons.
	Retry Outcome = "retry"
	// Fail: the task is failed with its reasons and the run stops.
	Fail Outcome = "fail"
)

// Decision is the outcome of a verdict under the attempt policy.
type Decision struct {
	Outcome Outcome
	// Counted says this attempt counts towards MaxCounted.
	Counted bool
	// Note is for the task's history: "another attempt: …" for a retry,
	// why the task failed for a failure.
	Note string
}

// Why a task failed under the policy; the numbers are MaxTurns and
// MaxCounted, which a test holds them to.
const (
	CeilingSentence = "The task reached its ceiling of 4 turns."
	CountedSentence = "2 attempts in this run did not complete the task."
)

// Decide applies the attempt policy. run are this run's earlier attempts
// of the task, oldest first; turns are the task's turns so far in this
// run, this one included. A completed verdict completes the task.
// Otherwise the attempt counts, unless it passed more criteria than every
// earlier attempt of this run; the second counted attempt of a run, or the
// MaxTurns-th turn, fails the task; anything else is another attempt.
func Decide(run []Attempt, turns int, v Verdict) Decision {
	if v.Completed {
		return Decision{Outcome: Complete}
	}
	further := len(run) > 0
	counted := 0
	for _, a := range run {
		if v.Passed <= a.Passed {
			further = false
		}
		if a.Counted {
			counted++
		}
	}
	d := Decision{Counted: !further}
	if d.Counted {
		counted++
	}
	switch {
	case counted >= MaxCounted:
		d.Outcome, d.Note = Fail, CountedSentence
	case turns >= MaxTurns:
		d.Outcome, d.Note = Fail, CeilingSentence
	case further:
		d.Outcome, d.Note = Retry, fmt.Sprintf("another attempt: it got further (%d of %d)", v.Passed, v.Total)
	default:
		d.Outcome, d.Note = Retry, "another attempt"
		if len(v.Reasons) > 0 {
			d.Note += ": " + v.Reasons[0]
		}
	}
	return d
}
