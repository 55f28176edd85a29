package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/handlers"
	"autoapp/intent/owner"
	"autoapp/migrations/migrationstest"
)

// hostServer is the app as `serve --addr 127.0.0.1:8080
// --allow-remote=box.example` builds it, over a fresh root.
func hostServer(t *testing.T) (*fiber.App, *owner.Service) {
	t.Helper()
	c := &clock{}
	owners := owner.NewService(migrationstest.Intents(t), c.now)
	app := handlers.New(handlers.Deps{Owners: owners, Version: "test-version",
		Hosts: []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "box.example:8080"}})
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
			handlers.New(handlers.Deps{Hosts: tt.hosts})
		})
	}
}

func TestCanonicalHost(t *testing.T) {
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
