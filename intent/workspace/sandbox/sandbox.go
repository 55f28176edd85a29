// Package sandbox confines the processes the host starts from an
// application's workspace: every build stage, every preview, and git over
// the workspace. The code the engineer writes is as untrusted as its tool
// calls, so such a process reads the toolchain and its own application
// folder, writes its workspace and caches of its own, and reaches nothing
// of the owner's: not <root>/launcher (keys, stores, sessions), not another
// application, not the host's home, not the owner's sockets, shared memory,
// keys or processes.
//
// Two mechanisms hold it, one inside the other. bubblewrap (Debian's
// bubblewrap, the sandbox Flatpak uses) puts the process in namespaces of
// its own: a user namespace without privileges, a mount namespace that
// holds only the toolchain, the public part of /etc and the application's
// folder (everything but the writable set bound read-only, a private
// /tmp, no host socket), and its own PID, IPC, UTS and network namespaces
// (a preview has only its own loopback; a build stage the network only
// when its manifest stage asks for it; git none). The PID namespace ends
// with the process: whatever it started, daemons included, is killed when
// it ends, when it is stopped, and when the server ends. bubblewrap was
// chosen over clone flags because setting up mounts needs code between
// clone and exec, which Go's os/exec cannot run, and because it works as
// root and as an ordinary user, under Ubuntu's restriction of
// unprivileged user namespaces too.
//
// Inside, before the command runs, this same program (bound read-only
// into the sandbox, see inside.go) confines it further with Landlock, the
// kernel's sandbox for unprivileged processes, gives it a session keyring
// of its own and resource limits, and watches how many processes and how
// much memory it uses.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Machine is what this machine offers to confine a process.
type Machine struct {
	// ABI is the Landlock ABI version; 0 when there is none.
	ABI int
	// Bwrap is the path of bubblewrap; "" when it is missing or cannot
	// make namespaces here.
	Bwrap string
	// Why says, when the machine cannot confine, why.
	Why string
}

// Confines says the machine can confine a process: it has Landlock and a
// bubblewrap that makes namespaces.
func (m Machine) Confines() bool { return m.ABI > 0 && m.Bwrap != "" }

// String names the mechanisms for the pages: "bubblewrap's namespaces and
// Landlock ABI 7".
func (m Machine) String() string {
	if !m.Confines() {
		return "no sandbox: " + m.Why
	}
	return fmt.Sprintf("bubblewrap and Landlock ABI %d", m.ABI)
}

var probed = sync.OnceValue(probe)

// Probe asks the kernel once what it offers, and tries bubblewrap once;
// later calls answer the same.
func Probe() Machine { return probed() }

func probe() Machine {
	m := Machine{}
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil && v > 0:
		m.ABI = v
	case errors.Is(err, unix.ENOSYS):
		m.Why = "this kernel has no Landlock (it needs Linux 5.13 or later)"
	case errors.Is(err, unix.EOPNOTSUPP):
		m.Why = "Landlock is built into this kernel but turned off at boot (add landlock to the lsm= boot parameter)"
	case err != nil:
		m.Why = "the kernel did not answer which Landlock it has: " + err.Error()
	default:
		m.Why = "the kernel reports no usable Landlock"
	}
	if m.ABI == 0 {
		return m
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		m.Why = "bubblewrap is not installed (install Debian's or Ubuntu's bubblewrap package)"
		return m
	}
	// Try the namespaces a confined process gets.
	out, err := exec.Command(bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
		"--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--", "/bin/true").CombinedOutput()
	if err != nil {
		m.Why = "bubblewrap cannot make namespaces on this machine (" + strings.TrimSpace(lastLine(string(out), err)) + ")"
		return m
	}
	m.Bwrap = bwrap
	return m
}

func lastLine(out string, err error) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return err.Error()
	}
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return out
}

// Net is how much of the network a confined process may use.
type Net int

const (
	// NetOpen shares the host's network: a build stage whose manifest
	// asks for it may fetch its modules.
	NetOpen Net = iota
	// NetBindOne gives the process a network of its own with only its
	// loopback, on which it may listen on Policy.Port only: a preview.
	// The host reaches it through Process.Dial.
	NetBindOne
	// NetNone gives the process a network of its own with only its
	// loopback and refuses every TCP bind and connect: git over the
	// workspace, a build stage that does not ask for the network.
	NetNone
)

// Policy is what one confined process may reach besides the system's
// toolchain, which every policy may read.
type Policy struct {
	// Read are folders it may read and run programs from.
	Read []string
	// Write are folders it may read, write and run programs in.
	Write []string
	// Programs are files of the host's it may read and run, each where it
	// is on the host: the Go cache program a build's go starts.
	Programs []string
	Net      Net
	// Port is the one TCP port NetBindOne lets it listen on.
	Port int
	// Limits bound what the process and everything it starts may use; nil
	// sets none (git over the workspace, which the host runs itself).
	Limits *Limits
}

// ForApp is the policy of a build stage or a preview of the workspace ws,
// an application's workspace in its application folder (the folder ws is
// in): it reads that folder, and writes the workspace, its HOME, its
// temporary files and its caches, each a folder of the application's own.
// It has no network of its own until the caller says so, and the limits
// of a build stage.
func ForApp(ws string) Policy {
	l := LayoutOf(ws)
	lim := BuildLimits
	return Policy{Read: []string{l.App}, Write: []string{l.Workspace, l.Home, l.Tmp, l.Cache}, Net: NetNone, Limits: &lim}
}

// Layout is where an application's confined processes keep their things.
type Layout struct {
	App, Workspace, Home, Tmp, Cache string
}

// LayoutOf is the layout around the workspace ws: <app>/.home, <app>/tmp
// and <app>/cache beside it, in the application folder <app>.
func LayoutOf(ws string) Layout {
	ws = filepath.Clean(ws)
	app := filepath.Dir(ws)
	return Layout{App: app, Workspace: ws, Home: filepath.Join(app, ".home"),
		Tmp: filepath.Join(app, "tmp"), Cache: filepath.Join(app, "cache")}
}

// Make creates the layout's folders that a process writes, readable by
// this user only.
func (l Layout) Make() error {
	for _, d := range []string{l.Home, l.Tmp, l.Cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// within says p is dir or inside it.
func within(p, dir string) bool {
	if dir == "" || dir == "/" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
