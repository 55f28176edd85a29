package owner_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"autoapp/views"
)

var servingLine = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)

// rss is the resident set of process pid, from /proc/<pid>/status, in KiB.
func rss(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kib
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// TestASignInGivesItsHashMemoryBack runs the real server and reads its
// resident set after the start and after a sign-in and 1,000 pages: the
// 19 MiB argon2id takes for the hash is handed back, not kept.
func TestASignInGivesItsHashMemoryBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "autoapp")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/autoapp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "root")
	const name, password = "Owner", "correct horse battery staple"
	set := exec.Command(binary, "owner", "set", "--root", root, "--name", name)
	set.Stdin = strings.NewReader(password + "\n" + password + "\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("owner set: %v\n%s", err, out)
	}

	serve := exec.Command(binary, "serve", "--root", root, "--addr", "127.0.0.1:0")
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = io.Discard
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	})
	base := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	var u string
	select {
	case u = <-base:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it serves")
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := client.Get(u + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	get("/healthz")
	started := rss(t, serve.Process.Pid)

	// The sign-in form sets the CSRF cookie the sign-in sends back.
	get("/signin")
	target, _ := url.Parse(u)
	var token string
	for _, c := range jar.Cookies(target) {
		if len(c.Value) == 43 {
			token = c.Value
		}
	}
	form := url.Values{"name": {name}, "password": {password}, views.CSRFField: {token}}
	req, _ := http.NewRequest(http.MethodPost, u+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %s", resp.Status)
	}
	for range 1000 {
		if resp := get("/backlog"); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /backlog signed in: %s", resp.Status)
		}
	}
	after := rss(t, serve.Process.Pid)
	t.Logf("VmRSS %d KiB after the start, %d KiB after a sign-in and 1,000 pages", started, after)
	if grew := after - started; grew > 10*1024 {
		t.Fatalf("the resident set grew by %d KiB, more than 10 MiB", grew)
	}
}
