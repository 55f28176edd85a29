package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// When this program is started as the helper inside a sandbox (bubblewrap
// binds it as helperName), it confines the command it is given and runs
// it, and never returns to the program's own main. This is the only work
// the package does at start-up; in any other process it does nothing.
func init() {
	if filepath.Base(os.Args[0]) == helperName && len(os.Args) == 2 {
		os.Exit(inside(os.Args[1]))
	}
}

// watchEvery is how often the helper counts the tree's processes and
// memory.
const watchEvery = 25 * time.Millisecond

// inside is the helper's whole life: confine, then become the command or
// watch it. It answers the exit status bubblewrap passes on.
func inside(arg string) int {
	var sp spec
	if err := json.Unmarshal([]byte(arg), &sp); err != nil {
		return fail("the sandbox's helper was given no command: %v", err)
	}
	// Everything that confines is done on this thread, and the command is
	// started from it: Landlock, the capabilities and no_new_privs belong
	// to a thread, and a child has its parent thread's.
	runtime.LockOSThread()
	if err := confine(sp); err != nil {
		return fail("the sandbox could not confine the command: %v", err)
	}
	env := os.Environ()
	if sp.Limits == nil {
		err := unix.Exec(sp.Path, sp.Args, env)
		return fail("%s could not start: %v", sp.Path, err)
	}
	for _, fd := range []int{sp.Status, sp.Relay, sp.Lifeline} {
		if fd > 0 {
			unix.CloseOnExec(fd)
		}
	}
	// The command must not reach the helper's descriptors through /proc
	// or ptrace.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	proc, err := os.StartProcess(sp.Path, sp.Args, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return fail("%s could not start: %v", sp.Path, err)
	}
	if sp.Relay > 0 {
		go relay(sp.Relay, sp.Port)
	}
	if sp.Lifeline > 0 {
		go func() {
			// Nothing is ever written: the read ends when the host stops the
			// process or the server ends.
			buf := make([]byte, 1)
			for {
				if _, err := unix.Read(sp.Lifeline, buf); err != unix.EINTR {
					break
				}
			}
			_ = unix.Kill(-1, unix.SIGKILL)
			os.Exit(128 + int(unix.SIGKILL))
		}()
	}
	return watch(proc, sp)
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "autoapp sandbox: "+format+"\n", args...)
	return 126
}

// confine makes this thread, and so the command it starts, reach only what
// sp allows.
func confine(sp spec) error {
	if sp.ReadOnlyDevices {
		for _, d := range devices {
			if _, err := os.Stat(d); err != nil {
				continue
			}
			// A confined root owns the device nodes: without this it could
			// change their modes on the host.
			if err := unix.Mount("", d, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", d, err)
			}
		}
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	// A session keyring of its own: the owner's keys are not the
	// command's to possess.
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 && errno != unix.ENOSYS {
		return fmt.Errorf("a keyring of its own: %w", errno)
	}
	if err := setLimits(sp.Limits); err != nil {
		return err
	}
	return restrict(sp)
}

// restrict enforces the Landlock ruleset of sp on this thread.
func restrict(sp spec) error {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V9.HandledAccessFS,
		Scoped:          landlock.V6.Scoped,
	}
	switch sp.Net {
	case NetBindOne:
		cfg.HandledAccessNet = ll.AccessNetBindTCP
	case NetNone:
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	rules := []landlock.Rule{
		landlock.RODirs(sp.Read...).IgnoreIfMissing(),
		landlock.RWDirs(sp.Write...).WithRefer().IgnoreIfMissing(),
		landlock.ROFiles(sp.Programs...).IgnoreIfMissing(),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
	}
	if sp.Net == NetBindOne {
		rules = append(rules, landlock.BindTCP(uint16(sp.Port)))
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock would restrict nothing here")
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// setLimits sets the resource limits of l. Processes count threads here,
// so the kernel's limit is kept well above the tree's, which watch
// enforces.
func setLimits(l *Limits) error {
	set := func(what int, soft, hard uint64) error {
		if err := unix.Setrlimit(what, &unix.Rlimit{Cur: soft, Max: hard}); err != nil {
			return fmt.Errorf("setting a limit: %w", err)
		}
		return nil
	}
	if err := set(unix.RLIMIT_CORE, 0, 0); err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	if l.Processes > 0 {
		n := uint64(l.Processes) * 16
		if err := set(unix.RLIMIT_NPROC, n, n); err != nil {
			return err
		}
	}
	if l.CPU > 0 {
		s := uint64(l.CPU / time.Second)
		if err := set(unix.RLIMIT_CPU, s, s+5); err != nil {
			return err
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize)); err != nil {
			return err
		}
	}
	return nil
}

// watch waits for the command while counting the tree's processes and
// memory; a tree past its limits is killed, and which limit is written
// to the host.
func watch(proc *os.Process, sp spec) int {
	ended := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := proc.Wait()
		ended <- st
	}()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	say := func(limit string) {
		if sp.Status > 0 {
			_, _ = unix.Write(sp.Status, []byte(limit))
		}
	}
	for {
		select {
		case st := <-ended:
			if st == nil {
				return fail("lost the command")
			}
			ws, _ := st.Sys().(syscall.WaitStatus)
			switch {
			case ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
				ws.Signaled() && ws.Signal() == syscall.SIGKILL && sp.Limits.CPU > 0 && st.UserTime()+st.SystemTime() >= sp.Limits.CPU:
				say(LimitCPU)
			case ws.Signaled() && ws.Signal() == syscall.SIGXFSZ:
				say(LimitFileSize)
			}
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		case <-tick.C:
			n, mem := tree()
			limit := ""
			switch {
			case sp.Limits.Processes > 0 && n > sp.Limits.Processes:
				limit = LimitProcesses
			case sp.Limits.Memory > 0 && mem > sp.Limits.Memory:
				limit = LimitMemory
			}
			if limit != "" {
				say(limit)
				// Every process of this PID namespace but its first and this one.
				_ = unix.Kill(-1, unix.SIGKILL)
				<-ended
				return 128 + int(unix.SIGKILL)
			}
		}
	}
}

var pageSize = int64(os.Getpagesize())

// tree counts the processes of this PID namespace (the helper and
// bubblewrap's first process aside) and the private memory they hold.
func tree() (n int, mem int64) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	self := os.Getpid()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == 1 || pid == self {
			continue
		}
		n++
		b, err := os.ReadFile("/proc/" + name + "/statm")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		resident, _ := strconv.ParseInt(f[1], 10, 64)
		shared, _ := strconv.ParseInt(f[2], 10, 64)
		mem += (resident - shared) * pageSize
	}
	return n, mem
}

// relay hands the host a connection to port for each byte it writes on
// fd: the preview listens inside a network nobody else can reach.
func relay(fd, port int) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	buf := make([]byte, 16)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil || n == 0 {
			return
		}
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			_ = unix.Sendmsg(fd, []byte(err.Error()), nil, nil, 0)
			continue
		}
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			_ = unix.Sendmsg(fd, []byte(err.Error()), nil, nil, 0)
			continue
		}
		_ = unix.Sendmsg(fd, []byte{1}, unix.UnixRights(int(f.Fd())), nil, 0)
		f.Close()
	}
}

// dropCapabilities empties every capability set of this thread, so the
// command it starts has none, even as a root of its user namespace.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	// Without any capability (bubblewrap run by an ordinary user drops
	// them all) the bounding set cannot be changed, and with no_new_privs
	// nothing can be gained from it.
	if data[0].Permitted|data[1].Permitted|data[0].Effective|data[1].Effective != 0 {
		for c := 0; ; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				if errors.Is(err, unix.EINVAL) {
					break // past the last capability this kernel knows
				}
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	data = [2]unix.CapUserData{}
	return unix.Capset(&hdr, &data[0])
}
