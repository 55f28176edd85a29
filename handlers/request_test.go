package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/request"
)

// TestARefusedRequestWritesNothingAndKeepsWhatWasTyped: with no Settings
// model the engineer cannot be asked, so nothing is journaled, and the page
// shows the words and the mode back.
func TestARefusedRequestWritesNothingAndKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	r := b.post("/request", url.Values{"text": {"Add tags to notes."}, "mode": {"guided"}, "op": {"op-refused-1"}})
	wantStatus(t, r, fiber.StatusConflict)
	wantSentence(t, r, "Add tags to notes.</textarea>")
	wantSentence(t, r, `value="guided" checked`)
	var entries int
	if err := s.db.Read.Get(&entries, `SELECT count(*) FROM request_journal`); err != nil || entries != 0 {
		t.Fatalf("%d journal entries (%v), want none: a refused request writes nothing", entries, err)
	}
}

// TestTheIntentPageFollowsAChatTurnAboutItsApplication: while the engineer's
// chat turn runs, it may change the intent, so the intent's page polls.
func TestTheIntentPageFollowsAChatTurnAboutItsApplication(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	m := withModel(t, s)
	in, _ := s.submitted(t, "Change the page")
	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Text: "Noted."})
	if r := b.get(intentPath(in.ID)); !strings.Contains(r.body, `data-polling="false"`) {
		t.Fatalf("a submitted intent with nothing running polls:\n%s", r.body)
	}
	r := b.post("/request", url.Values{"text": {"Make the heading bigger."}, "mode": {"autonomous"}, "op": {"op-chat-1"}})
	wantRedirect(t, r, "/request")
	g.Wait(t)
	if r := b.get(intentPath(in.ID)); !strings.Contains(r.body, `data-polling="true"`) {
		t.Errorf("the intent's page does not poll while a chat turn about its application runs")
	}
	g.Open()
}

// TestTheWordsAndTheTurnThatAnswersThemAreOneWrite: when the engineer's
// turn cannot be written down, the words are not journaled either, and the
// page keeps them. (Before, the journal entry was one write and the turn's
// row another.)
func TestTheWordsAndTheTurnThatAnswersThemAreOneWrite(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	withModel(t, s)
	if _, err := s.db.Write.Exec(`CREATE TRIGGER no_turn BEFORE INSERT ON chat_turns BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	r := b.post("/request", url.Values{"text": {"Add tags to notes."}, "mode": {"guided"}, "op": {"op-one-write-1"}})
	if r.StatusCode < 400 {
		t.Fatalf("the request was taken (%d) although its turn could not be written", r.StatusCode)
	}
	var entries, requests int
	if err := s.db.Read.Get(&entries, `SELECT count(*) FROM request_journal`); err != nil || entries != 0 {
		t.Fatalf("%d journal entries (%v), want none", entries, err)
	}
	if err := s.db.Read.Get(&requests, `SELECT count(*) FROM requests`); err != nil || requests != 0 {
		t.Fatalf("%d requests (%v), want none", requests, err)
	}
}

// TestAResentMessageWithOtherWordsIsRefused: the same operation id with
// other text is a conflict, not the first message's answer, and the
// journal is left as the first write left it. (Before, the second POST was
// answered as the first.)
func TestAResentMessageWithOtherWordsIsRefused(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	m := withModel(t, s)
	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Text: "Noted."})
	wantRedirect(t, b.post("/request", url.Values{"text": {"Add tags to notes."}, "mode": {"guided"}, "op": {"op-resent-1"}}), "/request")
	g.Wait(t)
	defer g.Open()
	journal := func() string {
		t.Helper()
		var rows []string
		if err := s.db.Read.Select(&rows, `SELECT revision || ' ' || kind || ' ' || body FROM request_journal ORDER BY request_id, revision`); err != nil {
			t.Fatal(err)
		}
		return strings.Join(rows, "\n")
	}
	before := journal()
	r := b.post("/request", url.Values{"text": {"Add labels to notes."}, "mode": {"guided"}, "op": {"op-resent-1"}})
	wantStatus(t, r, fiber.StatusConflict)
	wantSentence(t, r, "was sent before with other words or another mode; nothing was written.")
	if after := journal(); after != before {
		t.Fatalf("the journal changed:\n%s\nwant\n%s", after, before)
	}
}

// TestEachQuestionHasItsOwnAnswer: the Request page gives each open
// question of the analysis a box of its own, named by the question's id;
// an answer to the second question alone closes that one, linked to it in
// the journal, and the first stays open. The engineer's turn reads the
// answer under its question. (Before, one box answered "the questions",
// sent no question id, and closed the oldest.)
func TestEachQuestionHasItsOwnAnswer(t *testing.T) {
	s, ada := withApp(t)
	m := withModel(t, s)
	ctx := context.Background()
	requests := s.launcher.Requests
	st, err := requests.Create(ctx, appID, "Add tags", request.ModeGuided, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	questions := []string{"Can a note have several tags?", "Should tags be shared between notes?"}
	in, _ := s.draft(t, "Add tags", intent.Analysis{Restated: []string{"Notes get tags."}, Questions: questions})
	if _, err := requests.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	if st, err = requests.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	open := st.OpenQuestions()
	if len(open) != 2 {
		t.Fatalf("%d open questions journaled, want 2", len(open))
	}
	first, second := open[0].Revision, open[1].Revision

	r := ada.get("/request")
	wantStatus(t, r, fiber.StatusOK)
	for i, q := range []int{first, second} {
		id := strconv.Itoa(q)
		wantSentence(t, r, `<input type="hidden" name="question" value="`+id+`">`)
		wantSentence(t, r, `<label for="answer-`+id+`">`+questions[i]+`</label>`)
		wantSentence(t, r, `name="answer-`+id+`"`)
	}

	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Text: "Noted."})
	defer g.Open()
	r = ada.post("/request/answer", url.Values{"request": {strconv.FormatInt(st.ID, 10)}, "seen": {strconv.Itoa(st.Revision)}, "op": {"op-answer-1"},
		"question": {strconv.Itoa(first), strconv.Itoa(second)}, "answer-" + strconv.Itoa(first): {""}, "answer-" + strconv.Itoa(second): {"No, each note has its own."}})
	wantRedirect(t, r, "/request")
	g.Wait(t)

	after, err := requests.State(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := after.AnswerTo(second); !ok || a.Text != "No, each note has its own." || a.Actor != request.ActorOwner {
		t.Fatalf("the second question's answer: %+v %v", a, ok)
	}
	if _, ok := after.AnswerTo(first); ok {
		t.Fatal("the question left blank was answered")
	}
	if o := after.OpenQuestions(); len(o) != 1 || o[0].Revision != first {
		t.Fatalf("open after answering the second: %+v", o)
	}
	var message string
	if err := s.db.Read.Get(&message, `SELECT message FROM chat_turns ORDER BY id DESC LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if want := "You asked: Should tags be shared between notes?\nNo, each note has its own."; message != want {
		t.Fatalf("the turn reads %q, want %q", message, want)
	}

	// Nothing answered at all is refused with a sentence, and writes nothing.
	entries := len(after.Answers)
	r = ada.post("/request/answer", url.Values{"request": {strconv.FormatInt(st.ID, 10)}, "seen": {strconv.Itoa(after.Revision)}, "op": {"op-answer-2"},
		"question": {strconv.Itoa(first)}, "answer-" + strconv.Itoa(first): {"  "}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantText(t, r, "The answers are empty; answer at least one question first.")
	if again, _ := requests.State(ctx, st.ID); len(again.Answers) != entries {
		t.Fatal("an empty answer was journaled")
	}
}
