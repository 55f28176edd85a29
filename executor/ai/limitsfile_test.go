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
