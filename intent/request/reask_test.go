package request_test

import (
	"context"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/request"
)

// TestAnAnsweredQuestionIsAskedAgainOnlyWhenTheEngineerAsksIt: the owner
// answers one of two questions; a turn that ends without writing the
// analysis again (it still lists both) leaves that question answered, and
// the other open. Once the engineer writes the analysis again asking it,
// it is a question again. (Before, the turn's end journaled the answered
// question anew, and the Request page asked it again.)
func TestAnAnsweredQuestionIsAskedAgainOnlyWhenTheEngineerAsksIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	questions := []string{"Can a note have several tags?", "Should tags be shared between notes?"}
	in, err := e.backlog.OpenDraft(ctx, "notes", "Add tags", intent.Analysis{Restated: []string{"Notes get tags."}, Questions: questions})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	if st, err = e.svc.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	second := st.OpenAnalysisQuestions()[1].Revision
	e.clock.Advance(time.Minute)
	if st, err = e.svc.AnswerQuestion(ctx, st.ID, st.Revision, e.op(), second, "No, each note has its own."); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	if st, err = e.svc.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if open := st.OpenAnalysisQuestions(); len(open) != 1 || open[0].Text != questions[0] {
		t.Fatalf("after a turn that did not write the analysis again, open: %+v", open)
	}

	e.clock.Advance(time.Minute)
	if _, err := e.backlog.OpenDraft(ctx, "notes", "", intent.Analysis{Restated: []string{"Notes get tags."}, Questions: questions[1:]}); err != nil {
		t.Fatal(err)
	}
	if st, err = e.svc.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	// The engineer dropped the first question and asks the second again.
	asking := st.Asking(questions[1:])
	if len(asking) != 1 || asking[0].Text != questions[1] || asking[0].Revision == second {
		t.Fatalf("after the engineer asked again, asking: %+v", asking)
	}
}
