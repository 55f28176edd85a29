package handlers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/handlers"
	"autoapp/intent/owner"
)

// hostServer is the app as `serve --addr 127.0.0.1:8080
// --allow-remote=box.example` builds it, over a fresh root.
func hostServer(t *testing.T) (*fiber.App, *owner.Service) {
	t.Helper()
	s := newServer(t)
	app, owners := s.launcher.App(launcher.Site{Hosts: []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "box.example:8080"}}, nil), s.launcher.Owners
	return app, owners
}

// ask sends req as it is, Host included, and returns the status and body.
func ask(t *testing.T, app *fiber.App, req *http.Request) (int, string) {
	t.Helper()
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

const elsewhere = "This server answers only at http://127.0.0.1:8080/; it does not serve the name "

func TestOnlyThisServersNamesAreServed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		host string
		// refusal is the sentence of a refused Host; empty when it is served.
		refusal string
	}{
		{"the listen address", "127.0.0.1:8080", ""},
		{"localhost", "localhost:8080", ""},
		{"localhost in capitals", "LOCALHOST:8080", ""},
		{"IPv6 loopback", "[::1]:8080", ""},
		{"IPv6 loopback spelled out", "[0:0:0:0:0:0:0:1]:8080", ""},
		{"a name given with --allow-remote", "box.example:8080", ""},
		{"that name in another case", "Box.Example:8080", ""},
		{"a wrong port", "127.0.0.1:9090", elsewhere + "127.0.0.1:9090."},
		{"no port, so port 80", "localhost", elsewhere + "localhost."},
		{"a rebound name", "rebind.example:8080", elsewhere + "rebind.example:8080."},
		{"a given name on a wrong port", "box.example:9090", elsewhere + "box.example:9090."},
		{"a subdomain of a given name", "evil.box.example:8080", elsewhere + "evil.box.example:8080."},
		{"IPv6 loopback without brackets", "::1:8080", elsewhere + "::1:8080."},
		{"no Host", "", "This server answers only at http://127.0.0.1:8080/; the request named no host."},
	}
	app, _ := hostServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(fiber.MethodGet, "/healthz", nil)
			req.Host = tt.host
			status, body := ask(t, app, req)
			if tt.refusal == "" {
				if status != fiber.StatusOK || !strings.Contains(body, `"ok":true`) {
					t.Fatalf("/healthz at %q answered %d %q, want it served", tt.host, status, body)
				}
				return
			}
			if status != fiber.StatusMisdirectedRequest || body != tt.refusal {
				t.Fatalf("/healthz at %q answered %d %q, want 421 %q", tt.host, status, body, tt.refusal)
			}
		})
	}
}

// A request target naming its host ("GET http://rebind.example:8080/")
// is checked too: fasthttp takes the target's host over the header's.
func TestAnAbsoluteTargetForAnotherNameIsRefused(t *testing.T) {
	t.Parallel()
	app, _ := hostServer(t)
	// app.Test sends an absolute target without a Host header.
	req := httptest.NewRequest(fiber.MethodGet, "http://rebind.example:8080/healthz", nil)
	status, body := ask(t, app, req)
	if want := elsewhere + "rebind.example:8080."; status != fiber.StatusMisdirectedRequest || body != want {
		t.Fatalf("answered %d %q, want 421 %q", status, body, want)
	}
}

// The attack of issue #14: a page on rebind.example that DNS-rebinds to
// 127.0.0.1 is same-origin with itself, so it can set its own CSRF cookie
// and send the matching token. Only the Host tells it apart.
func TestARebindingPageCannotCreateTheOwner(t *testing.T) {
	t.Parallel()
	const token = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	setup := func(host string) *http.Request {
		form := url.Values{"name": {"Mallory"}, "password": {password}, "again": {password}, "_csrf": {token}}
		req := formRequest("/setup", form, "Origin", "http://"+host)
		req.Host = host
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: token})
		return req
	}
	app, owners := hostServer(t)
	ctx := context.Background()

	status, body := ask(t, app, setup("rebind.example:8080"))
	if want := elsewhere + "rebind.example:8080."; status != fiber.StatusMisdirectedRequest || body != want {
		t.Fatalf("POST /setup from the rebound name answered %d %q, want 421 %q", status, body, want)
	}
	if exists, err := owners.Exists(ctx); err != nil || exists {
		t.Fatalf("after the refused setup the owner exists: %v, %v", exists, err)
	}

	// The same request at this server's name creates the owner: the Host
	// alone stopped the first.
	if status, body := ask(t, app, setup("127.0.0.1:8080")); status != fiber.StatusSeeOther {
		t.Fatalf("POST /setup at 127.0.0.1:8080 answered %d: %.300s", status, body)
	}
	if exists, err := owners.Exists(ctx); err != nil || !exists {
		t.Fatalf("after the accepted setup the owner exists: %v, %v", exists, err)
	}
}

// A graph built without names must not answer every name.
func TestNewRefusesToServeWithoutNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		hosts []string
	}{
		{"no names", nil},
		{"a name without a port", []string{"localhost"}},
		{"a URL", []string{"http://localhost:8080"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("New with Hosts %q did not panic", tt.hosts)
				}
			}()
			handlers.New(handlers.Deps{Hosts: tt.hosts, Now: time.Now})
		})
	}
}

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string // want is empty when in is refused
	}{
		{"name and port", "Box.Example:8080", "box.example:8080"},
		{"name alone takes the default port", "box.example", "box.example:80"},
		{"an empty port is the default", "box.example:", "box.example:80"},
		{"IPv4", "127.0.0.1:8080", "127.0.0.1:8080"},
		{"IPv6 in brackets", "[::1]:8080", "[::1]:8080"},
		{"IPv6 alone", "[::1]", "[::1]:80"},
		{"IPv6 in capitals and spelled out", "[FE80:0:0:0:0:0:0:1]:8080", "[fe80::1]:8080"},
		{"a leading zero in the port", "localhost:08080", "localhost:8080"},
		{"IPv6 without brackets", "::1", ""},
		{"a name in brackets", "[localhost]:8080", ""},
		{"a port out of range", "localhost:65536", ""},
		{"port zero", "localhost:0", ""},
		{"a signed port", "localhost:+80", ""},
		{"a URL", "http://localhost:8080", ""},
		{"a path", "localhost/x", ""},
		{"a space", "local host", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := handlers.CanonicalHost(tt.in, "80")
			if tt.want == "" {
				if err == nil {
					t.Fatalf("CanonicalHost(%q) = %q, want it refused", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// The attack of issue #26: Fiber's Hostname believed X-Forwarded-Host, so
// a page on evil.example passed the same-origin check by naming itself
// there. Without a trusted proxy no forwarded header is read at all.
func TestForwardedHeadersAreNotBelievedByDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		headers []string
		// accepted is true when the post goes through: the header was
		// ignored, so it neither helped nor hurt.
		accepted bool
	}{
		{"X-Forwarded-Host naming the Origin's site", []string{"Origin", "http://evil.example", "X-Forwarded-Host", "evil.example"}, false},
		{"X-Forwarded-Host as a list", []string{"Origin", "http://evil.example", "X-Forwarded-Host", "evil.example, example.com"}, false},
		{"X-Forwarded-Proto https", []string{"Origin", "https://example.com", "X-Forwarded-Proto", "https"}, false},
		{"X-Forwarded-Ssl on", []string{"Origin", "https://example.com", "X-Forwarded-Ssl", "on"}, false},
		{"X-Url-Scheme https", []string{"Origin", "https://example.com", "X-Url-Scheme", "https"}, false},
		{"Forwarded", []string{"Origin", "http://evil.example", "Forwarded", "host=evil.example;proto=http"}, false},
		{"X-Forwarded-Host of another site from this origin", []string{"Origin", origin, "X-Forwarded-Host", "evil.example"}, true},
	}
	s, _ := withOwner(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := s.signedIn(t)
			form := url.Values{"_csrf": {b.cookies[csrfCookie]}}
			r := b.send(formRequest("/signout", form, tt.headers...))
			if tt.accepted {
				wantRedirect(t, r, "/signin?signed_out=1")
				return
			}
			wantStatus(t, r, fiber.StatusForbidden)
			wantSentence(t, r, crossSite)
			wantSignedIn(t, b)
		})
	}
}

// X-Forwarded-For is not believed either: every guess counts against the
// connection's own address.
func TestXForwardedForIsNotBelievedByDefault(t *testing.T) {
	t.Parallel()
	s, _ := withOwner(t)
	guess := func(name, from string) *response {
		b := s.browser(t)
		b.get("/signin")
		form := url.Values{"name": {name}, "password": {"not the password"}, "_csrf": {b.cookies[csrfCookie]}}
		return b.send(formRequest("/signin", form, "Origin", origin, "X-Forwarded-For", from))
	}
	for i := 0; i < owner.MaxFailures; i++ {
		wantStatus(t, guess(fmt.Sprintf("Guess %d", i), "192.0.2.7"), fiber.StatusUnauthorized)
	}
	r := guess("Another guess", "192.0.2.8")
	wantStatus(t, r, fiber.StatusTooManyRequests)
	wantSentence(t, r, "Too many failed sign-ins from this network address.")
}

// listening is the real app over a fresh root on a 127.0.0.1 port,
// answering at that address and at names, and believing the forwarded
// headers of trusted. It returns the server and its address.
func listening(t *testing.T, names, trusted []string) (*server, string) {
	t.Helper()
	s := newServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	app := s.launcher.App(launcher.Site{Hosts: append([]string{addr}, names...), TrustedProxies: trusted}, nil)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() {
		if err := app.Shutdown(); err != nil {
			t.Error(err)
		}
		<-served
	})
	return s, addr
}

// through sends a request to the listening server as a proxy in front of it
// would, headers in name, value pairs, cookies as they are given. It
// follows no redirect.
func through(t *testing.T, addr, method, path string, form url.Values, cookies []*http.Cookie, headers ...string) *response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set(fiber.HeaderContentType, fiber.MIMEApplicationForm)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Add(headers[i], headers[i+1])
		}
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{Response: res, body: string(b)}
}

// With --trusted-proxy naming the proxy's address, what it forwards is the
// request as the browser sent it: the name and scheme the browser asked
// for, which the Host and Origin checks use, and the browser's address,
// which the sign-in throttle counts. From elsewhere, the same headers are
// not believed.
func TestATrustedProxysForwardedHeadersAreBelieved(t *testing.T) {
	t.Parallel()
	// The proxy serves https://box.example/ and connects from 127.0.0.1.
	forwarded := []string{"X-Forwarded-Host", "box.example", "X-Forwarded-Proto", "https"}
	setup := func(t *testing.T, addr string, headers ...string) *response {
		t.Helper()
		r := through(t, addr, fiber.MethodGet, "/setup", nil, nil, headers...)
		wantStatus(t, r, fiber.StatusOK)
		csrf := r.cookie(csrfCookie)
		if csrf == nil {
			t.Fatalf("GET /setup set no CSRF cookie: %q", r.Header.Values("Set-Cookie"))
		}
		form := url.Values{"name": {ownerName}, "password": {password}, "again": {password}, "_csrf": {csrf.Value}}
		return through(t, addr, fiber.MethodPost, "/setup", form, []*http.Cookie{csrf},
			append([]string{"Origin", "https://box.example"}, headers...)...)
	}

	t.Run("from the trusted proxy", func(t *testing.T) {
		t.Parallel()
		s, addr := listening(t, []string{"box.example:80"}, []string{"127.0.0.1"})
		r := setup(t, addr, forwarded...)
		wantRedirect(t, r, "/backlog")
		for _, name := range []string{sessionCookie, csrfCookie, browserCookie} {
			if c := r.cookie(name); c == nil || !c.Secure {
				t.Errorf("the %s cookie is %+v, want it Secure: the browser is on https", name, c)
			}
		}
		if exists, err := s.launcher.Owners.Exists(context.Background()); err != nil || !exists {
			t.Fatalf("the owner exists: %v, %v", exists, err)
		}

		t.Run("a forwarded name that is not this server's is refused", func(t *testing.T) {
			r := through(t, addr, fiber.MethodGet, "/healthz", nil, nil, "X-Forwarded-Host", "evil.example")
			wantStatus(t, r, fiber.StatusMisdirectedRequest)
			wantSentence(t, r, "it does not serve the name evil.example.")
		})

		t.Run("the throttle counts the forwarded address", func(t *testing.T) {
			guess := func(name string, forwardedFor ...string) *response {
				t.Helper()
				r := through(t, addr, fiber.MethodGet, "/signin", nil, nil, forwarded...)
				csrf := r.cookie(csrfCookie)
				form := url.Values{"name": {name}, "password": {"not the password"}, "_csrf": {csrf.Value}}
				headers := append([]string{"Origin", "https://box.example"}, forwarded...)
				for _, f := range forwardedFor {
					headers = append(headers, "X-Forwarded-For", f)
				}
				return through(t, addr, fiber.MethodPost, "/signin", form, []*http.Cookie{csrf}, headers...)
			}
			for i := 0; i < owner.MaxFailures; i++ {
				wantStatus(t, guess(fmt.Sprintf("Guess %d", i), "192.0.2.7"), fiber.StatusUnauthorized)
			}
			r := guess("Another guess", "192.0.2.7")
			wantStatus(t, r, fiber.StatusTooManyRequests)
			wantSentence(t, r, "Too many failed sign-ins from this network address.")
			// What the browser wrote itself, left of what the proxy added,
			// changes nothing.
			wantStatus(t, guess("Another guess", "192.0.2.8, 192.0.2.7"), fiber.StatusTooManyRequests)
			wantStatus(t, guess("Another guess", "192.0.2.8", "192.0.2.7"), fiber.StatusTooManyRequests)
			// Another browser behind the proxy is not throttled.
			wantStatus(t, guess("Another guess", "192.0.2.9"), fiber.StatusUnauthorized)
		})
	})

	t.Run("from an address that is not a trusted proxy", func(t *testing.T) {
		t.Parallel()
		s, addr := listening(t, []string{"box.example:80"}, []string{"192.0.2.1"})
		r := setup(t, addr, forwarded...)
		wantStatus(t, r, fiber.StatusForbidden)
		wantSentence(t, r, crossSite)
		if exists, err := s.launcher.Owners.Exists(context.Background()); err != nil || exists {
			t.Fatalf("the owner exists: %v, %v", exists, err)
		}
	})
}

// The attack of issue #26: fasthttp keeps the last of two Host headers, so
// a request naming another server first passed. More than one Host header
// is refused, whatever they name. app.Test writes one Host at most, so this
// speaks HTTP over a real connection.
func TestARequestWithMoreThanOneHostHeaderIsRefused(t *testing.T) {
	t.Parallel()
	_, addr := listening(t, nil, nil)
	tests := []struct {
		name  string
		hosts []string
		// status is 400 for more than one Host.
		status int
	}{
		{"one Host", []string{"Host: " + addr}, fiber.StatusOK},
		{"another name, then this server's", []string{"Host: rebind.example", "Host: " + addr}, fiber.StatusBadRequest},
		{"this server's, then another name", []string{"Host: " + addr, "Host: rebind.example"}, fiber.StatusBadRequest},
		{"this server's twice", []string{"Host: " + addr, "Host: " + addr}, fiber.StatusBadRequest},
		{"the second in lower case", []string{"Host: rebind.example", "host: " + addr}, fiber.StatusBadRequest},
		{"with another header between", []string{"Host: rebind.example", "Accept: */*", "HOST: " + addr}, fiber.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			raw := "GET /healthz HTTP/1.1\r\n" + strings.Join(tt.hosts, "\r\n") + "\r\nConnection: close\r\n\r\n"
			if _, err := io.WriteString(conn, raw); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status {
				t.Fatalf("answered %d %q, want %d", res.StatusCode, body, tt.status)
			}
			if tt.status == fiber.StatusBadRequest && string(body) != "The request has more than one Host header." {
				t.Fatalf("answered %q, want the sentence", body)
			}
		})
	}
}
