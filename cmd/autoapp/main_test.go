package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"autoapp/intent/owner"
	"autoapp/intent/timetest"
	"autoapp/migrations"
)

// runCLI runs the program in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// oneSentence fails unless s is a single line without a Go panic or trace.
func oneSentence(t *testing.T, s string) {
	t.Helper()
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "\n") || strings.Contains(s, "panic") || strings.Contains(s, "goroutine") {
		t.Fatalf("want one sentence on stderr, got:\n%s", s)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "autoapp ") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
}

func TestAnUnknownSubcommandIsAUsageError(t *testing.T) {
	code, _, errOut := runCLI(t, "", "serev")
	if code != 2 || !strings.Contains(errOut, `"serev" is not a subcommand`) {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

func TestServeRefusesAnAddressOthersCanReach(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.10:8080", "[::]:0"} {
		t.Run(addr, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", "serve", "--root", t.TempDir(), "--addr", addr)
			if code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			oneSentence(t, errOut)
			if !strings.Contains(errOut, "--allow-remote") || !strings.Contains(errOut, "other machines could reach") {
				t.Fatalf("the refusal does not say why or what to do: %s", errOut)
			}
		})
	}
}

func TestServeRefusesARootItCannotWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "", "serve", "--root", file, "--addr", "127.0.0.1:0")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	oneSentence(t, errOut)
	if !strings.Contains(errOut, "cannot create the data folder") || !strings.Contains(errOut, "--root") {
		t.Fatalf("unclear: %s", errOut)
	}
}

func TestServeRefusesAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut := runCLI(t, "", "serve", "--root", t.TempDir(), "--addr", ln.Addr().String())
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	oneSentence(t, errOut)
	if !strings.Contains(errOut, "already in use") {
		t.Fatalf("unclear: %s", errOut)
	}
}

func TestServeRefusesADatabaseThatFailsToMigrate(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "launcher", "knowledge.sqlite")
	db, err := migrations.Open(path, migrations.Knowledge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write.Exec(`UPDATE schema_migrations SET dirty = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, _, errOut := runCLI(t, "", "serve", "--root", root, "--addr", "127.0.0.1:0")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	oneSentence(t, errOut)
	if !strings.Contains(errOut, "knowledge.sqlite") || !strings.Contains(errOut, "half-migrated") {
		t.Fatalf("unclear: %s", errOut)
	}
}

func TestOwnerSetCreatesThenResets(t *testing.T) {
	root := t.TempDir()
	code, _, errOut := runCLI(t, "a long password\n", "owner", "set", "--root", root)
	if code != 2 || !strings.Contains(errOut, "--name") {
		t.Fatalf("without an owner or a name: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "a long password\nanother password\n", "owner", "set", "--root", root, "--name", "Ada")
	if code != 2 || !strings.Contains(errOut, "The two passwords differ") {
		t.Fatalf("mismatch: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "short\nshort\n", "owner", "set", "--root", root, "--name", "Ada")
	if code != 2 || !strings.Contains(errOut, "at least 12 characters") {
		t.Fatalf("short: exit %d, %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "a long password\na long password\n", "owner", "set", "--root", root, "--name", "Ada")
	if code != 0 || !strings.Contains(out, `Created the owner "Ada"`) {
		t.Fatalf("create: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "a newer long password\na newer long password\n", "owner", "set", "--root", root)
	if code != 0 || !strings.Contains(out, `Set the password of "Ada"`) {
		t.Fatalf("reset keeps the name: exit %d, %q %q", code, out, errOut)
	}
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Owners.SignIn(context.Background(), "Ada", "a long password", owner.Client{}); err == nil {
		t.Fatal("the old password still signs in")
	}
	if _, err := st.Owners.SignIn(context.Background(), "Ada", "a newer long password", owner.Client{}); err != nil {
		t.Fatalf("the new password does not sign in: %v", err)
	}
}

// buildBinary compiles the real autoapp for the tests that signal a process.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "autoapp")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

var servingLine = regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)

// TestSIGTERMFinishesTheRequestInFlight starts the real binary, begins a
// request and leaves its body unfinished, sends SIGTERM, and checks that new
// connections are refused, the begun request still gets its answer, the
// process exits 0 and the stores were closed (SQLite removes the WAL file
// when the last connection closes).
func TestSIGTERMFinishesTheRequestInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var addr string
	for lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("the server did not say where it serves: %s", stderr.String())
	}
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := "name=Ada&password=whatever+it+is&again=whatever+it+is"
	head := "POST /setup HTTP/1.1\r\nHost: " + addr + "\r\nOrigin: http://" + addr +
		"\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	// The interim answer proves the server has begun this request.
	reader := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	interim, err := reader.ReadString('\n')
	if err != nil || !strings.Contains(interim, "100 Continue") {
		t.Fatalf("the server did not begin the request: %q %v", interim, err)
	}
	if _, err := reader.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 10*time.Second, "the server to refuse new connections after SIGTERM", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatalf("the request in flight was cut: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	resp.Body.Close()
	// No CSRF cookie was sent, so the answer is the refusal; what matters is that it came.
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the request in flight answered %d", resp.StatusCode)
	}
	conn.Close()

	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if out := <-rest; !strings.Contains(out, "Stopped.") {
		t.Fatalf("the server did not say it stopped: %q", out)
	}
	for _, name := range []string{"intents.sqlite-wal", "knowledge.sqlite-wal"} {
		if _, err := os.Stat(filepath.Join(root, "launcher", name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: the store was not closed (%v)", name, err)
		}
	}
}
