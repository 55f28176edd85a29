package replay_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"autoapp/executor/replay"
	"autoapp/intent/refusal"
)

// An evaluation is refused, with a sentence and before it writes a folder
// or asks the model anything, when it cannot be what was asked for.
func TestAnEvaluationIsRefusedBeforeAnythingRunsOrIsWritten(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		bare bool
		o    replay.EvaluateOptions
		code refusal.Code
		want string
	}{
		{"eleven runs a cell", false, replay.EvaluateOptions{Runs: 11}, refusal.Invalid, "Give between 1 and 10 runs a task and condition."},
		{"a negative number of runs", false, replay.EvaluateOptions{Runs: -1}, refusal.Invalid, "Give between 1 and 10 runs a task and condition."},
		{"no Settings model", true, replay.EvaluateOptions{Runs: 1}, refusal.Conflict,
			"No model is chosen in Settings: an evaluation runs on the Settings model, so choose one first."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r *root
			if tt.bare {
				r = bareRoot(t)
			} else {
				r = newRoot(t)
			}
			asked := r.model.Requests()
			ev, err := r.l.Replays.Evaluate(context.Background(), tt.o, nil)
			var re *refusal.Error
			if !errors.As(err, &re) || re.Code != tt.code || re.Message != tt.want {
				t.Fatalf("evaluate: %v, want the %s refusal %q", err, tt.code, tt.want)
			}
			if ev.Dir != "" || len(ev.Runs) != 0 {
				t.Errorf("a refused evaluation answered %+v", ev)
			}
			if _, err := os.Stat(filepath.Join(r.dir, "evaluate")); !os.IsNotExist(err) {
				t.Errorf("a refused evaluation made its folder: %v", err)
			}
			if n := len(r.model.Requests()) - len(asked); n != 0 {
				t.Errorf("a refused evaluation asked the model %d times", n)
			}
		})
	}
}
