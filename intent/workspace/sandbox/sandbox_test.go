package sandbox_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"autoapp/intent/workspace/sandbox"
)

// machine is this machine's kernel; the tests need one that confines
// (Landlock, Linux 5.13 and later) and fail, never skip, without it.
func machine(t *testing.T) sandbox.Machine {
	t.Helper()
	m := sandbox.Probe()
	if !m.Confines() {
		t.Fatalf("this machine cannot confine, so the sandbox cannot be tested here: %s", m.Why)
	}
	return m
}

// root is a data folder with a secret of the owner's in launcher/, another
// application, and the application "app" whose workspace a process runs in.
type root struct {
	dir, secret, other, ws string
}

func newRoot(t *testing.T) root {
	t.Helper()
	r := root{dir: t.TempDir()}
	r.secret = filepath.Join(r.dir, "launcher", "providers.json")
	r.other = filepath.Join(r.dir, "apps", "other", "workspace", "main.go")
	r.ws = filepath.Join(r.dir, "apps", "app", "workspace")
	for _, f := range []string{r.secret, r.other, filepath.Join(r.ws, "main.go")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("key-5f2a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := sandbox.LayoutOf(r.ws).Make(); err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs script with sh in the workspace through start and returns what
// it printed.
func run(t *testing.T, r root, start func(*exec.Cmd) (waiter, error), script string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = r.ws
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	w, err := start(cmd)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := w.Wait(); err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out.String())
	}
	return out.String()
}

// waiter is a started process: a *sandbox.Process, or an *exec.Cmd
// started as it is.
type waiter interface{ Wait() error }

// confined starts a command confined to the policy of the workspace ws.
func confined(m sandbox.Machine, ws string) func(*exec.Cmd) (waiter, error) {
	return func(c *exec.Cmd) (waiter, error) { return sandbox.Start(c, m, sandbox.ForApp(ws)) }
}

// unconfined starts a command as it is.
func unconfined(c *exec.Cmd) (waiter, error) { return c, c.Start() }

// probeScript says, one line each, whether each thing a hostile build
// would try worked: "<what>: yes" or "<what>: no".
func probeScript(r root) string {
	try := func(what, cmd string) string {
		return "if " + cmd + " >/dev/null 2>&1; then echo \"" + what + ": yes\"; else echo \"" + what + ": no\"; fi\n"
	}
	ppid := strconv.Itoa(os.Getpid())
	home, _ := os.UserHomeDir()
	return try("read own workspace", "cat main.go") +
		try("write own workspace", "echo x > built.txt") +
		try("write own cache", "echo x > ../cache/c.txt") +
		try("read the toolchain", "cat /bin/sh") +
		try("read the owner's keys", "cat "+r.secret) +
		try("list the launcher folder", "ls "+filepath.Dir(r.secret)) +
		try("read another application", "cat "+r.other) +
		try("write another application", "echo x > "+filepath.Dir(r.other)+"/pwned") +
		try("write the launcher folder", "echo x > "+filepath.Dir(r.secret)+"/pwned") +
		try("list the host's home", "ls "+home) +
		try("write /tmp", "echo x > /tmp/autoapp-sandbox-pwned-"+ppid) +
		try("read /etc/shadow", "cat /etc/shadow") +
		try("read the server's environment", "cat /proc/"+ppid+"/environ") +
		try("signal the server", "kill -URG "+ppid)
}

func lines(out string) map[string]string {
	m := map[string]string{}
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		what, got, _ := strings.Cut(l, ": ")
		m[what] = got
	}
	return m
}

func TestAConfinedProcessReachesOnlyItsOwnApplication(t *testing.T) {
	m := machine(t)
	r := newRoot(t)
	got := lines(run(t, r, confined(m, r.ws), probeScript(r)))
	want := map[string]string{
		"read own workspace": "yes", "write own workspace": "yes", "write own cache": "yes", "read the toolchain": "yes",
		"read the owner's keys": "no", "list the launcher folder": "no", "read another application": "no",
		"write another application": "no", "write the launcher folder": "no", "list the host's home": "no",
		"read the server's environment": "no", "signal the server": "no",
	}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		want["read /etc/shadow"] = "no"
	}
	for what, w := range want {
		if got[what] != w {
			t.Errorf("%s: %q, want %q", what, got[what], w)
		}
	}
	// Its /tmp is its own.
	for _, f := range []string{filepath.Join(filepath.Dir(r.other), "pwned"), filepath.Join(filepath.Dir(r.secret), "pwned"),
		"/tmp/autoapp-sandbox-pwned-" + strconv.Itoa(os.Getpid())} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the confined process wrote %s", f)
		}
	}
	// The server itself is not confined by what it started.
	if _, err := os.ReadFile(r.secret); err != nil {
		t.Errorf("the server cannot read its own file after starting a confined process: %v", err)
	}
}

// TestTheProbeCanFail runs the same probe unconfined: everything the
// confined process was refused works, so the test above can fail.
func TestTheProbeCanFail(t *testing.T) {
	r := newRoot(t)
	got := lines(run(t, r, unconfined, probeScript(r)))
	for _, what := range []string{"read the owner's keys", "read another application", "write the launcher folder", "signal the server"} {
		if got[what] != "yes" {
			t.Errorf("unconfined, %s: %q, want yes", what, got[what])
		}
	}
}

func TestAConfinedRootProcessHasNoCapabilities(t *testing.T) {
	m := machine(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test checks what root keeps; run it as root (as CI does)")
	}
	r := newRoot(t)
	out := run(t, r, confined(m, r.ws), "grep -E '^Cap(Eff|Prm|Bnd|Amb|Inh)' /proc/self/status")
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		name, value, _ := strings.Cut(l, ":")
		if strings.Trim(strings.TrimSpace(value), "0") != "" {
			t.Errorf("%s = %s, want no capability", name, strings.TrimSpace(value))
		}
	}
}

// TestAPreviewListensOnItsOwnPortOnly runs this test binary, linked into
// the workspace, as a confined process that tries to listen on its own
// port and on another.
func TestAPreviewListensOnItsOwnPortOnly(t *testing.T) {
	m := machine(t)
	if m.ABI < 4 {
		t.Fatalf("Landlock ABI %d cannot restrict ports (4 can)", m.ABI)
	}
	r := newRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	linkOrCopy(t, self, filepath.Join(r.ws, "probe"))
	own, other := freePort(t), freePort(t)
	p := sandbox.ForApp(r.ws)
	p.Net, p.Port = sandbox.NetBindOne, own
	cmd := exec.Command("./probe", "-test.run=^TestBindHelper$")
	cmd.Dir = r.ws
	cmd.Env = []string{"AUTOAPP_BIND_PORTS=" + strconv.Itoa(own) + "," + strconv.Itoa(other)}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	proc, err := sandbox.Start(cmd, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Wait(); err != nil {
		t.Fatalf("the probe failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), strconv.Itoa(own)+" bound") || !strings.Contains(out.String(), strconv.Itoa(other)+" refused") {
		t.Errorf("binds: %q, want its own port bound and another refused", out.String())
	}
}

// TestBindHelper is the confined probe of the test above; it does nothing
// in an ordinary run. It binds plain TCP sockets, the ones Landlock's port
// rules cover (MPTCP sockets, which Go's own listeners use by default, are
// outside them; the README says so).
func TestBindHelper(t *testing.T) {
	ports := os.Getenv("AUTOAPP_BIND_PORTS")
	if ports == "" {
		return
	}
	for p := range strings.SplitSeq(ports, ",") {
		port, _ := strconv.Atoi(p)
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			fmt.Println(p, "refused")
		} else {
			fmt.Println(p, "bound")
		}
		unix.Close(fd)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestTheGuardRefusesWithoutASandboxUntilTheOwnerSaysSo(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "launcher"), 0o700); err != nil {
		t.Fatal(err)
	}
	none := sandbox.Machine{Why: "this kernel has no Landlock (it needs Linux 5.13 or later)"}
	g := sandbox.NewGuard(dir, none)
	cmd := exec.Command("/bin/true")
	_, err := g.Start(cmd, sandbox.Policy{})
	if err == nil || !strings.Contains(err.Error(), "turn on Run unconfined in Settings") {
		t.Fatalf("Start = %v, want a refusal that says what to do", err)
	}
	if g.Ready() == nil || !g.State().Refused() {
		t.Fatalf("Ready = nil or State %+v not refused on a machine without a sandbox", g.State())
	}
	if err := g.SetUnconfined(true); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(); err != nil {
		t.Fatalf("Ready after the owner's choice = %v", err)
	}
	proc, err := g.Start(cmd, sandbox.Policy{})
	if err != nil {
		t.Fatalf("Start unconfined = %v", err)
	}
	if err := proc.Wait(); err != nil {
		t.Fatal(err)
	}
	if st := g.State(); !st.Unconfined || !strings.Contains(st.Sentence(), "unconfined") {
		t.Errorf("State = %+v, %q; want unconfined said", st, st.Sentence())
	}
}

func TestADamagedSettingKeepsTheSandboxOn(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "launcher"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "launcher", sandbox.SettingFile), []byte(`{"unconfined": tru`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := sandbox.NewGuard(dir, sandbox.Machine{ABI: 7, Bwrap: "/usr/bin/bwrap"}).State()
	if st.Unconfined || !st.Confined() || !strings.Contains(st.Problem, "could not be read") {
		t.Errorf("State = %+v, want confined with the problem said", st)
	}
}

// The same policy confines alike every time (its ruleset is made once),
// and a workspace removed and made again where it was is reached again: a
// ruleset holds folders as they were when it was made, so the new folder
// gets one of its own rather than one that names the old.
func TestAPolicyConfinesAlikeAgainAndFollowsAFolderMadeAgain(t *testing.T) {
	m := machine(t)
	r := newRoot(t)
	start := confined(m, r.ws)
	for i := range 3 {
		got := lines(run(t, r, start, probeScript(r)))
		if got["write own workspace"] != "yes" || got["read the owner's keys"] != "no" || got["write another application"] != "no" {
			t.Fatalf("start %d under the same policy: %v", i+1, got)
		}
	}
	if err := os.RemoveAll(r.ws); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "main.go"), []byte("package main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := lines(run(t, r, start, probeScript(r)))
	if got["read own workspace"] != "yes" || got["write own workspace"] != "yes" || got["read the owner's keys"] != "no" {
		t.Fatalf("in the workspace made again: %v", got)
	}
}
