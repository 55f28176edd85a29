package acceptance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"autoapp/executor/acceptance"
)

// preview plays an application's running preview.
type preview struct {
	*httptest.Server
	booms atomic.Int32 // requests to /boom
}

func newPreview(t *testing.T) *preview {
	t.Helper()
	p := &preview{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<h1>Hello</h1>")
	})
	mux.HandleFunc("GET /notes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items": [{"id": 17, "name": "eggs", "created": "2025-01-02T03:04:05Z", "tags": ["a", "b"], "done": false, "note": null}], "total": 1.0}`)
	})
	mux.HandleFunc("POST /notes", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Name string }
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&in) != nil || in.Name == "" {
			http.Error(w, "give a name", http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"id": 18, "name": in.Name})
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "type=%s accept=%s body=%s", r.Header.Get("Content-Type"), r.Header.Get("Accept"), b)
	})
	mux.HandleFunc("GET /trace", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "Traceback (most recent call last)")
	})
	mux.HandleFunc("GET /invalid", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not valid", http.StatusUnprocessableEntity)
	})
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) {
		p.booms.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	mux.HandleFunc("GET /hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusFound)
	})
	mux.HandleFunc("GET /away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", acceptance.MaxBody+1))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
	})
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "s1" {
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "signed in")
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

func mustParse(t *testing.T, id, steps string) acceptance.Example {
	t.Helper()
	ex, problems := acceptance.Parse(id, []byte(file(steps)))
	if problems != nil {
		t.Fatalf("%s: %v", id, problems)
	}
	return ex
}

func TestRunJudgesEachExpectation(t *testing.T) {
	p := newPreview(t)
	tests := []struct {
		name    string
		steps   string
		failure string // "" when the example passes
		step    int    // the failing step, -1 when it passes
	}{
		{name: "status matches", steps: `{"method": "GET", "path": "/", "expect": {"status": 200}}`},
		{name: "status differs", steps: `{"method": "GET", "path": "/tags", "expect": {"status": 200}}`,
			failure: "expected status 200, got 404 on GET /tags"},
		{name: "no status means any 2xx", steps: `{"method": "POST", "path": "/notes", "body": {"name": "milk"}}`},
		{name: "no status and a 5xx", steps: `{"method": "GET", "path": "/boom"}`,
			failure: "expected a 2xx status, got 500 on GET /boom"},
		{name: "an expected 4xx without fails", steps: `{"method": "GET", "path": "/tags", "expect": {"status": 404}}`},
		{name: "contains found", steps: `{"method": "GET", "path": "/", "expect": {"contains": ["Hello", "<h1>"]}}`},
		{name: "contains missing", steps: `{"method": "GET", "path": "/", "expect": {"contains": ["<h1>", "Goodbye"]}}`,
			failure: `expected the text "Goodbye" on GET /, it is not there`},
		{name: "absent is absent", steps: `{"method": "GET", "path": "/", "expect": {"absent": ["Traceback"]}}`},
		{name: "absent appears", steps: `{"method": "GET", "path": "/trace", "expect": {"absent": ["Traceback"]}}`,
			failure: `the text "Traceback" must not appear on GET /trace, it does`},
		{name: "JSON subset matches", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"name": "eggs", "tags": ["a", "b"], "done": false, "note": null}]}}}`},
		{name: "JSON wildcards match ids and timestamps", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"id": "{{any}}", "created": "{{any}}", "note": "{{any}}"}]}}}`},
		{name: "JSON wildcard for the whole answer", steps: `{"method": "GET", "path": "/notes", "expect": {"json": "{{any}}"}}`},
		{name: "JSON numbers compare by value", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"id": 17.0}], "total": 1}}}`},
		{name: "JSON value differs", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"name": "milk"}]}}}`,
			failure: `JSON at $.items[0].name: expected "milk", got "eggs" on GET /notes`},
		{name: "JSON number differs", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"id": 18}]}}}`,
			failure: `JSON at $.items[0].id: expected 18, got 17 on GET /notes`},
		{name: "JSON key missing", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"color": "red"}]}}}`,
			failure: `JSON at $.items[0].color: expected "red", it is missing on GET /notes`},
		{name: "JSON wildcard needs the key present", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"owner": "{{any}}"}]}}}`,
			failure: `JSON at $.items[0].owner: expected "{{any}}", it is missing on GET /notes`},
		{name: "JSON array of another length", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{}, {}]}}}`,
			failure: `JSON at $.items: expected 2 items, got 1 item on GET /notes`},
		{name: "JSON array element differs", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": [{"tags": ["b", "a"]}]}}}`,
			failure: `JSON at $.items[0].tags[0]: expected "b", got "a" on GET /notes`},
		{name: "JSON object where an array is", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"items": {"name": "eggs"}}}}`,
			failure: `JSON at $.items: expected an object, got [{"created":"2025-01-02T03:04:05Z","done":false,"id":17,"name":"eggs","note":nul… on GET /notes`},
		{name: "JSON key that is not a plain name", steps: `{"method": "GET", "path": "/notes", "expect": {"json": {"item count": 1}}}`,
			failure: `JSON at $["item count"]: expected 1, it is missing on GET /notes`},
		{name: "JSON expected but the answer is HTML", steps: `{"method": "GET", "path": "/", "expect": {"json": {}}}`,
			failure: `expected a JSON answer on GET /, got text that is not JSON`},
		{name: "a JSON body is sent as application/json", steps: `{"method": "POST", "path": "/notes", "body": {"name": "milk"}, "expect": {"status": 201, "json": {"id": "{{any}}", "name": "milk"}}}`},
		{name: "a text body is sent as text/plain", steps: `{"method": "POST", "path": "/echo", "headers": {"accept": "text/csv"}, "body": "raw text", "expect": {"contains": ["type=text/plain; charset=utf-8 accept=text/csv body=raw text"]}}`},
		{name: "a header overrides the content type", steps: `{"method": "POST", "path": "/echo", "headers": {"Content-Type": "application/x-www-form-urlencoded"}, "body": "a=1", "expect": {"contains": ["type=application/x-www-form-urlencoded accept= body=a=1"]}}`},
		{name: "a redirect on the preview is followed", steps: `{"method": "GET", "path": "/hop", "expect": {"status": 200, "contains": ["Hello"]}}`},
		{name: "a redirect off the preview is not followed", steps: `{"method": "GET", "path": "/away", "expect": {"status": 302}}`},
		{name: "a redirect off the preview is not a 2xx", steps: `{"method": "GET", "path": "/away"}`,
			failure: `expected a 2xx status, got 302 on GET /away`},
		{name: "cookies carry from step to step", steps: `{"method": "POST", "path": "/login"}, {"method": "GET", "path": "/me", "expect": {"contains": ["signed in"]}}`},
		{name: "HEAD checks the status only", steps: `{"method": "HEAD", "path": "/", "expect": {"status": 200}}`},
		{name: "an answer too large to check", steps: `{"method": "GET", "path": "/big", "expect": {"contains": ["x"]}}`,
			failure: `the answer to GET /big is larger than 1 MiB, too large to check`},
		{name: "a large answer is fine when only the status counts", steps: `{"method": "GET", "path": "/big", "expect": {"status": 200}}`},
		{name: "the failing step is named by its index", steps: `{"method": "GET", "path": "/"}, {"method": "GET", "path": "/tags", "expect": {"status": 200}}, {"method": "GET", "path": "/"}`,
			failure: "expected status 200, got 404 on GET /tags", step: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := mustParse(t, "0001-example", tt.steps)
			rs := acceptance.Run(t.Context(), p.URL, []acceptance.Example{ex}, p.Client())
			if len(rs) != 1 {
				t.Fatalf("%d results for one example", len(rs))
			}
			r := rs[0]
			wantStep := tt.step
			if tt.failure == "" {
				wantStep = -1
			}
			if r.Failure != tt.failure || r.Passed != (tt.failure == "") || r.Step != wantStep {
				t.Errorf("got passed=%v step=%d %q\nwant passed=%v step=%d %q", r.Passed, r.Step, r.Failure, tt.failure == "", wantStep, tt.failure)
			}
			if r.ID != ex.ID || r.Hash != ex.Hash || r.Title != ex.Title {
				t.Errorf("result %+v does not name example %s %s", r, ex.ID, ex.Hash)
			}
		})
	}
}

func TestRunFailsPassesOnlyOnA4xx(t *testing.T) {
	p := newPreview(t)
	tests := []struct {
		name    string
		step    string
		failure string
	}{
		{name: "404", step: `{"method": "GET", "path": "/tags", "fails": true}`},
		{name: "422", step: `{"method": "GET", "path": "/invalid", "fails": true}`},
		{name: "422 from a bad body", step: `{"method": "POST", "path": "/notes", "body": {"name": ""}, "fails": true, "expect": {"contains": ["give a name"]}}`},
		{name: "the 4xx given", step: `{"method": "GET", "path": "/invalid", "fails": true, "expect": {"status": 422}}`},
		{name: "another 4xx than the one given", step: `{"method": "GET", "path": "/tags", "fails": true, "expect": {"status": 422}}`,
			failure: "expected status 422, got 404 on GET /tags"},
		{name: "200", step: `{"method": "GET", "path": "/notes", "fails": true}`,
			failure: "expected GET /notes to be refused with a 4xx, got 200"},
		{name: "500", step: `{"method": "GET", "path": "/boom", "fails": true}`,
			failure: "expected GET /boom to be refused with a 4xx, got 500"},
		{name: "a 4xx whose message is wrong", step: `{"method": "GET", "path": "/invalid", "fails": true, "expect": {"contains": ["name"]}}`,
			failure: `expected the text "name" on GET /invalid, it is not there`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := mustParse(t, "0002-refuses", tt.step)
			r := acceptance.Run(t.Context(), p.URL, []acceptance.Example{ex}, p.Client())[0]
			if r.Failure != tt.failure || r.Passed != (tt.failure == "") {
				t.Errorf("got passed=%v %q, want %q", r.Passed, r.Failure, tt.failure)
			}
		})
	}
}

func TestRunStopsAnExampleAtItsFirstFailingStep(t *testing.T) {
	p := newPreview(t)
	stops := mustParse(t, "0001-stops", `{"method": "GET", "path": "/tags", "expect": {"status": 200}}, {"method": "GET", "path": "/boom", "fails": true}`)
	next := mustParse(t, "0002-next", `{"method": "GET", "path": "/boom", "expect": {"status": 500}}`)
	rs := acceptance.Run(t.Context(), p.URL, []acceptance.Example{stops, next}, nil)
	if len(rs) != 2 || rs[0].ID != "0001-stops" || rs[1].ID != "0002-next" {
		t.Fatalf("results %+v, want one per example in order", rs)
	}
	if rs[0].Passed || rs[0].Step != 0 || !rs[1].Passed {
		t.Errorf("results %+v", rs)
	}
	if n := p.booms.Load(); n != 1 {
		t.Errorf("/boom was asked %d times; only the second example should ask it", n)
	}
}

func TestRunReportsWhatCouldNotRun(t *testing.T) {
	p := newPreview(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	stopped, stop := context.WithCancel(t.Context())
	stop()
	broken, _ := acceptance.Parse("0003-broken", []byte(`{"title": "x", "steps": [{"method": "GET", "path": "http://evil.example/"}]}`))
	home := mustParse(t, "0001-home", `{"method": "GET", "path": "/tags"}`)
	// A step built by hand, not read from a file, still never leaves the preview.
	handBuilt := acceptance.Example{ID: "0004-hand", Steps: []acceptance.Step{{Method: "GET", Path: "//evil.example/x"}}}

	tests := []struct {
		name    string
		ctx     context.Context
		baseURL string
		example acceptance.Example
		failure string
	}{
		{name: "the preview does not answer", ctx: t.Context(), baseURL: closed.URL, example: home,
			failure: "GET /tags did not answer: connection refused"},
		{name: "the run was stopped", ctx: stopped, baseURL: p.URL, example: home,
			failure: "GET /tags did not answer: the run was stopped"},
		{name: "the file has problems", ctx: t.Context(), baseURL: p.URL, example: broken,
			failure: `steps[0].path: "http://evil.example/" must be a path starting with /, without a scheme or host`},
		{name: "a path with a host", ctx: t.Context(), baseURL: p.URL, example: handBuilt,
			failure: `GET //evil.example/x could not be sent: "//evil.example/x" names a host; give a path on the preview such as "/notes"`},
		{name: "no preview address", ctx: t.Context(), baseURL: "127.0.0.1:8080", example: home,
			failure: `the preview address "127.0.0.1:8080" is not an http address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := acceptance.Run(tt.ctx, tt.baseURL, []acceptance.Example{tt.example}, nil)[0]
			if r.Passed || r.Failure != tt.failure {
				t.Errorf("got passed=%v %q, want %q", r.Passed, r.Failure, tt.failure)
			}
		})
	}
}
