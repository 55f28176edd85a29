package intent_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/intent"
)

// BenchmarkBoundary is what a safe boundary costs a run whose intent has
// 10,000 receipts applied in its history and none waiting: the executor
// pays it before every turn.
func BenchmarkBoundary(b *testing.B) {
	e := mustOpen(b)
	in, _ := e.running(b, "notes", "Add tags")
	ctx := context.Background()
	for i := range 10000 {
		if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, fmt.Sprintf("r-%d", i), intent.InterventionPause, ""); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
				b.Fatal(err)
			}
			e.moveIntent(b, in.ID, intent.IntentRunning)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID)
		if err != nil || a.Stopped {
			b.Fatalf("%+v, %v", a, err)
		}
	}
}

// BenchmarkSubmitIntervention is one receipt written in the inbox.
func BenchmarkSubmitIntervention(b *testing.B) {
	e := mustOpen(b)
	in, _ := e.running(b, "notes", "Add tags")
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, fmt.Sprintf("r-%d", n), intent.InterventionFeedback, "Smaller steps."); err != nil {
			b.Fatal(err)
		}
	}
}
