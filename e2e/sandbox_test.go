package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"golang.org/x/sys/unix"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/acceptance"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build/gocache"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/migrations"
)

// hostileService is a Go service, written as a hostile engineer would, whose
// home page tries to reach what belongs to the owner and reports, a line
// each, what it got: "<what>: refused (<error>)" or "<what>: GOT IT". It
// writes every Cookie header it is sent to cookies-seen.txt in its
// workspace, sends the browser wherever /to?u= says, and leaves a daemon
// of its own session running (sleep <marker>). It uses only the standard
// library's net, os and syscall, so a build with an empty cache stays
// short.
func hostileService(root, home, hostCache, sharedGo string, o ownerHas) string {
	return `package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

const root = ` + strconv.Quote(root) + `

func main() {
	exec.Command("setsid", "sleep", ` + strconv.Quote(o.marker) + `).Start()
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
			if f, err := os.OpenFile("cookies-seen.txt", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, cookie)
				f.Close()
			}
		}
	}
	status, kind, body, extra := "404 Not Found", "text/plain", "no such page", ""
	f := strings.Fields(line)
	target := ""
	if len(f) > 1 {
		target = f[1]
	}
	switch {
	case target == "/health":
		status, kind, body = "200 OK", "application/json", ` + "`" + `{"ok": true}` + "`" + `
	case target == "/":
		status, body = "200 OK", report(cookie)
	case target == "/plant":
		// What the host must not read through: links to the owner's keys,
		// the environment and the shadow file, and a named pipe.
		os.Rename("autoapp.json", "autoapp.json.kept")
		os.Symlink("../../../launcher/providers.json", "autoapp.json")
		os.Symlink("/proc/self/environ", "environ.txt")
		os.Symlink("/etc/shadow", "shadow.txt")
		syscall.Mkfifo("wait.fifo", 0o644)
		// And an index whose one entry is named /rt-crash.
		os.Rename(".git/index", ".git/index.kept")
		os.WriteFile(".git/index", craftedIndex("/rt-crash"), 0o644)
		status, body = "200 OK", "planted"
	case target == "/fork":
		for i := 0; i < 500; i++ {
			exec.Command("sleep", "60").Start()
		}
		status, body = "200 OK", "forked"
	case target == "/memory":
		held := make([]byte, 3<<30)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		status, body = "200 OK", "held"
	case target == "/unplant":
		os.Remove("autoapp.json")
		os.Rename("autoapp.json.kept", "autoapp.json")
		os.Rename(".git/index.kept", ".git/index")
		status, body = "200 OK", "unplanted"
	case strings.HasPrefix(target, "/to?u="):
		u, _ := url.QueryUnescape(strings.TrimPrefix(target, "/to?u="))
		status, body, extra = "302 Found", "away", "Location: "+u+"\r\n"
	}
	fmt.Fprintf(c, "HTTP/1.1 %s\r\n%sContent-Type: %s; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, extra, kind, len(body), body)
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
	read("read the server's environment", "/proc/` + strconv.Itoa(o.serverPid) + `/environ")
	_, err := os.ReadDir(` + strconv.Quote(home) + `)
	say("list the host's home", err)
	write("write the launcher folder", root+"/launcher/pwned")
	write("write another application", root+"/apps/other/workspace/pwned")
	write("write the host's Go cache", ` + strconv.Quote(filepath.Join(hostCache, "autoapp-pwned")) + `)
	write("write the shared Go standard library", ` + strconv.Quote(filepath.Join(sharedGo, "autoapp-pwned")) + `)
	say("signal the server", syscall.Kill(` + strconv.Itoa(o.serverPid) + `, syscall.SIGURG))
	_, err = os.Stat(root + "/launcher/providers.json")
	say("look at the owner's files", err)
	say("connect the owner's socket", func() error {
		c, err := net.DialTimeout("unix", ` + strconv.Quote(o.sock) + `, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}())
	say("reach the console over TCP", dialTCP(syscall.IPPROTO_TCP, ` + strconv.Itoa(o.consolePort) + `))
	say("reach the console over MPTCP", dialTCP(262, ` + strconv.Itoa(o.consolePort) + `))
	if c, err := net.Dial("udp", "127.0.0.1:` + strconv.Itoa(o.udpPort) + `"); err == nil {
		c.Write([]byte("from the preview"))
		c.Close()
	}
	say("change a file outside", os.Chtimes("/usr/bin/env", time.Now(), time.Now()))
	say("chmod a device", os.Chmod("/dev/null", 0o666))
	say("read the owner's key", func() error {
		buf := make([]byte, 64)
		_, _, errno := syscall.Syscall6(syscall.SYS_KEYCTL, 11, ` + strconv.Itoa(o.keyID) + `, uintptr(unsafe.Pointer(&buf[0])), 64, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	}())
	say("read the owner's shared memory", func() error {
		if _, _, errno := syscall.Syscall(syscall.SYS_SHMGET, ` + strconv.Itoa(o.shmKey) + `, 0, 0); errno != 0 {
			return errno
		}
		return nil
	}())
	fmt.Fprintf(&b, "port: %s\n", os.Getenv("PORT"))
	fmt.Fprintf(&b, "cookie: %s\n", cookie)
	return b.String()
}

// craftedIndex is a git index (version 2) of one entry named name.
func craftedIndex(name string) []byte {
	var b []byte
	u32 := func(v uint32) { b = binary.BigEndian.AppendUint32(b, v) }
	b = append(b, "DIRC"...)
	u32(2)
	u32(1)
	for range 6 {
		u32(0) // ctime, mtime, dev, ino
	}
	u32(0o100644)
	u32(0)
	u32(0)
	u32(0)
	b = append(b, make([]byte, 20)...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	b = append(b, name...)
	for n := 62 + len(name); ; n++ {
		b = append(b, 0)
		if (n+1)%8 == 0 {
			break
		}
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

func dialTCP(proto, port int) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, proto)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}
`
}

// ownerHas is what the owner has on the machine that Landlock alone does
// not cover: a socket in /tmp, a key in the session keyring, System V
// shared memory, the console's port, and a UDP listener; and the name of
// the daemon the hostile service leaves.
type ownerHas struct {
	sock                 string
	keyID, shmKey        int
	consolePort, udpPort int
	udp                  *net.UDPConn
	marker               string
	serverPid            int
}

// ownerKey puts a key in this process's session keyring, which the server
// it starts next inherits, as a server started from the owner's shell does.
func ownerKey(t *testing.T) int {
	t.Helper()
	id, err := unix.AddKey("user", "autoapp-e2e-owner-key", []byte("owner-key-secret"), unix.KEY_SPEC_SESSION_KEYRING)
	must(t, err)
	t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0) })
	return id
}

func ownerThings(t *testing.T, s *server, keyID int) ownerHas {
	t.Helper()
	o := ownerHas{sock: fmt.Sprintf("/tmp/autoapp-e2e-owner-%d.sock", os.Getpid()), marker: fmt.Sprintf("7777.%d", time.Now().UnixNano()%1e6),
		keyID: keyID, serverPid: s.cmd.Process.Pid}
	os.Remove(o.sock)
	ul, err := net.Listen("unix", o.sock)
	must(t, err)
	t.Cleanup(func() { ul.Close(); os.Remove(o.sock) })
	o.shmKey = 0x5e000000 + os.Getpid()%0xffff
	shm, err := unix.SysvShmGet(o.shmKey, 4096, unix.IPC_CREAT|0o600)
	must(t, err)
	t.Cleanup(func() { unix.SysvShmCtl(shm, unix.IPC_RMID, nil) })
	u, err := url.Parse(s.URL)
	must(t, err)
	o.consolePort, err = strconv.Atoi(u.Port())
	must(t, err)
	o.udp, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	t.Cleanup(func() { o.udp.Close() })
	o.udpPort = o.udp.LocalAddr().(*net.UDPAddr).Port
	return o
}

// lastToolResult is the last tool message of a chat completion request.
func lastToolResult(t *testing.T, body string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal([]byte(body), &req))
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// ask sends GET <link><path> to the preview, as the browser would.
func ask(t *testing.T, link, path string) {
	t.Helper()
	c := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: 10 * time.Second}
	resp, err := c.Get(link + path)
	if err != nil {
		t.Errorf("GET %s%s: %v", link, path, err)
		return
	}
	resp.Body.Close()
}

// daemonAlive says the hostile service's daemon runs.
func (o ownerHas) daemonAlive() bool {
	out, _ := exec.Command("pgrep", "-f", "^sleep "+o.marker).Output()
	return strings.TrimSpace(string(out)) != ""
}

// udpGot says the owner's UDP listener was sent anything.
func (o ownerHas) udpGot() bool {
	_ = o.udp.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 64)
	n, _, _ := o.udp.ReadFromUDP(buf)
	return n > 0
}

// eventually waits up to 30s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 30s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probes are the lines of hostileService's report that must each say refused.
var probes = []string{"read the keys", "read the backlog store", "read the knowledge store", "read another application",
	"read /etc/shadow", "read the server's environment", "list the host's home", "write the launcher folder",
	"write another application", "write the host's Go cache", "write the shared Go standard library", "signal the server", "look at the owner's files",
	"connect the owner's socket", "reach the console over TCP", "reach the console over MPTCP", "change a file outside",
	"chmod a device", "read the owner's key", "read the owner's shared memory"}

// report reads hostileService's lines into what → outcome, and the cookie.
func report(text string) (map[string]string, string) {
	got := map[string]string{}
	cookie := ""
	for l := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		what, outcome, _ := strings.Cut(l, ": ")
		if what == "port" {
			continue
		}
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
	sharedGo, err := gocache.DefaultDir()
	must(t, err)
	t.Cleanup(func() { os.Remove(filepath.Join(sharedGo, "autoapp-pwned")) })

	for _, confined := range []bool{true, false} {
		name := "confined"
		if !confined {
			name = "turned off by the owner"
		}
		t.Run(name, func(t *testing.T) {
			key := ownerKey(t)
			s, model, page := signedInWithModel(t, "builder")
			o := ownerThings(t, s, key)
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
			cycled, readsAnswered := make(chan struct{}), make(chan struct{})
			previewLink, results, edited := "", "", ""
			runID := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-add-a-home-page-a1"
			model.On(scripted.RunID(runID),
				scripted.Reply{ToolCalls: []scripted.Call{
					overwrite("main.go", hostileService(s.Root, home, hostCache, sharedGo, o)),
					change("acceptance/0001-add-a-home-page-c1.json", `{"title": "The service stays healthy", "steps": [{"method": "GET", "path": "/health", "expect": {"status": 200}}]}`),
				}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Before: func() { close(cycled); visited() }, ToolCalls: []scripted.Call{
					{Name: "spec_read", Args: `{}`},
					{Name: "source_read", Args: `{"path": "environ.txt"}`},
					{Name: "source_read", Args: `{"path": "shadow.txt"}`},
					{Name: "source_read", Args: `{"path": "wait.fifo"}`},
				}},
				scripted.Reply{Before: func() {
					reqs := model.Requests()
					results = string(reqs[len(reqs)-1].Body)
				}, ToolCalls: []scripted.Call{change("after.txt", "written after the index was crafted\n")}},
				scripted.Reply{Before: func() {
					reqs := model.Requests()
					edited = string(reqs[len(reqs)-1].Body)
					close(readsAnswered)
					ask(t, previewLink, "unplant")
				}, Text: "The home page is there."})
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
			previewLink = href
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
			udp := o.udpGot()
			innerPort := ""
			for l := range strings.SplitSeq(text, "\n") {
				if p, ok := strings.CutPrefix(l, "port: "); ok {
					innerPort = p
				}
			}
			port := strings.TrimSuffix(strings.TrimPrefix(href, "http://svc.localhost:"), "/")
			// The preview sends the browser, signed in to the console, to
			// every loopback form of its port and to the port it really
			// listens on.
			for _, to := range []string{"http://127.0.0.1:" + port + "/", "http://localhost:" + port + "/", "http://[::1]:" + port + "/",
				"http://127.0.0.1:" + innerPort + "/"} {
				_, _ = preview.Goto(href + "to?u=" + url.QueryEscape(to))
			}
			seen, _ := os.ReadFile(filepath.Join(s.Root, "apps", "svc", "workspace", "cookies-seen.txt"))
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
				if udp {
					t.Errorf("the confined preview reached the owner's UDP listener")
				}
				if strings.Contains(string(seen), "autoapp_") {
					t.Errorf("after its redirects the preview's process was sent the console's cookies: %s", seen)
				}
			} else {
				for _, what := range []string{"read the keys", "read another application", "write the launcher folder",
					"connect the owner's socket", "read the owner's key", "reach the console over TCP"} {
					if got[what] != "GOT IT" {
						t.Errorf("unconfined, %s: %q, want GOT IT: the probe cannot tell\n%s", what, got[what], text)
					}
				}
				if !udp {
					t.Errorf("unconfined, the preview did not reach the owner's UDP listener: the probe cannot tell")
				}
				// At the port it really listens on, the browser sends the
				// console's cookies.
				if !strings.Contains(string(seen), "autoapp_session") {
					t.Errorf("unconfined, the preview's process saw cookies %q, want the console's session: the cookie probe cannot tell", seen)
				}
			}
			// The preview plants links and a pipe; the engineer's next reads
			// answer at once and hand the model nothing they lead to.
			ask(t, href, "plant")
			release()
			select {
			case <-readsAnswered:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the engineer's reads of what the preview planted did not answer within 2 minutes: %s", s.out)
			}
			for _, secret := range []string{e2eKey, "PATH=", "root:"} {
				if strings.Contains(results, secret) {
					t.Errorf("the engineer's tool results hold %q:\n%s", secret, results)
				}
			}
			// spec.read hands over the manifest committed at HEAD, not what the
			// link leads to; a read through a link out or of a pipe is refused.
			for _, said := range []string{`\"name\": \"Go service\"`, "points outside the workspace", "is a named pipe, not a regular file"} {
				if !strings.Contains(results, said) {
					t.Errorf("the engineer's tool results do not say %q:\n%s", said, results)
				}
			}
			// The edit after the index was crafted is refused with a sentence,
			// and the server lives on.
			if got := lastToolResult(t, edited); !strings.Contains(got, `"ok":false`) || !strings.Contains(got, "index") {
				t.Errorf("the edit after a crafted index: %s, want a refusal that names the index", got)
			}
			_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
			must(t, err)
			must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
			if confined {
				_, err = page.Goto(s.URL + "/apps/svc")
				must(t, err)
				// Its daemon ends when the owner stops the preview.
				eventually(t, "the preview's daemon to start", o.daemonAlive)
				must(t, page.GetByTestId("preview-stop").Click())
				if err := expect.Locator(page.GetByTestId("preview-stopped")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(20000)}); err != nil {
					_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "preview-stop-failed.png"))})
					t.Fatalf("after Stop preview: %v\n%s", err, s.out)
				}
				eventually(t, "the preview's daemon to end with Stop", func() bool { return !o.daemonAlive() })
				// Past a limit the preview is stopped, and its page says which.
				for _, c := range []struct{ path, sentence string }{
					{"fork", "The preview started more than 256 processes and was stopped."},
					{"memory", "The preview used more than 2 GiB of memory and was stopped."},
				} {
					must(t, page.GetByTestId("preview-start").Click())
					must(t, expect.Locator(page.GetByTestId("preview-link")).ToBeVisible())
					link, err := page.GetByTestId("preview-link").GetAttribute("href")
					must(t, err)
					// The answer may never come: the preview is stopped while asked.
					path := c.path
					go func() {
						client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: 30 * time.Second}
						if resp, err := client.Get(link + path); err == nil {
							resp.Body.Close()
						}
					}()
					eventually(t, "the preview past its "+c.path+" limit to be stopped", func() bool {
						_, err := page.Goto(s.URL + "/apps/svc")
						must(t, err)
						n, _ := page.GetByTestId("preview-running").Count()
						return n == 0
					})
					must(t, expect.Locator(page.GetByTestId("preview-note")).ToHaveText(c.sentence))
					_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "apps-preview-"+c.path+"-limit.png"))})
					must(t, err)
				}
				// Its daemon ends with the server too, however the server ends.
				must(t, page.GetByTestId("preview-start").Click())
				eventually(t, "the preview's daemon to start again", o.daemonAlive)
				s.kill(t)
				eventually(t, "the preview's daemon to end with the server", func() bool { return !o.daemonAlive() })
			}
		})
	}
}

// planOn makes the application appID from template, selects it, and opens
// and submits an intent with the tasks, written through the service as
// the engineer would.
func planOn(t *testing.T, s *server, appID, template, request string, tasks ...plan.Task) intent.Intent {
	t.Helper()
	ctx := context.Background()
	l := boot(t, s.Root)
	createApp(t, s, appID, template)
	must(t, l.Apps.Select(ctx, appID))
	backlog := l.Backlog
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
	_, err := boot(t, s.Root).Apps.CreateFromTemplate(context.Background(), appID, appID, template)
	must(t, err)
}

// boot is the launcher's own services over root, as the binary builds
// them, for a test that writes what the engineer or the owner would.
func boot(t *testing.T, root string) *launcher.Launcher {
	t.Helper()
	l, err := launcher.New(root, time.Now, nil, launcher.Options{Quiet: true})
	must(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// openIntents is the running server's intents store, for a test that
// writes to it directly (a trigger standing for a full disk).
func openIntents(t *testing.T, s *server) *migrations.DB {
	t.Helper()
	return boot(t, s.Root).Intents
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
