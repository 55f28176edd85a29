package verdict_test

import (
	"strconv"
	"strings"
	"testing"

	"autoapp/executor/verdict"
)

func TestDecideAppliesTheAttemptPolicy(t *testing.T) {
	missing := "No example named 0002-heading-c2 was run."
	failed := func(passed, total int) verdict.Verdict {
		return verdict.Verdict{Reasons: []string{missing}, Passed: passed, Total: total}
	}
	tests := []struct {
		name  string
		run   []verdict.Attempt
		turns int
		v     verdict.Verdict
		want  verdict.Decision
	}{
		{"completed", nil, 1, verdict.Verdict{Completed: true, Passed: 2, Total: 2},
			verdict.Decision{Outcome: verdict.Complete}},
		{"a first attempt that did not complete is counted", nil, 1, failed(3, 5),
			verdict.Decision{Outcome: verdict.Retry, Counted: true, Note: "another attempt: " + missing}},
		{"it got further than every earlier attempt", []verdict.Attempt{{Passed: 1, Counted: true}}, 2, failed(3, 5),
			verdict.Decision{Outcome: verdict.Retry, Note: "another attempt: it got further (3 of 5)"}},
		{"as far as an earlier attempt is not further", []verdict.Attempt{{Passed: 0, Counted: true}, {Passed: 3}}, 3, failed(3, 5),
			verdict.Decision{Outcome: verdict.Fail, Counted: true, Note: verdict.CountedSentence}},
		{"two counted attempts fail the task", []verdict.Attempt{{Passed: 0, Counted: true}}, 2, failed(0, 2),
			verdict.Decision{Outcome: verdict.Fail, Counted: true, Note: "2 attempts in this run did not complete the task."}},
		{"the ceiling, however much it improves", []verdict.Attempt{{Passed: 1, Counted: true}, {Passed: 2}, {Passed: 3}}, 4, failed(4, 5),
			verdict.Decision{Outcome: verdict.Fail, Note: "The task reached its ceiling of 4 turns."}},
		{"the ceiling counts the turns of earlier runs", nil, 4, failed(0, 2),
			verdict.Decision{Outcome: verdict.Fail, Counted: true, Note: verdict.CeilingSentence}},
		{"an uncounted attempt leaves room for another", []verdict.Attempt{{Passed: 1, Counted: true}, {Passed: 2}}, 3, failed(3, 5),
			verdict.Decision{Outcome: verdict.Retry, Note: "another attempt: it got further (3 of 5)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict.Decide(tt.run, tt.turns, tt.v); got != tt.want {
				t.Errorf("decision\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestThePolicySentencesSayItsNumbers(t *testing.T) {
	if !strings.Contains(verdict.CeilingSentence, " "+strconv.Itoa(verdict.MaxTurns)+" turns") {
		t.Errorf("%q does not say MaxTurns (%d)", verdict.CeilingSentence, verdict.MaxTurns)
	}
	if !strings.HasPrefix(verdict.CountedSentence, strconv.Itoa(verdict.MaxCounted)+" attempts") {
		t.Errorf("%q does not say MaxCounted (%d)", verdict.CountedSentence, verdict.MaxCounted)
	}
}
