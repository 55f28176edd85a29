// Package sandbox confines the processes the host starts from an
// application's workspace: every build stage, every preview, and git over
// the workspace. The code the engineer writes is as untrusted as its tool
// calls, so such a process reads the toolchain and its own application
// folder, writes its workspace and caches of its own, and reaches nothing
// of the owner's: not <root>/launcher (keys, stores, sessions), not another
// application, not the host's home.
//
// The mechanism is Landlock, the kernel's sandbox for unprivileged
// processes (Linux 5.13 and later), through go-landlock. The ruleset is
// enforced on one locked OS thread just before it forks the process, so
// the child and everything it starts are confined while the server is not;
// the thread is never unlocked, and the Go runtime ends it with its
// goroutine. When the server runs as root, that thread also drops every
// capability from its bounding set, so the process runs as a root without
// privileges.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Machine is what this machine's kernel offers to confine a process.
type Machine struct {
	// ABI is the Landlock ABI version; 0 when there is none.
	ABI int
	// Why says, when ABI is 0, why this machine cannot confine.
	Why string
}

// Confines says the machine can confine a process.
func (m Machine) Confines() bool { return m.ABI > 0 }

// String names the mechanism for the pages: "Landlock ABI 7".
func (m Machine) String() string {
	if !m.Confines() {
		return "no sandbox: " + m.Why
	}
	return fmt.Sprintf("Landlock ABI %d", m.ABI)
}

// The main goroutine keeps the main thread to itself. A goroutine that
// exits locked to the main thread does not end it: the runtime parks that
// thread for good, and as the process's leader it would carry the
// sandbox's domain, letting a confined process signal the server and read
// its /proc files. Pinning the main goroutine there (it runs every init)
// keeps any confining goroutine off it. Nothing is opened here.
func init() { runtime.LockOSThread() }

var probed = sync.OnceValue(probe)

// Probe asks the kernel once what it offers; later calls answer the same.
func Probe() Machine { return probed() }

func probe() Machine {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil && v > 0:
		return Machine{ABI: v}
	case errors.Is(err, unix.ENOSYS):
		return Machine{Why: "this kernel has no Landlock (it needs Linux 5.13 or later)"}
	case errors.Is(err, unix.EOPNOTSUPP):
		return Machine{Why: "Landlock is built into this kernel but turned off at boot (add landlock to the lsm= boot parameter)"}
	case err != nil:
		return Machine{Why: "the kernel did not answer which Landlock it has: " + err.Error()}
	}
	return Machine{Why: "the kernel reports no usable Landlock"}
}

// Net is how much of the network a confined process may use, where the
// kernel can restrict it (Landlock ABI 4 and later).
type Net int

const (
	// NetOpen leaves the network alone: a build may fetch its modules.
	NetOpen Net = iota
	// NetBindOne lets the process listen on Policy.Port only; it may
	// still connect out, as an application calling an API does.
	NetBindOne
	// NetNone refuses every TCP bind and connect: git over the
	// workspace needs no network.
	NetNone
)

// Policy is what one confined process may reach besides the system's
// toolchain, which every policy may read.
type Policy struct {
	// Read are folders it may read and run programs from.
	Read []string
	// Write are folders it may read, write and run programs in.
	Write []string
	Net   Net
	// Port is the one TCP port NetBindOne lets it listen on.
	Port int
}

// ForApp is the policy of a build stage or a preview of the workspace ws,
// an application's workspace in its application folder (the folder ws is
// in): it reads that folder, and writes the workspace, its HOME, its
// temporary files and its caches, each a folder of the application's own.
func ForApp(ws string) Policy {
	l := LayoutOf(ws)
	return Policy{Read: []string{l.App}, Write: []string{l.Workspace, l.Home, l.Tmp, l.Cache}}
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

// Start starts cmd confined to p on a machine that confines. It never
// starts cmd unconfined: on a machine without Landlock it fails.
func Start(cmd *exec.Cmd, m Machine, p Policy) error {
	if !m.Confines() {
		return fmt.Errorf("sandbox: %s", m.Why)
	}
	fd, flags, err := rulesetOf(p)
	if err != nil {
		return err
	}
	if fd.close {
		defer unix.Close(fd.n)
	}

	started := make(chan error, 1)
	go func() {
		// Never unlocked: the runtime ends this thread with the
		// goroutine, so no other goroutine ever runs on it confined.
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// See init: never confine the process's leader.
			started <- errors.New("sandbox: the main thread cannot be confined")
			return
		}
		if err := dropCapabilities(); err != nil {
			started <- fmt.Errorf("sandbox: dropping capabilities: %w", err)
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- fmt.Errorf("sandbox: no_new_privs: %w", err)
			return
		}
		if err := ll.LandlockRestrictSelf(fd.n, flags); err != nil {
			started <- fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
			return
		}
		started <- cmd.Start()
	}()
	return <-started
}

// rulesetFD is a Landlock ruleset's descriptor, and whether the caller
// closes it after use (one the cache keeps stays open).
type rulesetFD struct {
	n     int
	close bool
}

// rulesets keeps the rulesets made for the policies met so far, keyed by
// the policy and the identity of each folder it names: a ruleset holds
// those folders as they were opened, so a folder removed and made again
// is another key. Making one opens every system folder and public file of
// /etc, which was most of what starting a git process cost here. A ruleset
// may confine any number of threads; a cached one is never closed.
var rulesets = struct {
	sync.Mutex
	m map[string]cachedRuleset
}{m: map[string]cachedRuleset{}}

type cachedRuleset struct {
	fd    int
	flags uint32
}

// rulesetsKept bounds the cache: an application's git, builds and
// previews each have a policy of their own.
const rulesetsKept = 64

func rulesetOf(p Policy) (rulesetFD, uint32, error) {
	key, cacheable := policyKey(p)
	if cacheable {
		rulesets.Lock()
		defer rulesets.Unlock()
		if c, ok := rulesets.m[key]; ok {
			return rulesetFD{n: c.fd}, c.flags, nil
		}
	}
	fd, flags, err := newRuleset(p)
	if err != nil {
		return rulesetFD{}, 0, err
	}
	if cacheable && len(rulesets.m) < rulesetsKept {
		rulesets.m[key] = cachedRuleset{fd: fd, flags: flags}
		return rulesetFD{n: fd}, flags, nil
	}
	return rulesetFD{n: fd, close: true}, flags, nil
}

// policyKey names a policy and the folders it names as they are now; a
// folder that cannot be looked at makes it one not to keep.
func policyKey(p Policy) (string, bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "net=%d port=%d", p.Net, p.Port)
	for _, group := range [][]string{p.Read, p.Write} {
		b.WriteString(" |")
		for _, path := range group {
			var st unix.Stat_t
			if err := unix.Stat(path, &st); err != nil {
				return "", false
			}
			fmt.Fprintf(&b, " %q@%d:%d", path, st.Dev, st.Ino)
		}
	}
	return b.String(), true
}

// newRuleset makes the ruleset of p.
func newRuleset(p Policy) (int, uint32, error) {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V9.HandledAccessFS,
		Scoped:          landlock.V6.Scoped,
	}
	switch p.Net {
	case NetBindOne:
		cfg.HandledAccessNet = ll.AccessNetBindTCP
	case NetNone:
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	rules := append(systemRules(), landlock.RODirs(p.Read...), landlock.RWDirs(p.Write...).WithRefer())
	if p.Net == NetBindOne {
		if p.Port <= 0 || p.Port > 65535 {
			return 0, 0, fmt.Errorf("sandbox: port %d is not a port to listen on", p.Port)
		}
		rules = append(rules, landlock.BindTCP(uint16(p.Port)))
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return 0, 0, fmt.Errorf("sandbox: %w", err)
	}
	if fd < 0 {
		return 0, 0, errors.New("sandbox: Landlock would restrict nothing here, so nothing was started")
	}
	return fd, flags, nil
}

// dropCapabilities empties this thread's bounding, ambient and
// inheritable sets when it is root's, so a program it executes gets no
// capability: root's code without root's powers. Only this thread is
// changed.
func dropCapabilities() error {
	if os.Geteuid() != 0 {
		return nil
	}
	for c := 0; ; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			return err
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// systemRules are what every confined process may read: the toolchain and
// system libraries, the parts of /etc any user of the machine may read,
// /proc (whose other processes' private files the kernel keeps from a
// confined one), a few facts in /sys, and the harmless devices.
var systemRules = sync.OnceValue(func() []landlock.Rule {
	read := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
		"/sys/fs/cgroup", "/sys/devices/system/cpu", "/sys/kernel/mm/transparent_hugepage"}
	read = append(read, toolchain()...)
	dirs, files := publicEntries("/etc")
	return []landlock.Rule{
		landlock.RODirs(read...).IgnoreIfMissing(),
		landlock.RODirs(dirs...).IgnoreIfMissing(),
		landlock.ROFiles(files...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom").IgnoreIfMissing(),
	}
})

// toolchain are the folders of PATH outside the host's home, and the root
// of the host's go wherever it is, so a stage finds the programs it names.
func toolchain() []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) && !within(d, home) {
			out = append(out, filepath.Clean(d))
		}
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		if real, err := filepath.EvalSymlinks(goBin); err == nil {
			// <goroot>/bin/go: the whole toolchain, its standard library included.
			if root := filepath.Dir(filepath.Dir(real)); root != "/" && root != home && filepath.Base(filepath.Dir(real)) == "bin" &&
				exists(filepath.Join(root, "src", "runtime")) {
				out = append(out, root)
			}
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// within says p is dir or inside it.
func within(p, dir string) bool {
	if dir == "" || dir == "/" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// publicEntries lists what of dir every user may read: its entries whose
// permissions let anyone read them, a folder that holds something private
// (as /etc/ssh holds host keys) by its own public entries, and a link by
// what it points to.
func publicEntries(dir string) (dirs, files []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := os.Stat(p) // a link counts as what it points to
		if err != nil || info.Mode().Perm()&0o004 == 0 {
			continue
		}
		switch {
		case info.IsDir() && info.Mode().Perm()&0o001 == 0:
			continue
		case info.IsDir() && holdsPrivate(p):
			d, f := publicEntries(p)
			dirs, files = append(dirs, d...), append(files, f...)
		case info.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// holdsPrivate says something under dir is not for every user.
func holdsPrivate(dir string) bool {
	private := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			private = true
			return filepath.SkipAll
		}
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm()&0o004 == 0 || info.IsDir() && info.Mode().Perm()&0o001 == 0 {
			private = true
			return filepath.SkipAll
		}
		return nil
	})
	return private
}
