package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai/provider"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
)

// newClock is the registry's time, moved only by the test, standing at
// 1 March 2026.
func newClock() *timetest.Clock {
	return timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// fakeProvider plays an OpenAI-compatible provider: it lists models at
// /v1/models, counts the requests it gets and records their Authorization
// headers. With wantAuth set, any other Authorization fails the test.
type fakeProvider struct {
	*httptest.Server
	t        testing.TB
	wantAuth string

	mu       sync.Mutex
	requests int
	auth     []string
	paths    []string
	models   []string
	status   int
	body     string // answered as it stands when set
}

func newFakeProvider(t testing.TB, wantAuth string, models ...string) *fakeProvider {
	t.Helper()
	f := &fakeProvider{t: t, wantAuth: wantAuth, models: models, status: http.StatusOK}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	got := r.Header.Get("Authorization")
	f.auth = append(f.auth, got)
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	status, body, models := f.status, f.body, f.models
	f.mu.Unlock()
	if f.wantAuth != "" && got != f.wantAuth {
		f.t.Errorf("%s got Authorization %q, want %q", f.URL, got, f.wantAuth)
	}
	if body == "" && status == http.StatusOK {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		list := struct {
			Object string           `json:"object"`
			Data   []map[string]any `json:"data"`
		}{Object: "list", Data: []map[string]any{}}
		for _, m := range models {
			list.Data = append(list.Data, map[string]any{"id": m, "object": "model", "owned_by": "test"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// answer makes the provider answer every request with status and body.
func (f *fakeProvider) answer(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body = status, body
}

func (f *fakeProvider) setModels(models ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models = models
}

func (f *fakeProvider) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *fakeProvider) Auth() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

func (f *fakeProvider) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

// logBuffer is a log the test can read back.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// openRegistry opens a registry over root with the test's clock.
func openRegistry(t testing.TB, root string, c *timetest.Clock) *provider.Registry {
	t.Helper()
	return openRegistryLog(t, root, c, nil, nil)
}

func openRegistryLog(t testing.TB, root string, c *timetest.Clock, client *http.Client, log *logBuffer) *provider.Registry {
	t.Helper()
	var logger *slog.Logger
	if log != nil {
		logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	r, err := provider.NewRegistry(root, c.Now, client, logger)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return r
}

func mustSave(t testing.TB, r *provider.Registry, p provider.Provider) {
	t.Helper()
	if err := r.Save(p, false); err != nil {
		t.Fatalf("Save(%s): %v", p.Name, err)
	}
}

// wantError fails unless err is a refusal.Error with code and message.
func wantError(t testing.TB, err error, code refusal.Code, message string) {
	t.Helper()
	var pe *refusal.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want %s %q", err, err, code, message)
	}
	if pe.Code != code || pe.Message != message {
		t.Fatalf("error = %s %q, want %s %q", pe.Code, pe.Message, code, message)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantNoKey(t testing.TB, where, text string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if k != "" && strings.Contains(text, k) {
			t.Fatalf("%s holds the key %q: %s", where, k, text)
		}
	}
}
