package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor"
	"autoapp/executor/ai/provider"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/owner"
	"autoapp/intent/spend"
	"autoapp/intent/timetest"
	"autoapp/migrations"
	"autoapp/static"
)

const (
	ownerName = "Ada Lovelace"
	password  = "correct horse battery"
	// origin is this server as app.Test reaches it: httptest.NewRequest
	// addresses example.com over plain http.
	origin = "http://example.com"
	// testHost is the name the test graph answers at: example.com without
	// a port is port 80.
	testHost = "example.com:80"

	sessionCookie = "autoapp_session"
	csrfCookie    = "autoapp_csrf"
	browserCookie = "autoapp_browser"

	mismatch  = "That name and password do not match."
	crossSite = "This request came from another site, so it was refused. Use the pages of this server."
	noToken   = "This form is out of date or did not come from this server, so it was refused. Reload the page and try again."
)

// server is the real app over a fresh store, with a clock the test holds
// and the services it was built with, for fixtures.
type server struct {
	app *fiber.App
	// launcher is every service of the program the app serves.
	launcher *launcher.Launcher
	// db is the intents store, for a test that reads what a write wrote.
	db      *migrations.DB
	clock   *timetest.Clock
	apps    *app.Service
	backlog *intent.Service
	// deliveries records the deliveries a download test serves.
	deliveries *delivery.Service
	// providers and executor are the server's own, for a test that runs
	// an intent on a scripted model.
	providers *provider.Registry
	executor  *executor.Executor
	// runs counts the runs the tests start tasks with: each has its own id.
	runs int
	// book prices the usage rows with the server's prices.json.
	book *spend.Book
}

func newServer(t testing.TB) *server {
	t.Helper()
	c := timetest.NewClock(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	// The program the binary runs, over a fresh data folder, with the
	// test's clock.
	// The owner's password is hashed at a test's cost: a sign-in per test
	// at OWASP's would be most of the package's time (intent/owner tests
	// the real cost).
	l, err := launcher.New(t.TempDir(), c.Now, nil, launcher.Options{Quiet: true, PasswordCost: owner.HashParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &server{app: l.App(launcher.Site{Hosts: []string{testHost}}, nil), launcher: l,
		clock: c, db: l.Intents, apps: l.Apps, backlog: l.Backlog, providers: l.Providers, executor: l.Runs, deliveries: l.Deliveries, book: l.Spend}
}

// withOwner is a server whose owner was created through the setup page, and
// the browser that created them, signed in.
func withOwner(t testing.TB) (*server, *browser) {
	t.Helper()
	s := newServer(t)
	b := s.browser(t)
	b.get("/setup")
	r := b.post("/setup", url.Values{"name": {ownerName}, "password": {password}, "again": {password}})
	if r.StatusCode != fiber.StatusSeeOther || b.cookies[sessionCookie] == "" {
		t.Fatalf("setup answered %d without a session: %s", r.StatusCode, r.body)
	}
	return s, b
}

// browser keeps cookies between requests the way a browser would.
type browser struct {
	t       testing.TB
	s       *server
	cookies map[string]string
}

func (s *server) browser(t testing.TB) *browser {
	return &browser{t: t, s: s, cookies: map[string]string{}}
}

// signedIn is a new browser that signed in through the sign-in page.
func (s *server) signedIn(t testing.TB) *browser {
	t.Helper()
	b := s.browser(t)
	b.get("/signin")
	r := b.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
	if r.StatusCode != fiber.StatusSeeOther || b.cookies[sessionCookie] == "" {
		t.Fatalf("sign in answered %d without a session: %s", r.StatusCode, r.body)
	}
	return b
}

type response struct {
	*http.Response
	body string
}

// cookie is the Set-Cookie of name in the response, or nil.
func (r *response) cookie(name string) *http.Cookie {
	for _, c := range r.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// send sends req with the browser's cookies and keeps the ones it sets.
func (b *browser) send(req *http.Request) *response {
	b.t.Helper()
	for name, value := range b.cookies {
		req.AddCookie(&http.Cookie{Name: name, Value: value})
	}
	res, err := b.s.app.Test(req, -1)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.t.Fatalf("%s %s: read the body: %v", req.Method, req.URL, err)
	}
	for _, c := range res.Cookies() {
		// As a browser does: a cookie is deleted by expiring it, not by
		// emptying it.
		if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(time.Now())) {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return &response{Response: res, body: string(body)}
}

// get asks for a page; headers come in name, value pairs.
func (b *browser) get(target string, headers ...string) *response {
	b.t.Helper()
	req := httptest.NewRequest(fiber.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.send(req)
}

// post submits a form from one of this server's pages: from its origin and
// with the CSRF token the page carries.
func (b *browser) post(target string, form url.Values) *response {
	b.t.Helper()
	form = cloneWith(form, "_csrf", b.cookies[csrfCookie])
	return b.send(formRequest(target, form, "Origin", origin))
}

func formRequest(target string, form url.Values, headers ...string) *http.Request {
	req := httptest.NewRequest(fiber.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set(fiber.HeaderContentType, fiber.MIMEApplicationForm)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func cloneWith(form url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	if value != "" {
		out.Set(key, value)
	}
	return out
}

func wantStatus(t testing.TB, r *response, status int) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("status %d, want %d; body: %.300s", r.StatusCode, status, r.body)
	}
}

func wantRedirect(t testing.TB, r *response, location string) {
	t.Helper()
	wantStatus(t, r, fiber.StatusSeeOther)
	if got := r.Header.Get(fiber.HeaderLocation); got != location {
		t.Fatalf("redirected to %q, want %q", got, location)
	}
}

func wantSentence(t testing.TB, r *response, sentence string) {
	t.Helper()
	if !strings.Contains(r.body, sentence) {
		body := r.body
		if i := strings.Index(body, "<main>"); i >= 0 {
			body = body[i:]
		}
		t.Fatalf("the answer does not say %q; body: %.1500s", sentence, body)
	}
}

// wantSignedIn checks the browser sees the owner's pages.
func wantSignedIn(t *testing.T, b *browser) {
	t.Helper()
	r := b.get("/backlog")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, ownerName)
}

// wantSignedOut checks the browser is sent to sign in.
func wantSignedOut(t *testing.T, b *browser) {
	t.Helper()
	wantRedirect(t, b.get("/backlog"), "/signin?next=%2Fbacklog")
}

func TestAFreshServerSendsEveryPageToSetup(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, path := range []string{"/", "/backlog", "/request", "/knowledge", "/settings", "/signin", "/no-such-page"} {
		t.Run(path, func(t *testing.T) {
			wantRedirect(t, s.browser(t).get(path), "/setup")
		})
		t.Run(path+" from htmx", func(t *testing.T) {
			r := s.browser(t).get(path, "HX-Request", "true")
			if got := r.Header.Get("HX-Redirect"); got != "/setup" {
				t.Fatalf("HX-Redirect = %q, want /setup (status %d)", got, r.StatusCode)
			}
			if r.StatusCode == fiber.StatusOK {
				t.Fatal("htmx was answered 200, so it would swap the answer into the page")
			}
		})
	}
	t.Run("/setup", func(t *testing.T) {
		r := s.browser(t).get("/setup")
		wantStatus(t, r, fiber.StatusOK)
		wantSentence(t, r, `data-testid="create-owner"`)
	})
}

func TestHealthzAnswersWithoutASession(t *testing.T) {
	t.Parallel()
	fresh := newServer(t)
	owned, _ := withOwner(t)
	for name, s := range map[string]*server{"fresh server": fresh, "server with an owner": owned} {
		t.Run(name, func(t *testing.T) {
			r := s.browser(t).get("/healthz")
			wantStatus(t, r, fiber.StatusOK)
			if ct := r.Header.Get(fiber.HeaderContentType); !strings.HasPrefix(ct, fiber.MIMEApplicationJSON) {
				t.Fatalf("Content-Type %q, want JSON", ct)
			}
			var got struct {
				OK      bool   `json:"ok"`
				Version string `json:"version"`
			}
			if err := json.Unmarshal([]byte(r.body), &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, r.body)
			}
			if !got.OK || got.Version != launcher.Version {
				t.Fatalf("healthz said %+v", got)
			}
		})
	}
}

func TestSetupCreatesTheOwnerAndSignsThemIn(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	b := s.browser(t)
	b.get("/setup")
	r := b.post("/setup", url.Values{"name": {ownerName}, "password": {password}, "again": {password}})
	wantRedirect(t, r, "/backlog")

	c := r.cookie(sessionCookie)
	if c == nil || c.Value == "" {
		t.Fatalf("setup set no session cookie: %v", r.Header.Values("Set-Cookie"))
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("session cookie %q: want HttpOnly, SameSite=Strict, Path=/", c.Raw)
	}
	if c.Secure {
		t.Errorf("session cookie %q is Secure over plain http: the browser would never send it back", c.Raw)
	}
	wantSignedIn(t, b)

	t.Run("the setup form is gone", func(t *testing.T) {
		for name, visitor := range map[string]*browser{"owner": b, "stranger": s.browser(t)} {
			r := visitor.get("/setup")
			if r.StatusCode != fiber.StatusSeeOther || strings.Contains(r.body, "create-owner") {
				t.Errorf("%s: GET /setup answered %d with the setup form", name, r.StatusCode)
			}
		}
	})
	t.Run("a second setup is refused", func(t *testing.T) {
		stranger := s.browser(t)
		stranger.get("/setup")
		r := stranger.post("/setup", url.Values{"name": {"Mallory"}, "password": {"another long password"}, "again": {"another long password"}})
		wantStatus(t, r, fiber.StatusConflict)
		wantSentence(t, r, "The owner already exists. Sign in instead.")
		if stranger.cookies[sessionCookie] != "" {
			t.Fatal("the refused setup signed the stranger in")
		}
		wantSignedIn(t, s.signedIn(t))
	})
}

func TestSetupWithABadPasswordCreatesNobody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, password, again, sentence string
	}{
		{"too short", "short", "short", "The password must be at least 12 characters long."},
		{"the two differ", password, password + "!", "The two passwords differ. Type the same password twice."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			b := s.browser(t)
			b.get("/setup")
			r := b.post("/setup", url.Values{"name": {ownerName}, "password": {tt.password}, "again": {tt.again}})
			wantStatus(t, r, fiber.StatusUnprocessableEntity)
			wantSentence(t, r, tt.sentence)
			wantSentence(t, r, `value="`+ownerName+`"`)
			wantRedirect(t, b.get("/backlog"), "/setup")
		})
	}
}

func TestEveryPageNeedsASession(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	for _, path := range []string{"/backlog", "/request", "/knowledge", "/settings", "/settings?tab=keys"} {
		t.Run(path+" without a session", func(t *testing.T) {
			wantRedirect(t, s.browser(t).get(path), "/signin?next="+url.QueryEscape(path))
		})
		t.Run(path+" with a session", func(t *testing.T) {
			r := ada.get(path)
			wantStatus(t, r, fiber.StatusOK)
			wantSentence(t, r, `data-testid="owner-name">`+ownerName+`<`)
		})
	}
	t.Run("htmx without a session", func(t *testing.T) {
		r := s.browser(t).get("/backlog", "HX-Request", "true")
		if got := r.Header.Get("HX-Redirect"); got != "/signin" {
			t.Fatalf("HX-Redirect = %q, want /signin", got)
		}
	})
	t.Run("a made-up session", func(t *testing.T) {
		b := s.browser(t)
		b.cookies[sessionCookie] = strings.Repeat("A", 43)
		wantSignedOut(t, b)
	})
}

func TestAPostThatMayComeFromAnotherSiteIsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		token    string // "good" sends the cookie's token
		inHeader bool
		headers  []string
		sentence string // empty when the post is accepted
	}{
		{name: "from this origin with the token", token: "good", headers: []string{"Origin", origin}},
		{name: "token in the htmx header", token: "good", inHeader: true, headers: []string{"Origin", origin}},
		{name: "no Origin but Sec-Fetch-Site same-origin", token: "good", headers: []string{"Sec-Fetch-Site", "same-origin"}},
		{name: "no token", headers: []string{"Origin", origin}, sentence: noToken},
		{name: "a token that is not the cookie's", token: strings.Repeat("x", 43), headers: []string{"Origin", origin}, sentence: noToken},
		{name: "Origin of another site", token: "good", headers: []string{"Origin", "https://evil.example"}, sentence: crossSite},
		{name: "Origin of this host over https", token: "good", headers: []string{"Origin", "https://example.com"}, sentence: crossSite},
		{name: "Origin null", token: "good", headers: []string{"Origin", "null"}, sentence: crossSite},
		{name: "neither Origin nor Sec-Fetch-Site", token: "good", sentence: crossSite},
		{name: "Sec-Fetch-Site cross-site", token: "good", headers: []string{"Sec-Fetch-Site", "cross-site"}, sentence: crossSite},
		{name: "Sec-Fetch-Site same-site", token: "good", headers: []string{"Sec-Fetch-Site", "same-site"}, sentence: crossSite},
	}
	s, _ := withOwner(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := s.signedIn(t)
			token := tt.token
			if token == "good" {
				token = b.cookies[csrfCookie]
			}
			form := url.Values{}
			headers := tt.headers
			if tt.inHeader {
				headers = append(headers, "X-Csrf-Token", token)
			} else if token != "" {
				form.Set("_csrf", token)
			}
			r := b.send(formRequest("/signout", form, headers...))
			if tt.sentence == "" {
				wantRedirect(t, r, "/signin?signed_out=1")
				wantSignedOut(t, b)
				return
			}
			wantStatus(t, r, fiber.StatusForbidden)
			wantSentence(t, r, tt.sentence)
			wantSignedIn(t, b)
		})
	}
}

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	tests := []struct {
		name   string
		from   *browser
		path   string
		status int
	}{
		{"a page", ada, "/backlog", fiber.StatusOK},
		{"the sign-in page", s.browser(t), "/signin", fiber.StatusOK},
		{"a redirect to sign in", s.browser(t), "/settings", fiber.StatusSeeOther},
		{"an address with no page", ada, "/no-such-page", fiber.StatusNotFound},
		{"a static file", s.browser(t), static.Path("app.css"), fiber.StatusOK},
		{"a static file that is not there", s.browser(t), "/static/nothing.js", fiber.StatusNotFound},
		{"healthz", s.browser(t), "/healthz", fiber.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.from.get(tt.path)
			wantStatus(t, r, tt.status)
			csp := r.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy %q lets other sites frame the page", csp)
			}
			if csp == "" || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("Content-Security-Policy %q allows inline code", csp)
			}
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if got := r.Header.Get("Referrer-Policy"); got != "same-origin" && got != "no-referrer" {
				t.Errorf("Referrer-Policy = %q, want one that keeps addresses on this server", got)
			}
		})
	}
}

func TestStaticFilesAreCachedForAYear(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, contentType string
	}{
		{"app.css", "text/css"},
		{static.HTMX, "javascript"},
		{"icon.svg", "image/svg+xml"},
	}
	s := newServer(t)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := s.browser(t).get(static.Path(tt.file))
			wantStatus(t, r, fiber.StatusOK)
			if cc := r.Header.Get(fiber.HeaderCacheControl); !strings.Contains(cc, "max-age=31536000") {
				t.Errorf("Cache-Control %q, want a year", cc)
			}
			if ct := r.Header.Get(fiber.HeaderContentType); !strings.Contains(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tt.contentType)
			}
			want, err := static.Files.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if r.body != string(want) {
				t.Errorf("served %d bytes, want the %d embedded", len(r.body), len(want))
			}
		})
	}
	t.Run("favicon", func(t *testing.T) {
		r := s.browser(t).get("/favicon.ico")
		if got := r.Header.Get(fiber.HeaderLocation); got != static.Path("icon.svg") {
			t.Fatalf("favicon leads to %q (status %d), want the icon", got, r.StatusCode)
		}
	})
}

func TestSignInIssuesANewSessionAndANewToken(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	t.Run("already signed in", func(t *testing.T) {
		oldSession, oldToken := ada.cookies[sessionCookie], ada.cookies[csrfCookie]
		r := ada.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
		wantRedirect(t, r, "/backlog")
		if c := r.cookie(sessionCookie); c == nil || c.Value == "" || c.Value == oldSession {
			t.Fatalf("sign-in kept the session id: %v", r.Header.Values("Set-Cookie"))
		}
		if c := r.cookie(csrfCookie); c == nil || c.Value == "" || c.Value == oldToken {
			t.Fatalf("sign-in kept the CSRF token: %v", r.Header.Values("Set-Cookie"))
		}
		wantSignedIn(t, ada)

		stale := s.browser(t)
		stale.cookies[sessionCookie] = oldSession
		wantSignedOut(t, stale)
	})
	t.Run("from the sign-in page", func(t *testing.T) {
		b := s.browser(t)
		b.get("/signin")
		before := b.cookies[csrfCookie]
		if before == "" {
			t.Fatal("the sign-in page set no CSRF cookie")
		}
		r := b.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
		wantRedirect(t, r, "/backlog")
		if c := r.cookie(csrfCookie); c == nil || c.Value == "" || c.Value == before {
			t.Fatalf("sign-in kept the token of the signed-out visitor: %v", r.Header.Values("Set-Cookie"))
		}
		wantSignedIn(t, b)
	})
	t.Run("session ids differ between browsers", func(t *testing.T) {
		a, b := s.signedIn(t), s.signedIn(t)
		if a.cookies[sessionCookie] == b.cookies[sessionCookie] {
			t.Fatal("two sign-ins got the same session id")
		}
		wantSignedIn(t, a)
		wantSignedIn(t, b)
	})
}

func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	other := s.signedIn(t)
	stolen := ada.cookies[sessionCookie]

	r := ada.post("/signout", nil)
	wantRedirect(t, r, "/signin?signed_out=1")
	if _, ok := ada.cookies[sessionCookie]; ok {
		t.Errorf("the session cookie is still in the browser: %v", r.Header.Values("Set-Cookie"))
	}
	wantSentence(t, ada.get("/signin?signed_out=1"), "You are signed out.")
	wantSignedOut(t, ada)

	replay := s.browser(t)
	replay.cookies[sessionCookie] = stolen
	wantSignedOut(t, replay)

	wantSignedIn(t, other)
}

func TestTheSixthFailedSignInWithinAMinuteIsThrottled(t *testing.T) {
	t.Parallel()
	s, _ := withOwner(t)
	b := s.browser(t)
	b.get("/signin")
	for i := 0; i < owner.MaxFailures; i++ {
		r := b.post("/signin", url.Values{"name": {ownerName}, "password": {"not the password"}})
		wantStatus(t, r, fiber.StatusUnauthorized)
		wantSentence(t, r, mismatch)
		s.clock.Advance(time.Second)
	}
	r := b.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
	wantStatus(t, r, fiber.StatusTooManyRequests)
	if got := r.Header.Get(fiber.HeaderRetryAfter); got != "55" {
		t.Errorf("Retry-After = %q, want 55", got)
	}
	wantSentence(t, r, "Too many failed sign-ins for this name. Try again in 55 seconds.")
	if b.cookies[sessionCookie] != "" {
		t.Fatal("a throttled sign-in set a session")
	}

	s.clock.Advance(55 * time.Second)
	wantRedirect(t, b.post("/signin", url.Values{"name": {ownerName}, "password": {password}}), "/backlog")
	wantSignedIn(t, b)
}

// The attack of issue #26: a preview on the owner's machine guessed the
// owner's name until the owner's own browser was refused the right
// password. A browser that signed in before keeps an allowance of its own;
// the guesser stays throttled.
func TestOthersGuessesDoNotLockOutTheOwnersBrowser(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	known := ada.cookies[browserCookie]
	if len(known) != 43 {
		t.Fatalf("setup left the browser cookie %q, want a token", known)
	}
	wantRedirect(t, ada.post("/signout", nil), "/signin?signed_out=1")
	if ada.cookies[browserCookie] != known {
		t.Fatal("signing out forgot that the browser signed in before")
	}

	// From the same address as the owner's browser, as a preview is.
	guesser := s.browser(t)
	guesser.get("/signin")
	for i := 0; i < owner.MaxFailures; i++ {
		r := guesser.post("/signin", url.Values{"name": {ownerName}, "password": {"not the password"}})
		wantStatus(t, r, fiber.StatusUnauthorized)
	}
	r := guesser.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
	wantStatus(t, r, fiber.StatusTooManyRequests)

	ada.get("/signin")
	wantRedirect(t, ada.post("/signin", url.Values{"name": {ownerName}, "password": {password}}), "/backlog")
	wantSignedIn(t, ada)

	r = guesser.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
	wantStatus(t, r, fiber.StatusTooManyRequests)
	wantSentence(t, r, "Too many failed sign-ins for this name. Try again in 60 seconds.")
	if guesser.cookies[sessionCookie] != "" {
		t.Fatal("the guesser was signed in")
	}
}

// The browser cookie is sent only to the sign-in page, never to a script,
// and lasts as long as a browser keeps a cookie.
func TestSigningInMarksTheBrowser(t *testing.T) {
	t.Parallel()
	s, _ := withOwner(t)
	b := s.browser(t)
	b.get("/signin")
	r := b.post("/signin", url.Values{"name": {ownerName}, "password": {password}})
	wantRedirect(t, r, "/backlog")
	c := r.cookie(browserCookie)
	if c == nil {
		t.Fatalf("sign-in set no %s cookie: %q", browserCookie, r.Header.Values("Set-Cookie"))
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/signin" || c.Secure ||
		time.Duration(c.MaxAge)*time.Second != owner.KnownBrowserLife {
		t.Fatalf("the browser cookie is %+v, want HttpOnly, SameSite=Strict, Path=/signin, not Secure over http, Max-Age 400 days", c)
	}
}

func TestAnAddressWithNoPageIsNotFound(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	t.Run("page", func(t *testing.T) {
		r := ada.get("/no-such-page")
		wantStatus(t, r, fiber.StatusNotFound)
		wantSentence(t, r, "There is no page at this address.")
	})
	t.Run("htmx", func(t *testing.T) {
		r := ada.get("/no-such-page", "HX-Request", "true")
		wantStatus(t, r, fiber.StatusNotFound)
		if r.body != "There is no page at this address." {
			t.Fatalf("htmx was answered %q, want the bare sentence", r.body)
		}
	})
}

func TestSignInStaysOnThisServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		next, want string
	}{
		{"/settings", "/settings"},
		{"/knowledge?q=build", "/knowledge?q=build"},
		{"", "/backlog"},
		{"//evil.example", "/backlog"},
		{"//evil.example/backlog", "/backlog"},
		{"https://evil.example", "/backlog"},
		{"https://evil.example/backlog", "/backlog"},
		{"/\\evil.example", "/backlog"},
		{"/\t/evil.example", "/backlog"},
		{"/\n/evil.example", "/backlog"},
		{"javascript:alert(1)", "/backlog"},
		{"evil.example", "/backlog"},
	}
	s, _ := withOwner(t)
	for _, tt := range tests {
		t.Run("sign in with next="+tt.next, func(t *testing.T) {
			b := s.browser(t)
			b.get("/signin?next=" + url.QueryEscape(tt.next))
			r := b.post("/signin", url.Values{"name": {ownerName}, "password": {password}, "next": {tt.next}})
			wantRedirect(t, r, tt.want)
		})
		t.Run("signed in, visiting the sign-in page with next="+tt.next, func(t *testing.T) {
			b := s.signedIn(t)
			wantRedirect(t, b.get("/signin?next="+url.QueryEscape(tt.next)), tt.want)
		})
	}
}
