package ai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
)

// tokenCap is a cap of limit tokens over the turn, as the host's guard
// answers one: what is left after the usage so far and the request's input.
func tokenCap(limit int, asked *[]int) ai.Cap {
	return func(used ai.Usage, input int) ai.Room {
		*asked = append(*asked, input)
		spent := used.Input + used.Output + input
		if spent >= limit {
			return ai.Room{Refused: fmt.Sprintf("The cap of %d tokens is reached (spent %d).", limit, used.Input+used.Output)}
		}
		return ai.Room{Output: limit - spent, Reached: func(u ai.Usage) string {
			return fmt.Sprintf("The cap of %d tokens was crossed (spent %d).", limit, u.Input+u.Output)
		}}
	}
}

func TestACapCrossedWhileTheModelStreamsCutsTheStreamAndEndsTheTurn(t *testing.T) {
	s := scripted.New(t)
	long := strings.Repeat("word ", 400)
	s.On(scripted.Any(),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source.read", Args: `{"path":"main.go"}`}}, Usage: scripted.Usage{Input: 300, Output: 20}},
		scripted.Reply{Text: long, Every: 2 * time.Millisecond, Usage: scripted.Usage{Input: 400, Output: 400}},
		scripted.Reply{Text: "never asked"})
	tr, _ := realTurn(s, ai.Limits{Idle: 10 * time.Second, Wall: 30 * time.Second}, readTool(nil))
	var asked []int
	tr.Cap = tokenCap(700, &asked)

	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndCap {
		t.Fatalf("ended %s (%q), want the cap to end the turn", res.Ended, res.Sentence)
	}
	if s.Count() != 2 {
		t.Fatalf("%d requests, want the second one cut and no third asked", s.Count())
	}
	pieces, finished := s.Streamed(2)
	if finished || pieces >= 400 {
		t.Fatalf("the second answer streamed %d pieces (finished %v), want it cut short", pieces, finished)
	}
	if len(asked) != 2 || asked[0] <= 0 || asked[1] <= asked[0] {
		t.Errorf("the cap was asked with inputs %v, want one estimate a request, the second longer", asked)
	}
	// The first step's reported usage, then the cut request's floor: its
	// estimated input and the pieces the turn read before the cut.
	room := 700 - 320 - asked[1]
	if !res.Usage.Partial || res.Usage.Input != 300+asked[1] || res.Usage.Output <= 20+room || res.Usage.Output > 20+room+3 {
		t.Errorf("usage %+v, want 320 reported, the cut request's input %d and %d to %d pieces, partial", res.Usage, asked[1], room+1, room+3)
	}
	if want := fmt.Sprintf("The cap of 700 tokens was crossed (spent %d).", res.Usage.Input+res.Usage.Output); res.Sentence != want {
		t.Errorf("sentence %q, want %q", res.Sentence, want)
	}
}

func TestARequestWhoseInputDoesNotFitTheCapIsNeverSent(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), call("source.read", `{"path":"main.go"}`), text("never asked"))
	tr, _ := realTurn(s, ai.Limits{}, readTool(nil))
	var asked []int
	// The first request fits; its usage (110) and the second's input do not.
	tr.Cap = func(used ai.Usage, input int) ai.Room {
		return tokenCap(input+100, &asked)(used, input)
	}

	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndCap || s.Count() != 1 {
		t.Fatalf("ended %s after %d requests, want the cap to refuse the second before it is sent", res.Ended, s.Count())
	}
	if !strings.HasPrefix(res.Sentence, "The cap of ") || !strings.Contains(res.Sentence, "(spent 110)") {
		t.Errorf("sentence %q, want the cap's own, with what was spent", res.Sentence)
	}
	if len(res.Calls) != 1 || !res.Calls[0].OK {
		t.Errorf("calls %+v, want the first step's tool call run", res.Calls)
	}
}

func TestACapInTimeCutsTheRequestWhereItFalls(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Text: "slow answer", FirstToken: 5 * time.Second})
	tr, _ := realTurn(s, ai.Limits{Idle: time.Minute, Wall: time.Minute})
	until := time.Now().Add(300 * time.Millisecond)
	tr.Cap = func(ai.Usage, int) ai.Room {
		return ai.Room{Output: -1, Until: until, Reached: func(ai.Usage) string { return "The cap of time was reached." }}
	}
	began := time.Now()
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndCap || res.Sentence != "The cap of time was reached." {
		t.Fatalf("ended %s (%q), want the cap in time", res.Ended, res.Sentence)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the turn took %s, want it cut at the cap's time, not at the model's first token", took)
	}
}
