package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperName is this program's name inside the sandbox, which makes it run
// as the helper (see inside.go) instead of as itself.
const helperName = "autoapp-confine"

// helperPath is where the sandbox binds this program.
const helperPath = "/run/autoapp/" + helperName

// spec is what the helper inside is told, as its one argument.
type spec struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	// Read, Write: the folders the Landlock ruleset allows, as seen inside.
	Read  []string `json:"read"`
	Write []string `json:"write"`
	// Programs: the files it may read and run besides those folders.
	Programs []string `json:"programs,omitempty"`
	Net      Net      `json:"net"`
	Port     int      `json:"port"`
	// Limits, when set, makes the helper stay as the command's parent to
	// watch the tree; otherwise it becomes the command.
	Limits *Limits `json:"limits,omitempty"`
	// Status and Relay are the helper's descriptors for the host: where it
	// says which limit ended the tree, and where it hands over connections
	// to Port. 0 when unused.
	Status int `json:"status,omitempty"`
	Relay  int `json:"relay,omitempty"`
	// Lifeline reads a pipe whose only writing end the host's Process
	// holds: it ends when the host stops the process or the server ends,
	// however it ends, and the helper then ends the tree, even one whose
	// bubblewrap was killed before it could tie the sandbox to itself.
	Lifeline int `json:"lifeline,omitempty"`
	// ReadOnlyDevices asks the helper to make the device nodes' mounts
	// read-only, which needs the capability bubblewrap then keeps for it:
	// the host runs as root, and a confined root owns them.
	ReadOnlyDevices bool `json:"readOnlyDevices,omitempty"`
}

// Process is a confined process the host started.
type Process struct {
	cmd    *exec.Cmd
	status *os.File // reads what the helper said; nil when unwatched
	// lifeline is the writing end of the helper's lifeline; closing it
	// ends the tree. Nil when unwatched.
	lifeline *os.File
	stopped  sync.Once
	relay    *net.UnixConn
	port     int
	limits   Limits

	dialing sync.Mutex
}

// Pid is the process the host started: bubblewrap, whose end ends
// everything inside.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop ends the process and everything it started: it ends the helper's
// lifeline and kills bubblewrap's process group. It is safe to call more
// than once and after the process ended.
func (p *Process) Stop() {
	p.stopped.Do(func() {
		if p.lifeline != nil {
			p.lifeline.Close()
		}
	})
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
	}
}

// Wait waits for the process to end, as cmd.Wait does, and answers a
// *LimitError when a limit ended it.
func (p *Process) Wait() error {
	err := p.cmd.Wait()
	p.stopped.Do(func() {
		if p.lifeline != nil {
			p.lifeline.Close()
		}
	})
	if p.relay != nil {
		p.relay.Close()
	}
	if p.status == nil {
		return err
	}
	defer p.status.Close()
	b, _ := io.ReadAll(io.LimitReader(p.status, 256))
	if limit := strings.TrimSpace(string(b)); limit != "" {
		return &LimitError{Limit: limit, Limits: p.limits}
	}
	return err
}

// Dial connects to the port the process listens on: through the sandbox's
// relay when it has a network of its own, at 127.0.0.1 when it runs
// unconfined.
func (p *Process) Dial(ctx context.Context) (net.Conn, error) {
	if p.relay == nil {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
	}
	p.dialing.Lock()
	defer p.dialing.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = p.relay.SetDeadline(deadline)
	if _, err := p.relay.Write([]byte{1}); err != nil {
		return nil, fmt.Errorf("sandbox: relay: %w", err)
	}
	buf, oob := make([]byte, 256), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := p.relay.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("sandbox: relay: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		msg := strings.TrimSpace(string(buf[:n]))
		if msg == "" {
			msg = "nothing was handed over"
		}
		return nil, fmt.Errorf("sandbox: relay: %s", msg)
	}
	f := os.NewFile(uintptr(fds[0]), "preview")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("sandbox: relay: %w", err)
	}
	if _, ok := c.(*net.TCPConn); !ok {
		c.Close()
		return nil, errors.New("sandbox: relay: what was handed over is not a TCP connection")
	}
	return c, nil
}

// Start starts cmd confined to p on a machine that confines. It never
// starts cmd unconfined: on a machine without the sandbox it fails.
func Start(cmd *exec.Cmd, m Machine, p Policy) (*Process, error) {
	if !m.Confines() {
		return nil, fmt.Errorf("sandbox: %s", m.Why)
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if p.Net == NetBindOne && (p.Port <= 0 || p.Port > 65535) {
		return nil, fmt.Errorf("sandbox: port %d is not a port to listen on", p.Port)
	}
	self, err := helperBinary()
	if err != nil {
		return nil, err
	}
	proc := &Process{cmd: cmd, port: p.Port}
	sp := spec{Path: cmd.Path, Args: cmd.Args, Net: p.Net, Port: p.Port, ReadOnlyDevices: os.Geteuid() == 0}
	if sp.Args == nil {
		sp.Args = []string{cmd.Path}
	}
	var closeAfterStart []io.Closer
	closeAll := func(cs []io.Closer) {
		for _, c := range cs {
			c.Close()
		}
	}
	fdOf := func(f *os.File) int {
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		return 2 + len(cmd.ExtraFiles)
	}
	if p.Limits != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		proc.status, proc.limits = r, *p.Limits
		sp.Limits = p.Limits
		sp.Status = fdOf(w)
		closeAfterStart = append(closeAfterStart, w)
		lr, lw, err := os.Pipe()
		if err != nil {
			closeAll(closeAfterStart)
			proc.status.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		proc.lifeline = lw
		sp.Lifeline = fdOf(lr)
		closeAfterStart = append(closeAfterStart, lr)
	}
	if p.Net == NetBindOne {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		host, inside := os.NewFile(uintptr(fds[0]), "relay"), os.NewFile(uintptr(fds[1]), "relay")
		c, err := net.FileConn(host)
		host.Close()
		if err != nil {
			inside.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		proc.relay = c.(*net.UnixConn)
		sp.Relay = fdOf(inside)
		closeAfterStart = append(closeAfterStart, inside)
	}
	args, err := bwrapArgs(cmd, p, self, &sp)
	if err != nil {
		closeAll(closeAfterStart)
		return nil, err
	}
	b, err := json.Marshal(sp)
	if err != nil {
		closeAll(closeAfterStart)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd.Path = m.Bwrap
	cmd.Args = append(append([]string{"bwrap"}, args...), "--", helperPath, string(b))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// bubblewrap ends the sandbox when it ends itself; this ends
	// bubblewrap when the server does, however it ends.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	err = startFromKeptThread(cmd)
	closeAll(closeAfterStart)
	if err != nil {
		if proc.status != nil {
			proc.status.Close()
		}
		if proc.lifeline != nil {
			proc.lifeline.Close()
		}
		if proc.relay != nil {
			proc.relay.Close()
		}
		return nil, err
	}
	return proc, nil
}

// starts carries each start to the one thread that forks bubblewrap.
var starts = sync.OnceValue(func() chan startRequest {
	ch := make(chan startRequest)
	go func() {
		// The kernel sends a child its parent-death signal when the thread
		// that forked it ends, not the process: this thread never ends.
		runtime.LockOSThread()
		for req := range ch {
			req.done <- req.cmd.Start()
		}
	}()
	return ch
})

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startFromKeptThread starts cmd from the thread that lives as long as
// the server.
func startFromKeptThread(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	starts() <- startRequest{cmd: cmd, done: done}
	return <-done
}

// helperBinary is this program's own file, which the sandbox binds as the
// helper.
var helperBinary = sync.OnceValues(func() (string, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: this program cannot find its own file to run inside the sandbox: %w", err)
	}
	return self, nil
})

// bwrapArgs are bubblewrap's options for cmd under p: the namespaces, and
// a root that holds only what p may reach. It fills in the spec's view of
// the folders.
func bwrapArgs(cmd *exec.Cmd, p Policy, self string, sp *spec) ([]string, error) {
	a := []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if sp.ReadOnlyDevices {
		// Kept for the helper to make the devices read-only; it drops them
		// before the command runs.
		a = append(a, "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP")
	}
	if p.Net != NetOpen {
		a = append(a, "--unshare-net")
	}
	sys := systemView()
	a = append(a, sys.args...)
	sp.Read = append(sp.Read, sys.read...)
	for _, d := range sys.toolchain {
		if !holdsAny(d, p.Read) && !holdsAny(d, p.Write) {
			a = append(a, "--ro-bind-try", d, d)
			sp.Read = append(sp.Read, d)
		}
	}
	sp.Write = append(sp.Write, "/tmp")

	// The application's folders, readable ones first: the writable ones
	// are inside them.
	for _, group := range []struct {
		dirs []string
		bind string
		view *[]string
	}{{p.Read, "--ro-bind", &sp.Read}, {p.Write, "--bind", &sp.Write}} {
		dirs := slices.Clone(group.dirs)
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) < len(dirs[j]) })
		for _, d := range dirs {
			d, err := filepath.Abs(d)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			info, err := os.Stat(d)
			if err != nil || !info.IsDir() {
				continue
			}
			// A folder that is a link (a shared cache, say) is bound where
			// it really is, and where each link on the way leads, so the
			// links resolve inside as they do outside.
			real, err := filepath.EvalSymlinks(d)
			if err != nil {
				continue
			}
			for _, at := range linkHops(d, real) {
				a = append(a, group.bind, real, at)
				*group.view = append(*group.view, at)
			}
		}
	}
	for _, f := range p.Programs {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue
		}
		if info, err := os.Stat(real); err != nil || !info.Mode().IsRegular() {
			continue
		}
		a = append(a, "--ro-bind", real, real)
		sp.Programs = append(sp.Programs, real)
	}
	a = append(a, "--ro-bind", self, helperPath)
	if cmd.Dir != "" {
		dir, err := filepath.Abs(cmd.Dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		a = append(a, "--chdir", dir)
	}
	return a, nil
}

// view is the part of the sandbox's root every policy shares: the
// toolchain, the public part of /etc, a private /tmp, a fresh /proc, and
// the harmless devices.
type view struct {
	args []string
	read []string
	// toolchain are the folders of the owner's toolchain outside the
	// system's, bound for a policy unless they hold its own folders (and
	// so, perhaps, the launcher's).
	toolchain []string
}

var systemView = sync.OnceValue(func() view {
	var v view
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		info, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				v.args = append(v.args, "--symlink", target, d)
			}
		case info.IsDir():
			v.args = append(v.args, "--ro-bind", d, d)
			v.read = append(v.read, d)
		}
	}
	for _, d := range toolchain() {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if !underAny(d, v.read) && !slices.Contains(v.toolchain, d) {
			v.toolchain = append(v.toolchain, d)
		}
	}
	// /etc shows only what any user of the machine may read: it is bound
	// whole (one bind per entry cost 70 ms a start here) and each private
	// entry is covered, a folder by an empty one, a file by a device
	// nobody may open there.
	v.args = append(v.args, "--ro-bind", "/etc", "/etc")
	dirs, files := privateEntries("/etc")
	for _, d := range dirs {
		v.args = append(v.args, "--tmpfs", d, "--remount-ro", d)
	}
	for _, f := range files {
		v.args = append(v.args, "--ro-bind", "/dev/null", f)
	}
	v.read = append(v.read, "/etc")
	for _, d := range []string{"/sys/devices/system/cpu", "/sys/kernel/mm/transparent_hugepage"} {
		v.args = append(v.args, "--ro-bind-try", d, d)
		v.read = append(v.read, d)
	}
	v.args = append(v.args, "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/dev", "--tmpfs", "/dev/shm")
	v.read = append(v.read, "/proc")
	for _, d := range devices {
		v.args = append(v.args, "--dev-bind-try", d, d)
	}
	return v
})

// devices are the device nodes a confined process may use.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// linkHops are the places a folder d, whose real path is real, must be
// bound for every link on the way to resolve: real itself, and the
// target of each link d leads through that is not d's own place.
func linkHops(d, real string) []string {
	hops := []string{real}
	at := d
	for range 8 {
		info, err := os.Lstat(at)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			break
		}
		next, err := os.Readlink(at)
		if err != nil {
			break
		}
		if !filepath.IsAbs(next) {
			next = filepath.Join(filepath.Dir(at), next)
		}
		if next = filepath.Clean(next); next != real && !slices.Contains(hops, next) {
			hops = append(hops, next)
		}
		at = next
	}
	return hops
}

// holdsAny says dir is one of dirs or holds one.
func holdsAny(dir string, dirs []string) bool {
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil && within(abs, dir) {
			return true
		}
	}
	return false
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}
