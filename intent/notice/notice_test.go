package notice_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/notice"
	"autoapp/intent/request"
	"autoapp/intent/timetest"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// receiver is a webhook: it answers status (200 unless set) and keeps
// what it was sent.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []received
}

type received struct {
	header http.Header
	body   string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, received{req.Header.Clone(), string(b)})
	if r.status != 0 {
		w.WriteHeader(r.status)
	}
}

func (r *receiver) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type env struct {
	db      *migrations.DB
	clock   *timetest.Clock
	notices *intent.Notices
	book    *notice.Book
	sender  *notice.Sender
	intent  int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	c := timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	all := intent.New(db, root, c.Now, intent.Collaborators{Journal: request.Journal{}})
	if _, err := db.Write.Exec(`INSERT INTO apps (id, name, origin, created_at) VALUES ('site', 'Site', 'template:static', 0)`); err != nil {
		t.Fatal(err)
	}
	in, err := all.Backlog.OpenDraft(context.Background(), "site", "Change it.", intent.Analysis{Restated: []string{"Change it."}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, clock: c, notices: intent.NewNotices(db, c.Now), book: notice.NewBook(root), intent: in.ID}
	e.sender = notice.NewSender(e.notices, e.book, func() string { return "http://127.0.0.1:8080" }, c.Now, slog.New(slog.DiscardHandler))
	return e
}

// notice writes a notice as a move would.
func (e *env) notice(t *testing.T, kind intent.NoticeKind, sentence string) {
	t.Helper()
	if _, err := e.db.Write.Exec(`INSERT INTO notices (at, kind, app_id, intent_id, sentence, link, next_at) VALUES (?, ?, 'site', ?, ?, ?, ?)`,
		e.clock.Now().UnixMilli(), kind, e.intent, sentence, "/backlog/intents/1", e.clock.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

func TestTheWebhookGetsEachNoticeOnceAsJSONRetriedUntilItAnswers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := &receiver{status: http.StatusInternalServerError}
	srv := httptest.NewServer(r)
	defer srv.Close()
	if _, err := e.book.Save(notice.Form{URL: srv.URL + "/hook", Kinds: []string{"question", "done"}}); err != nil {
		t.Fatal(err)
	}
	e.notice(t, intent.NoticeQuestion, "0001-change-the-heading (site) asks: Which heading?")
	e.notice(t, intent.NoticeFailed, "0001-change-the-heading (site) failed: no.")

	e.sender.SendDue(ctx)
	if n := len(r.all()); n != 1 {
		t.Fatalf("the webhook was asked %d times, want the question once (the failure is not a kind it takes)", n)
	}
	o, _ := e.notices.Outbox(ctx)
	if o.Pending != 1 || o.LastError != "The webhook answered 500 Internal Server Error." {
		t.Fatalf("outbox %+v, want the question pending with the failure said", o)
	}
	// Not again before its backoff, then again.
	e.sender.SendDue(ctx)
	if n := len(r.all()); n != 1 {
		t.Fatalf("asked %d times before the backoff passed", n)
	}
	r.mu.Lock()
	r.status = 0
	r.mu.Unlock()
	e.clock.Advance(notice.Backoff(1))
	e.sender.SendDue(ctx)
	e.sender.SendDue(ctx)
	got := r.all()
	if len(got) != 2 {
		t.Fatalf("asked %d times, want the question sent again once, then never", len(got))
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(got[1].body), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["id"] != "autoapp-notice-1" || ev["kind"] != "question" || ev["app"] != "site" || ev["link"] != "http://127.0.0.1:8080/backlog/intents/1" ||
		ev["sentence"] != "0001-change-the-heading (site) asks: Which heading?" || got[1].header.Get(notice.EventHeader) != "autoapp-notice-1" {
		t.Errorf("the webhook got %v (%s)", ev, got[1].header.Get(notice.EventHeader))
	}
	if got[0].header.Get(notice.EventHeader) != got[1].header.Get(notice.EventHeader) {
		t.Error("a retry carried another event id")
	}
	if o, _ := e.notices.Outbox(ctx); o.Pending != 0 || o.LastError != "" {
		t.Errorf("outbox %+v, want nothing waiting", o)
	}
}

func TestAnNtfyTopicGetsPlainTextWithATitle(t *testing.T) {
	e := newEnv(t)
	r := &receiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	if _, err := e.book.Save(notice.Form{URL: srv.URL + "/my-topic", Kinds: []string{"done"}, Format: notice.FormatNtfy}); err != nil {
		t.Fatal(err)
	}
	e.notice(t, intent.NoticeDone, "Intent #1 (site) is done: its delivery is ready.")
	e.sender.SendDue(context.Background())
	got := r.all()
	if len(got) != 1 || got[0].body != "Intent #1 (site) is done: its delivery is ready." || got[0].header.Get("Title") != "An intent is done" ||
		!strings.HasPrefix(got[0].header.Get("Content-Type"), "text/plain") || got[0].header.Get("Click") != "http://127.0.0.1:8080/backlog/intents/1" {
		t.Fatalf("ntfy got %+v", got)
	}
}

func TestANoticeFailingForADayIsGivenUpAndSaidSo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.book.Save(notice.Form{URL: "http://127.0.0.1:1/nobody", Kinds: []string{"cap"}}); err != nil {
		t.Fatal(err)
	}
	e.notice(t, intent.NoticeCap, "Intent #1 reached its cap of 10 tokens (spent 11). Raise the cap to go on, or leave it stopped.")
	for range 40 {
		e.sender.SendDue(ctx)
		e.clock.Advance(time.Hour)
	}
	o, err := e.notices.Outbox(ctx)
	if err != nil || o.Pending != 0 || o.GivenUp != 1 || !strings.HasPrefix(o.LastError, "The webhook could not be reached: ") ||
		!strings.HasSuffix(o.LastError, "It was tried for a day and given up.") {
		t.Fatalf("outbox %+v (%v), want it given up after a day, the failure said", o, err)
	}
}

func TestTheWebhookFormNamesEveryProblem(t *testing.T) {
	_, ps := notice.Parse(notice.Form{URL: "ftp://x", Kinds: []string{"gossip"}, Format: "xml"})
	got := ps.Error()
	for _, want := range []string{"webhook address: write an http:// or https:// address", `kinds: "gossip" is not a kind of notice`, `format: "xml" is not a format`} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if _, ps := notice.Parse(notice.Form{URL: "https://ntfy.sh/t"}); !strings.Contains(ps.Error(), "choose at least one kind") {
		t.Errorf("no kinds: %q", ps.Error())
	}
}
