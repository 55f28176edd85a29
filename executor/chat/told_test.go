package chat_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/chat"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/knowledge"
)

// documentRefs are the refs of the documents a request carried, in order.
func documentRefs(r scripted.Request) []string {
	var refs []string
	for _, m := range r.Messages {
		if m.Role != "user" || !strings.Contains(m.Content, "<document ref=") {
			continue
		}
		for _, sub := range regexp.MustCompile(`<document ref="([^"]+)"`).FindAllStringSubmatch(m.Content, -1) {
			refs = append(refs, sub[1])
		}
	}
	return refs
}

// waitIdle waits until no turn of app runs.
func (h *host) waitIdle(t *testing.T, app string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.chat.Running(app) {
		if time.Now().After(deadline) {
			t.Fatalf("a turn of %s still runs", app)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAChatTurnIsToldWhatABuildersTurnIsToldOfTheApplicationItsFirstLineNames:
// with site selected, a message whose first line declares notes is a turn
// of notes, which becomes the one selected; the model is sent the
// orientation, the task evidence and the lessons of notes, in that order,
// and the lesson whose line reached it is recorded as served.
func TestAChatTurnIsToldWhatABuildersTurnIsToldOfTheApplicationItsFirstLineNames(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	if _, err := h.apps.CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	if err := h.apps.Select(ctx, appID); err != nil {
		t.Fatal(err)
	}
	// Shares "heading", "greets" and "readers" with the message.
	lesson, err := h.launcher.Lessons.Write(ctx, "The heading that greets readers sits in site/index.html.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	h.model.On(scripted.Any(), scripted.Reply{Text: "The heading is in site/index.html."})

	turn, err := h.chat.Send(ctx, appID, 0, "Application: notes\nWhere is the heading that greets readers?")
	if err != nil {
		t.Fatal(err)
	}
	if turn.AppID != "notes" || !strings.HasPrefix(turn.RunID, "chat-notes-") {
		t.Fatalf("the turn is of %q (run %s), not of the application its first line declares", turn.AppID, turn.RunID)
	}
	h.waitIdle(t, "notes")
	if selected, err := h.apps.Selected(ctx); err != nil || selected != "notes" {
		t.Fatalf("selected %q (%v), want notes", selected, err)
	}

	reqs := h.chats()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d chat requests", len(reqs))
	}
	if got, want := documentRefs(reqs[0]), []string{"digest:notes", "evidence:notes", "lessons:notes"}; !slices.Equal(got, want) {
		t.Fatalf("the turn was sent %v, want %v", got, want)
	}
	block := reqs[0].Messages[1].Content
	for _, want := range []string{"Application: notes (Static site)", "Words searched: heading, greet", "] The heading that greets readers sits in site/index.html."} {
		if !strings.Contains(block, want) {
			t.Errorf("the documents lack %q:\n%s", want, block)
		}
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "Read the documents given with this turn before anything else") {
		t.Errorf("the instructions do not say to read the documents first")
	}

	served, err := h.launcher.Servings.ForRun(ctx, turn.RunID)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := h.launcher.Knowledge.Turns(ctx, knowledge.TurnQuery{AppID: "notes"})
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns %+v (%v)", turns, err)
	}
	if len(served) != 1 || served[0].LessonID != lesson || served[0].Reason != knowledge.ReasonWords || served[0].ContextID != turns[0].ID {
		t.Fatalf("servings %+v; want lesson %d served for its words in context %d", served, lesson, turns[0].ID)
	}
}

// TestWordsAboutAnotherApplicationAreANewRequestOfIt: the Request page of
// site, with a request open there, sends words whose first line declares
// notes: they start a request of notes, not a message on site's, and that
// request keeps the mode of the conversation it came from (a guided owner
// stays guided).
func TestWordsAboutAnotherApplicationAreANewRequestOfIt(t *testing.T) {
	for _, mode := range []string{request.ModeAutonomous, request.ModeGuided} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			h := newHost(t)
			if _, err := h.apps.CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
				t.Fatal(err)
			}
			h.model.Always(scripted.Any(), scripted.Reply{Text: "Noted."})
			open, err := h.chat.Say(ctx, appID, request.Say{Op: "op-1", Text: "A greeting on the home page.", Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			h.waitIdle(t, appID)
			st, err := h.chat.Say(ctx, appID, request.Say{ID: open.ID, Seen: open.Revision, Op: "op-2", Text: "Application: notes\nA list of notes."})
			if err != nil {
				t.Fatal(err)
			}
			h.waitIdle(t, "notes")
			if st.AppID != "notes" || st.ID == open.ID || st.Text != "Application: notes\nA list of notes." {
				t.Fatalf("the words went to %+v", st)
			}
			if st.Mode != mode {
				t.Fatalf("the request opened on notes is %s, want %s as the conversation it came from", st.Mode, mode)
			}
			if site, err := h.launcher.Requests.State(ctx, open.ID); err != nil || len(site.Messages) != 0 {
				t.Fatalf("site's request took the words: %+v (%v)", site, err)
			}
		})
	}
}

// TestWhichApplicationAMessageIsAbout walks the seed's order: declared on
// the first line, else named by id or a word of its name, else selected,
// else the only one, else none.
func TestWhichApplicationAMessageIsAbout(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	if got, err := h.chat.About(ctx, "Make the heading bigger.", ""); err != nil || got != appID {
		t.Fatalf("with one application and none selected: %q, %v", got, err)
	}
	for _, a := range []struct{ id, name string }{{"notes", "Notes"}, {"pomodoro", "Pomodoro timer"}} {
		if _, err := h.apps.CreateFromTemplate(ctx, a.id, a.name, "static"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, message, selected, want string
	}{
		{"declared on the first line", "Application: notes\nMake the pomodoro timer red.", appID, "notes"},
		{"declared in any case", "  application: Pomodoro\nA bigger button.", appID, "pomodoro"},
		{"named by its id", "In notes, add a list.", appID, "notes"},
		{"named by a word of its name", "The timer should start at 25:00.", appID, "pomodoro"},
		{"named with the selected one", "Copy the site's heading to notes.", appID, appID},
		{"named among others, the selected not among them", "Copy the heading of notes to the timer.", appID, appID},
		{"named by nothing", "Make the heading bigger.", "notes", "notes"},
		{"a declaration further down is only words", "Make it bigger.\nApplication: notes", "pomodoro", "notes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := h.chat.About(ctx, tt.message, tt.selected); err != nil || got != tt.want {
				t.Fatalf("about %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	t.Run("declared but missing", func(t *testing.T) {
		_, err := h.chat.About(ctx, "Application: shop\nA cart.", appID)
		var refusal *refusal.Error
		if !errors.As(err, &refusal) || !strings.Contains(refusal.Message, `"shop"`) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("none selected, none named, several", func(t *testing.T) {
		_, err := h.chat.About(ctx, "Make it bigger.", "")
		var refusal *refusal.Error
		if !errors.As(err, &refusal) || refusal.Message != chat.NoApplicationSentence {
			t.Fatalf("err %v", err)
		}
	})
}
