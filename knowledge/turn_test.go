package knowledge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

func TestRecordTurnKeepsEachTextOnceAndGivesItBackAsDelivered(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	digest := "Application: notes\nRelease: r7 (schema 3)\nNext: candidate.build"
	evidence := "Routes: GET /notes src/routes.go:12 — naïve ✓"
	first := knowledge.Turn{AppID: "notes", RunID: "run-1", Kind: knowledge.TurnBuilder,
		Instructions: "You are the engineer.", Request: "add tags to notes",
		Documents: []knowledge.DeliveredDoc{
			{Ref: "digest:notes", Title: "Orientation", Text: digest},
			{Ref: "evidence:notes", Title: "Task evidence", Text: evidence, Cut: true},
		}}
	id1, err := e.store.RecordTurn(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(e.clock.Now().Add(time.Minute))
	// The same instructions and digest, a new evidence text, another app.
	second := first
	second.AppID, second.RunID, second.Kind = "shop", "", knowledge.TurnChat
	second.Documents = []knowledge.DeliveredDoc{{Ref: "digest:notes", Title: "Orientation", Text: digest}, {Ref: "evidence:shop", Text: "nothing matched"}}
	id2, err := e.store.RecordTurn(ctx, second)
	if err != nil {
		t.Fatal(err)
	}

	// instructions, digest, evidence, "nothing matched": four texts, each once.
	if n := count(t, e.store, `SELECT count(*) FROM blobs`); n != 4 {
		t.Errorf("%d blobs, want 4", n)
	}

	row, docs, err := e.store.Turn(ctx, id1)
	if err != nil {
		t.Fatal(err)
	}
	if row.AppID != "notes" || row.RunID != "run-1" || row.Kind != knowledge.TurnBuilder || row.Request != "add tags to notes" {
		t.Errorf("turn = %+v", row)
	}
	if row.InstructionsHash != knowledge.Hash("You are the engineer.") {
		t.Errorf("instructions hash = %s", row.InstructionsHash)
	}
	if text, err := e.store.Blob(ctx, row.InstructionsHash); err != nil || text != "You are the engineer." {
		t.Errorf("instructions blob = %q, %v", text, err)
	}
	if len(docs) != 2 || docs[0].Text != digest || docs[1].Text != evidence {
		t.Fatalf("documents = %+v", docs)
	}
	if d := docs[1]; d.Ref != "evidence:notes" || !d.Cut || d.Bytes != len(evidence) || d.Delivered != len([]rune(evidence)) || d.Hash != knowledge.Hash(evidence) {
		t.Errorf("evidence document = %+v", d.DocumentRef)
	}
	if docs[0].Cut || docs[0].Title != "Orientation" {
		t.Errorf("digest document = %+v", docs[0].DocumentRef)
	}

	t.Run("newest first, by application, in pages", func(t *testing.T) {
		all, err := e.store.Turns(ctx, knowledge.TurnQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || all[0].ID != id2 || all[1].ID != id1 {
			t.Fatalf("turns = %+v", all)
		}
		if all[0].RunID != "" || all[0].Documents[1].Ref != "evidence:shop" {
			t.Errorf("newest turn = %+v", all[0])
		}
		notes, err := e.store.Turns(ctx, knowledge.TurnQuery{AppID: "notes"})
		if err != nil || len(notes) != 1 || notes[0].ID != id1 {
			t.Errorf("notes turns = %+v, %v", notes, err)
		}
		page, err := e.store.Turns(ctx, knowledge.TurnQuery{Before: id2, Limit: 1})
		if err != nil || len(page) != 1 || page[0].ID != id1 {
			t.Errorf("page before %d = %+v, %v", id2, page, err)
		}
	})
	t.Run("a run id left empty is NULL", func(t *testing.T) {
		if n := count(t, e.store, `SELECT count(*) FROM contexts WHERE run_id IS NULL`); n != 1 {
			t.Errorf("%d contexts with a NULL run id, want 1", n)
		}
	})
	t.Run("an unknown turn", func(t *testing.T) {
		_, _, err := e.store.Turn(ctx, 999)
		wantCode(t, err, refusal.NotFound)
	})
	t.Run("an unknown kind is refused and writes nothing", func(t *testing.T) {
		_, err := e.store.RecordTurn(ctx, knowledge.Turn{Kind: "dream", Instructions: "new text"})
		wantCode(t, err, refusal.Invalid)
		if n := count(t, e.store, `SELECT count(*) FROM blobs`); n != 4 {
			t.Errorf("%d blobs after a refusal, want 4", n)
		}
	})
	t.Run("a document without a ref is refused and writes nothing", func(t *testing.T) {
		_, err := e.store.RecordTurn(ctx, knowledge.Turn{Kind: knowledge.TurnChat, Instructions: "other",
			Documents: []knowledge.DeliveredDoc{{Text: "anonymous"}}})
		wantCode(t, err, refusal.Invalid)
		if n := count(t, e.store, `SELECT count(*) FROM blobs`); n != 4 {
			t.Errorf("%d blobs after a refusal, want 4", n)
		}
	})
}

func TestContextsAndBlobsRefuseChanges(t *testing.T) {
	e := mustOpen(t)
	if _, err := e.store.RecordTurn(context.Background(), knowledge.Turn{Kind: knowledge.TurnPlanning, Instructions: "plan",
		Documents: []knowledge.DeliveredDoc{{Ref: "digest:notes", Text: "eight lines"}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, statement, refusal string
	}{
		{"update a context", `UPDATE contexts SET request = 'rewritten'`, "contexts are append-only"},
		{"delete a context", `DELETE FROM contexts`, "contexts are append-only"},
		{"update a blob", `UPDATE blobs SET text = 'rewritten'`, "blobs are never changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.store.DB().Write.Exec(c.statement)
			if err == nil || !strings.Contains(err.Error(), c.refusal) {
				t.Fatalf("err = %v, want the trigger's refusal %q", err, c.refusal)
			}
		})
	}
	if n := count(t, e.store, `SELECT count(*) FROM contexts WHERE request = ''`); n != 1 {
		t.Errorf("the context changed: %d unchanged rows, want 1", n)
	}
}
