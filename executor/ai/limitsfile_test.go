package ai_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/intent/refusal"
)

func TestTheLimitsFileHoldsTheOwnersLimitsOrSaysWhyTheDefaultsHold(t *testing.T) {
	root := t.TempDir()
	f := ai.NewLimitsFile(root)
	if l, problem := f.Read(); l.Idle != 8*time.Minute || l.Wall != 20*time.Minute || problem != "" {
		t.Fatalf("a missing file: %+v %q, want the defaults and no problem", l, problem)
	}
	if err := f.Save("0.05", "0.5"); err != nil {
		t.Fatal(err)
	}
	if l, problem := f.Read(); l.Idle != 3*time.Second || l.Wall != 30*time.Second || problem != "" {
		t.Fatalf("saved: %+v %q", l, problem)
	}
	for name, text := range map[string]string{
		"not JSON":      `{"idleMinutes": 8,`,
		"unknown field": `{"idleMinutes": 8, "turnMinutes": 20, "steps": 3}`,
		"out of bounds": `{"idleMinutes": 0, "turnMinutes": 20}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(root, "launcher", ai.LimitsFileName), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			l, problem := f.Read()
			if l.Idle != 8*time.Minute || l.Wall != 20*time.Minute || !strings.Contains(problem, "so the default limits hold") {
				t.Errorf("%+v %q, want the defaults with the reason", l, problem)
			}
		})
	}
	err := f.Save("eight", "-1")
	le, ok := refusal.As(err)
	if !ok || le.Code != refusal.Invalid || len(le.Problems) != 2 || le.Problems[0].Field != "idleMinutes" || le.Problems[1].Field != "turnMinutes" {
		t.Fatalf("Save = %v, want both fields named", err)
	}
}

// limits.json is kept between reads while it is the same, and whatever
// changes it shows on the next turn's read: Save, an edit by hand, its
// removal.
func TestAChangeOfTheLimitsFileHoldsFromTheNextRead(t *testing.T) {
	root := t.TempDir()
	f := ai.NewLimitsFile(root)
	want := func(idle, wall time.Duration) {
		t.Helper()
		if l := f.Limits(); l.Idle != idle || l.Wall != wall {
			t.Fatalf("the limits are %v idle, %v a turn; want %v and %v", l.Idle, l.Wall, idle, wall)
		}
	}
	want(8*time.Minute, 20*time.Minute)
	if err := f.Save("1", "2"); err != nil {
		t.Fatal(err)
	}
	want(time.Minute, 2*time.Minute)
	want(time.Minute, 2*time.Minute)
	// Another LimitsFile of the same root (the launcher's settings page and
	// its executor each may hold one) saves, and this one sees it.
	if err := ai.NewLimitsFile(root).Save("3", "4"); err != nil {
		t.Fatal(err)
	}
	want(3*time.Minute, 4*time.Minute)
	path := filepath.Join(root, "launcher", ai.LimitsFileName)
	if err := os.WriteFile(path, []byte(`{"idleMinutes": 5, "turnMinutes": 60}`), 0o600); err != nil {
		t.Fatal(err)
	}
	want(5*time.Minute, time.Hour)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	want(8*time.Minute, 20*time.Minute)
}
