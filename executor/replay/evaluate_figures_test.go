package replay

import (
	"encoding/json"
	"testing"

	"autoapp/executor/ai"
)

// The calls to the first build count to the first call that built: a
// cycle whose patch was refused built nothing; one whose build failed did.
func TestTheCallsToTheFirstBuildCountToTheFirstThatBuilt(t *testing.T) {
	cycle := func(step string) ai.Call {
		return ai.Call{Name: "candidate.cycle", OK: true, Result: json.RawMessage(`{"result": {"step": "` + step + `"}}`)}
	}
	for _, tc := range []struct {
		name  string
		calls []ai.Call
		want  int
	}{
		{"a refused patch, then a failed build", []ai.Call{{Name: "source.read", OK: true}, cycle("patch refused"), cycle("build failed")}, 3},
		{"a build first", []ai.Call{{Name: "candidate.build", OK: true}, cycle("checked")}, 1},
		{"a refused build call builds nothing", []ai.Call{{Name: "candidate.build"}, {Name: "source.edit", OK: true}, cycle("checked")}, 3},
		{"never built", []ai.Call{{Name: "source.read", OK: true}, cycle("patched")}, 0},
	} {
		if got := figures(tc.calls).FirstBuild; got != tc.want {
			t.Errorf("%s: first build at call %d, want %d", tc.name, got, tc.want)
		}
	}
}
