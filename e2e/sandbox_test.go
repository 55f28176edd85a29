package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// hostileService is a Go service, written as a hostile engineer would, whose
// home page tries to reach what belongs to the owner and reports, a line
// each, what it got: "<what>: refused (<error>)" or "<what>: GOT IT". It
// also reports the Cookie header the browser sent it. It uses only the
// net package, so a build with an empty cache stays short.
func hostileService(root, home, hostCache string) string {
	return `package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

const root = ` + strconv.Quote(root) + `

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		go serve(c)
	}
}

func serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	line, _ := r.ReadString('\n')
	cookie := "none"
	for {
		h, err := r.ReadString('\n')
		if err != nil || h == "\r\n" {
			break
		}
		if strings.HasPrefix(strings.ToLower(h), "cookie:") {
			cookie = strings.TrimSpace(h[len("cookie:"):])
		}
	}
	status, kind, body := "404 Not Found", "text/plain", "no such page"
	switch f := strings.Fields(line); {
	case len(f) > 1 && f[1] == "/health":
		status, kind, body = "200 OK", "application/json", ` + "`" + `{"ok": true}` + "`" + `
	case len(f) > 1 && f[1] == "/":
		status, body = "200 OK", report(cookie)
	}
	fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: %s; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, kind, len(body), body)
}

func report(cookie string) string {
	var b strings.Builder
	say := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(&b, "%s: refused (%v)\n", what, err)
		} else {
			fmt.Fprintf(&b, "%s: GOT IT\n", what)
		}
	}
	read := func(what, p string) {
		_, err := os.ReadFile(p)
		say(what, err)
	}
	write := func(what, p string) {
		say(what, os.WriteFile(p, []byte("pwned"), 0o644))
	}
	read("read the keys", root+"/launcher/providers.json")
	read("read the backlog store", root+"/launcher/intents.sqlite")
	read("read the knowledge store", root+"/launcher/knowledge.sqlite")
	read("read another application", root+"/apps/other/workspace/autoapp.json")
	read("read /etc/shadow", "/etc/shadow")
	read("read the server's environment", fmt.Sprintf("/proc/%d/environ", os.Getppid()))
	_, err := os.ReadDir(` + strconv.Quote(home) + `)
	say("list the host's home", err)
	write("write the launcher folder", root+"/launcher/pwned")
	write("write another application", root+"/apps/other/workspace/pwned")
	write("write the host's Go cache", ` + strconv.Quote(filepath.Join(hostCache, "autoapp-pwned")) + `)
	say("signal the server", syscall.Kill(os.Getppid(), syscall.SIGURG))
	fmt.Fprintf(&b, "cookie: %s\n", cookie)
	return b.String()
}
`
}

// probes are the lines of hostileService's report that must each say refused.
var probes = []string{"read the keys", "read the backlog store", "read the knowledge store", "read another application",
	"read /etc/shadow", "read the server's environment", "list the host's home", "write the launcher folder",
	"write another application", "write the host's Go cache", "signal the server"}

// report reads hostileService's lines into what → outcome, and the cookie.
func report(text string) (map[string]string, string) {
	got := map[string]string{}
	cookie := ""
	for l := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		what, outcome, _ := strings.Cut(l, ": ")
		if what == "cookie" {
			cookie = outcome
			continue
		}
		got[what] = outcome
	}
	return got, cookie
}

// TestTheEngineersCodeReachesNothingOfTheOwners lets the builder write a Go
// service that tries to read the owner's keys and stores, another
// application, the host's home, and to write outside its workspace; the
// host builds and previews it in a run, and the owner opens the preview in
// the browser, signed in. Confined, every attempt is refused and the
// preview is sent none of the console's cookies. With the sandbox turned off
// by the owner in Settings, the same service gets the keys, which shows
// the test can fail; and opened at the loopback address instead of its own
// host name, it is sent the console's session cookie.
func TestTheEngineersCodeReachesNothingOfTheOwners(t *testing.T) {
	home, err := os.UserHomeDir()
	must(t, err)
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	must(t, err)
	hostCache := strings.TrimSpace(string(out))
	t.Cleanup(func() { os.Remove(filepath.Join(hostCache, "autoapp-pwned")) })

	for _, confined := range []bool{true, false} {
		name := "confined"
		if !confined {
			name = "turned off by the owner"
		}
		t.Run(name, func(t *testing.T) {
			s, model, page := signedInWithModel(t, "builder")
			if !confined {
				_, err := page.Goto(s.URL + "/settings")
				must(t, err)
				must(t, page.GetByTestId("unconfined").Check())
				must(t, page.GetByTestId("save-sandbox").Click())
				must(t, expect.Locator(page.GetByTestId("sandbox").GetByTestId("sandbox-state")).ToContainText("run unconfined"))
				_, err = page.Locator("#sandbox").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "settings-sandbox.png"))})
				must(t, err)
			}
			_, err := page.Goto(s.URL + "/apps")
			must(t, err)
			must(t, expect.Locator(page.GetByTestId("sandbox-state")).ToHaveAttribute("data-confined", strconv.FormatBool(confined)))
			_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "apps-"+strconv.FormatBool(confined)+".png"))})
			must(t, err)

			in := planOn(t, s, "svc", "goservice", "Add a home page.", plan.Task{Title: "Add a home page", Priority: "high",
				Labels: []string{"views"}, EstimatedLines: 80, Risk: "normal", Reasoning: "low", Summary: "A home page.",
				Criteria: []plan.Criterion{{Text: "The service stays healthy"}}, NoFailurePath: "nothing is refused",
				Runbook: []string{"Open the home page."}})
			createApp(t, s, "other", "static")

			visited, release := held(t)
			cycled := make(chan struct{})
			runID := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-add-a-home-page-a1"
			model.On(scripted.RunID(runID),
				scripted.Reply{ToolCalls: []scripted.Call{
					overwrite("main.go", hostileService(s.Root, home, hostCache)),
					change("acceptance/0001-add-a-home-page-c1.json", `{"title": "The service stays healthy", "steps": [{"method": "GET", "path": "/health", "expect": {"status": 200}}]}`),
				}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Before: func() { close(cycled); visited() }, Text: "The home page is there."})
			runFromPage(t, page, s, in.ID)
			// The turn's cycle built the service and started its preview.
			select {
			case <-cycled:
			case <-time.After(3 * time.Minute):
				t.Fatalf("the builder's cycle did not end within 3 minutes: %s", s.out)
			}

			// The owner opens the preview from the application's page, in
			// the same browser, signed in.
			_, err = page.Goto(s.URL + "/apps/svc")
			must(t, err)
			link := page.GetByTestId("preview-link")
			if err := expect.Locator(link).ToBeVisible(); err != nil {
				cand, _ := os.ReadFile(filepath.Join(s.Root, "apps", "svc", "candidate.json"))
				t.Fatalf("no preview link: %v\ncandidate.json: %s\nserver: %s", err, cand, s.out)
			}
			href, err := link.GetAttribute("href")
			must(t, err)
			if !strings.HasPrefix(href, "http://svc.localhost:") {
				t.Fatalf("the preview link is %s, want its own host name svc.localhost", href)
			}
			preview, err := page.Context().NewPage()
			must(t, err)
			_, err = preview.Goto(href)
			must(t, err)
			text, err := preview.Locator("body").TextContent()
			must(t, err)
			_, err = preview.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "preview-"+strconv.FormatBool(confined)+".png"))})
			must(t, err)
			got, cookie := report(text)
			if strings.Contains(cookie, "autoapp_") {
				t.Errorf("the preview was sent the console's cookies: %s", cookie)
			}
			if confined {
				for _, what := range probes {
					if !strings.HasPrefix(got[what], "refused") {
						t.Errorf("%s: %q, want refused\n%s", what, got[what], text)
					}
				}
				for _, f := range []string{filepath.Join(s.Root, "launcher", "pwned"), filepath.Join(s.Root, "apps", "other", "workspace", "pwned")} {
					if _, err := os.Stat(f); err == nil {
						t.Errorf("the confined preview wrote %s", f)
					}
				}
			} else {
				for _, what := range []string{"read the keys", "read another application", "write the launcher folder"} {
					if got[what] != "GOT IT" {
						t.Errorf("unconfined, %s: %q, want GOT IT: the probe cannot tell\n%s", what, got[what], text)
					}
				}
				// At the loopback address the browser sends the console's cookies.
				port := strings.TrimSuffix(strings.TrimPrefix(href, "http://svc.localhost:"), "/")
				_, err = preview.Goto("http://127.0.0.1:" + port + "/")
				must(t, err)
				text, err := preview.Locator("body").TextContent()
				must(t, err)
				if _, cookie := report(text); !strings.Contains(cookie, "autoapp_session") {
					t.Errorf("at 127.0.0.1 the preview got cookie %q, want the console's session: the cookie probe cannot tell", cookie)
				}
			}
			release()
			_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
			must(t, err)
			must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
		})
	}
}

// planOn makes the application appID from template, selects it, and opens
// and submits an intent with the tasks, written through the service as
// the engineer would.
func planOn(t *testing.T, s *server, appID, template, request string, tasks ...plan.Task) intent.Intent {
	t.Helper()
	ctx := context.Background()
	db := openIntents(t, s)
	createApp(t, s, appID, template)
	must(t, app.NewService(db, s.Root, time.Now).Select(ctx, appID))
	backlog := intent.NewService(db, s.Root, time.Now)
	in, err := backlog.OpenDraft(ctx, appID, request, intent.Analysis{Restated: []string{request}})
	must(t, err)
	for _, p := range tasks {
		_, err := backlog.AddTask(ctx, in.ID, p)
		must(t, err)
	}
	must(t, backlog.Submit(ctx, in.ID))
	return in
}

// createApp makes the application appID from a built-in template.
func createApp(t *testing.T, s *server, appID, template string) {
	t.Helper()
	_, err := app.NewService(openIntents(t, s), s.Root, time.Now).CreateFromTemplate(context.Background(), appID, appID, template)
	must(t, err)
}

func openIntents(t *testing.T, s *server) *migrations.DB {
	t.Helper()
	return migrationstest.IntentsIn(t, s.Root)
}

// shots is the folder the e2e run keeps its screenshots in: $AUTOAPP_SHOTS,
// or the test's temporary folder.
func shots(t *testing.T) string {
	if d := os.Getenv("AUTOAPP_SHOTS"); d != "" {
		must(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}
