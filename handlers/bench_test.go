package handlers_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/intent"
)

// history gives the application n submitted intents of per tasks each,
// written through the services as the engineer would; most are done, as
// in a long history, and the newest few are still open.
func (s *server) history(tb testing.TB, n, per int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		var steps []planStep
		for j := range per {
			steps = append(steps, planStep{title: fmt.Sprintf("Change number %d of %d", j+1, i+1), priority: "medium"})
		}
		in, tasks := s.draft(tb, fmt.Sprintf("Request number %d: change the page.", i+1), intent.Analysis{Restated: []string{"Change it."}}, steps...)
		if err := s.backlog.Submit(ctx, in.ID); err != nil {
			tb.Fatal(err)
		}
		if i >= n-3 {
			continue // the newest stay submitted drafts
		}
		// Marked done as a run would leave it: the intent and its tasks.
		if _, err := s.db.Write.Exec(`UPDATE intents SET status = 'done' WHERE id = ?`, in.ID); err != nil {
			tb.Fatal(err)
		}
		for _, t := range tasks {
			if _, err := s.db.Write.Exec(`UPDATE tasks SET status = 'completed', ended_at = ? WHERE id = ?`, int64(i), t.ID); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
