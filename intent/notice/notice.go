// Package notice sends the notices (intent.Notices) through the owner's
// webhook: each at least once, retried with backoff for a day, with an
// event id the receiver can drop a repeat by, as JSON or, for an ntfy
// topic, as plain text with a Title header. The webhook's address lives
// in <root>/launcher/notifications.json, beside the other settings and out
// of every workspace: the engineer's code never sees it.
package notice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"autoapp/intent"
	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
)

// File is the webhook's settings in the launcher's folder.
const File = "notifications.json"

// The formats a webhook takes.
const (
	FormatAuto = ""
	FormatJSON = "json"
	FormatNtfy = "ntfy"
)

// Settings are the webhook's: where to POST, which kinds, in which format
// (FormatAuto: ntfy for an ntfy.sh or ntfy.* address, else JSON).
type Settings struct {
	URL    string              `json:"url"`
	Kinds  []intent.NoticeKind `json:"kinds"`
	Format string              `json:"format,omitempty"`
}

// Wants says the webhook takes notices of kind.
func (s Settings) Wants(kind intent.NoticeKind) bool {
	return s.URL != "" && slices.Contains(s.Kinds, kind)
}

// ntfy says the notices go as ntfy's plain text.
func (s Settings) ntfy() bool {
	switch s.Format {
	case FormatNtfy:
		return true
	case FormatJSON:
		return false
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	return host == "ntfy.sh" || strings.HasPrefix(host, "ntfy.")
}

// Form is the Settings form as typed.
type Form struct {
	URL    string
	Kinds  []string
	Format string
}

// Parse checks the form: an http or https address with a host (or none, to
// send nothing), known kinds, a known format. Every problem is named.
func Parse(f Form) (Settings, refusal.Problems) {
	var s Settings
	var ps refusal.Problems
	if raw := strings.TrimSpace(f.URL); raw != "" {
		u, err := url.Parse(raw)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			ps = append(ps, refusal.Problem{Field: "webhook address", Message: "write an http:// or https:// address, such as https://ntfy.sh/my-topic"})
		case u.User != nil:
			ps = append(ps, refusal.Problem{Field: "webhook address", Message: "put no user or password in the address"})
		default:
			s.URL = u.String()
		}
	}
	for _, k := range f.Kinds {
		kind := intent.NoticeKind(k)
		if !slices.Contains(intent.NoticeKinds, kind) {
			ps = append(ps, refusal.Problem{Field: "kinds", Message: fmt.Sprintf("%q is not a kind of notice", k)})
			continue
		}
		if !slices.Contains(s.Kinds, kind) {
			s.Kinds = append(s.Kinds, kind)
		}
	}
	switch f.Format {
	case FormatAuto, FormatJSON, FormatNtfy:
		s.Format = f.Format
	default:
		ps = append(ps, refusal.Problem{Field: "format", Message: fmt.Sprintf("%q is not a format: choose JSON or ntfy", f.Format)})
	}
	if s.URL != "" && len(s.Kinds) == 0 && len(ps) == 0 {
		ps = append(ps, refusal.Problem{Field: "kinds", Message: "choose at least one kind to send, or empty the address"})
	}
	return s, ps
}

// Book reads and writes notifications.json, read afresh whenever it
// changed.
type Book struct {
	path string
	kept *atomicfile.Kept[read]
}

type read struct {
	s       Settings
	problem string
}

// NewBook is the webhook settings of the data folder root.
func NewBook(root string) *Book {
	path := filepath.Join(root, "launcher", File)
	return &Book{path: path, kept: atomicfile.NewKept(path, func(b []byte, err error) read {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return read{}
		case err != nil:
			return read{problem: File + " could not be read: " + err.Error() + ". Nothing is sent until it can be."}
		}
		var s Settings
		if err := json.Unmarshal(b, &s); err != nil {
			return read{problem: File + " is not valid JSON. Nothing is sent until it is saved again."}
		}
		kinds := make([]string, len(s.Kinds))
		for i, k := range s.Kinds {
			kinds[i] = string(k)
		}
		checked, ps := Parse(Form{URL: s.URL, Kinds: kinds, Format: s.Format})
		if len(ps) > 0 {
			return read{problem: File + ": " + ps.Error() + ". Nothing is sent until it is saved again."}
		}
		return read{s: checked}
	})}
}

// Settings are the webhook's settings in force, and why nothing is sent
// when the file cannot be used.
func (b *Book) Settings() (Settings, string) {
	r := b.kept.Get()
	r.s.Kinds = slices.Clone(r.s.Kinds)
	return r.s, r.problem
}

// Save checks the form and writes the file whole.
func (b *Book) Save(f Form) (Settings, error) {
	s, ps := Parse(f)
	if len(ps) > 0 {
		return Settings{}, &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The notifications were not saved: " + ps.Error() + "."}
	}
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return Settings{}, fmt.Errorf("notice: save: %w", err)
	}
	if err := atomicfile.Write(b.path, append(raw, '\n')); err != nil {
		return Settings{}, fmt.Errorf("notice: save: %w", err)
	}
	return s, nil
}

// Limits of the sending.
const (
	// GiveUpAfter is how long a notice is tried before it is given up.
	GiveUpAfter = 24 * time.Hour
	// firstWait doubles with each failure, up to maxWait.
	firstWait = 10 * time.Second
	maxWait   = time.Hour
	// sendTimeout bounds one POST.
	sendTimeout = 15 * time.Second
	// EventHeader names the event id of every POST.
	EventHeader = "X-Autoapp-Event"
)

// Backoff is how long to wait after the attempts-th failure (from 1).
func Backoff(attempts int) time.Duration {
	d := firstWait
	for range max(attempts-1, 0) {
		d *= 2
		if d >= maxWait {
			return maxWait
		}
	}
	return d
}

// Sender sends the notices the outbox holds.
type Sender struct {
	notices *intent.Notices
	book    *Book
	// base is where the console answers ("http://127.0.0.1:8080"), for
	// the links.
	base   func() string
	now    func() time.Time
	log    *slog.Logger
	client *http.Client
}

// NewSender sends the notices through the book's webhook.
func NewSender(notices *intent.Notices, book *Book, base func() string, now func() time.Time, log *slog.Logger) *Sender {
	return &Sender{notices: notices, book: book, base: base, now: now, log: log,
		client: &http.Client{Timeout: sendTimeout,
			// A webhook answers where it was asked: a redirect is a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Every is how often the sender looks for what is due.
const Every = 2 * time.Second

// Run sends what is due every Every until ctx ends.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		s.SendDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SendDue sends every notice due now, once each: sent, skipped when the
// webhook does not want its kind, retried later, or given up after a day.
func (s *Sender) SendDue(ctx context.Context) {
	due, err := s.notices.Due(ctx, 50)
	if err != nil {
		s.log.Error("the notices due could not be read", "err", err)
		return
	}
	settings, _ := s.book.Settings()
	for _, p := range due {
		if ctx.Err() != nil {
			return
		}
		if !settings.Wants(p.Kind) {
			if err := s.notices.Sent(ctx, p.ID, intent.SendSkipped); err != nil {
				s.log.Error("a notice could not be marked", "notice", p.ID, "err", err)
			}
			continue
		}
		problem := s.post(ctx, settings, p.Notice)
		if problem == "" {
			if err := s.notices.Sent(ctx, p.ID, intent.SendSent); err != nil {
				s.log.Error("a sent notice could not be marked", "notice", p.ID, "err", err)
			}
			continue
		}
		next := s.now().Add(Backoff(p.Attempts + 1))
		if next.Sub(p.At) > GiveUpAfter {
			next = time.Time{}
			problem += " It was tried for a day and given up."
		}
		s.log.Warn("a notice could not be sent", "notice", p.ID, "problem", problem)
		if err := s.notices.Failed(ctx, p.ID, problem, next); err != nil {
			s.log.Error("a failed notice could not be marked", "notice", p.ID, "err", err)
		}
	}
}

// Test sends one test notice through the webhook now, and answers why it
// failed in a sentence, or "".
func (s *Sender) Test(ctx context.Context) (string, error) {
	settings, problem := s.book.Settings()
	if problem != "" {
		return problem, nil
	}
	if settings.URL == "" {
		return "", &refusal.Error{Code: refusal.Conflict, Message: "Save a webhook address first, then test it."}
	}
	return s.post(ctx, settings, intent.Notice{ID: 0, At: s.now(), Kind: intent.NoticeDone, Sentence: "A test from Autoapp: the webhook works.", Link: "/settings#notifications"}), nil
}

// event is a notice as the JSON webhook gets it.
type event struct {
	ID       string            `json:"id"`
	Kind     intent.NoticeKind `json:"kind"`
	Title    string            `json:"title"`
	App      string            `json:"app,omitempty"`
	Intent   int64             `json:"intent,omitempty"`
	Task     int64             `json:"task,omitempty"`
	Sentence string            `json:"sentence"`
	Link     string            `json:"link"`
	At       time.Time         `json:"at"`
}

// post sends one notice and answers why it failed, in a sentence, or "".
func (s *Sender) post(ctx context.Context, settings Settings, n intent.Notice) string {
	id := n.EventID()
	if n.ID == 0 {
		id = fmt.Sprintf("autoapp-test-%d", s.now().UnixMilli())
	}
	link := strings.TrimSuffix(s.base(), "/") + n.Link
	var body []byte
	contentType := "application/json"
	if settings.ntfy() {
		body, contentType = []byte(n.Sentence), "text/plain; charset=utf-8"
	} else {
		var err error
		if body, err = json.Marshal(event{ID: id, Kind: n.Kind, Title: n.Kind.Title(), App: n.AppID, Intent: n.IntentID, Task: n.TaskID,
			Sentence: n.Sentence, Link: link, At: n.At.UTC()}); err != nil {
			return "The notice could not be written as JSON."
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, settings.URL, bytes.NewReader(body))
	if err != nil {
		return "The webhook address cannot be asked."
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(EventHeader, id)
	if settings.ntfy() {
		req.Header.Set("Title", n.Kind.Title())
		req.Header.Set("Click", link)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return fmt.Sprintf("The webhook did not answer within %d seconds.", int(sendTimeout/time.Second))
		}
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "The webhook could not be reached: " + err.Error() + "."
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Sprintf("The webhook answered %s.", resp.Status)
	}
	return ""
}

// Webhook is the webhook's settings and its sender, as Settings uses them.
type Webhook struct {
	*Book
	*Sender
}
