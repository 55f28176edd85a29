package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"autoapp/intent/timetest"
	"autoapp/intent/workspace/sandbox"
)

// TestMain runs the tests as a login session would: every process of the
// owner shares one session keyring. Started outside such a session (a CI
// runner, make under a service), the kernel gives each thread that first
// touches the session keyring a keyring of its own, so a key the test adds
// is in one thread's keyring and a probe forked from another never had it —
// the unconfined probe could not read the owner's key and the confined one
// proved nothing. Joining a keyring on one locked thread and executing the
// test binary again from it gives the whole process that keyring.
func TestMain(m *testing.M) {
	if os.Getenv("AUTOAPP_PROBE") == "" && os.Getenv("AUTOAPP_TEST_SESSION") == "" {
		runtime.LockOSThread()
		if _, err := unix.KeyctlJoinSessionKeyring("autoapp-test-session"); err == nil {
			os.Setenv("AUTOAPP_TEST_SESSION", "1")
			err = syscall.Exec("/proc/self/exe", os.Args, os.Environ())
			fmt.Fprintf(os.Stderr, "running the tests in a session keyring of their own: %v\n", err)
			os.Exit(2)
		}
		runtime.UnlockOSThread()
	}
	os.Exit(m.Run())
}

// owned is what the owner has on the machine that Landlock alone does not
// cover: a pathname socket in /tmp, System V shared memory and a message
// queue, a key in the session keyring, a TCP and a UDP listener, and a
// process whose arguments name a secret.
type owned struct {
	sock             string
	shmKey, msgKey   int
	keyID            int
	tcpPort, udpPort int
	udp              *net.UDPConn
	secretFile       string
}

const ownerSecret = "owner-secret-7c1e"

func ownerThings(t *testing.T, r root) owned {
	t.Helper()
	o := owned{sock: fmt.Sprintf("/tmp/autoapp-owner-%d.sock", os.Getpid()), secretFile: r.secret}
	os.Remove(o.sock)
	ul, err := net.Listen("unix", o.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close(); os.Remove(o.sock) })
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(ownerSecret))
			c.Close()
		}
	}()
	o.shmKey, o.msgKey = 0x5a000000+os.Getpid()%0xffff, 0x5b000000+os.Getpid()%0xffff
	shm, err := unix.SysvShmGet(o.shmKey, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(shm, unix.IPC_RMID, nil) })
	msq, _, errno := unix.Syscall(unix.SYS_MSGGET, uintptr(o.msgKey), unix.IPC_CREAT|0o600, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	t.Cleanup(func() { unix.Syscall(unix.SYS_MSGCTL, msq, unix.IPC_RMID, 0) })
	id, err := unix.AddKey("user", "autoapp-owner-key", []byte(ownerSecret), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("adding a key to the session keyring: %v", err)
	}
	o.keyID = id
	t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0) })
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(ownerSecret))
			c.Close()
		}
	}()
	o.tcpPort = tl.Addr().(*net.TCPAddr).Port
	o.udp, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.udp.Close() })
	o.udpPort = o.udp.LocalAddr().(*net.UDPAddr).Port
	return o
}

// startProbe links this test binary into the workspace and starts it
// confined, or as it is, in the mode named, with env.
func startProbe(t *testing.T, r root, m sandbox.Machine, confine bool, p sandbox.Policy, mode string, env ...string) (waiter, *bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(r.ws, "probe")
	if _, err := os.Stat(probe); err != nil {
		linkOrCopy(t, self, probe)
	}
	cmd := exec.Command("./probe", "-test.run=^TestProbeHelper$")
	cmd.Dir = r.ws
	cmd.Env = append([]string{"AUTOAPP_PROBE=" + mode, "PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if !confine {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	proc, err := sandbox.Start(cmd, m, p)
	if err != nil {
		t.Fatal(err)
	}
	return proc, &out
}

// TestWhatLandlockDoesNotCoverIsOutOfReach tries, from a confined process,
// what the namespaces keep from it: the owner's socket in /tmp, shared
// memory and message queue, a key of the session keyring, another
// process's arguments, changing a file outside, reaching the owner's
// listeners over TCP, MPTCP and UDP, and looking at the owner's files.
// Unconfined, the same probe reaches them, so the test can fail.
func TestWhatLandlockDoesNotCoverIsOutOfReach(t *testing.T) {
	m := machine(t)
	for _, confine := range []bool{true, false} {
		t.Run(map[bool]string{true: "confined", false: "unconfined"}[confine], func(t *testing.T) {
			r := newRoot(t)
			o := ownerThings(t, r)
			outside := filepath.Join(filepath.Dir(r.secret), "outside.txt")
			if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			w, out := startProbe(t, r, m, confine, sandbox.ForApp(r.ws), "reach",
				"SOCK="+o.sock, "SHM="+strconv.Itoa(o.shmKey), "MSG="+strconv.Itoa(o.msgKey), "KEY="+strconv.Itoa(o.keyID),
				"TCP="+strconv.Itoa(o.tcpPort), "UDP="+strconv.Itoa(o.udpPort), "SECRET="+o.secretFile, "OUTSIDE="+outside,
				"ARGV=/proc/"+strconv.Itoa(os.Getpid())+"/cmdline")
			if err := w.Wait(); err != nil {
				t.Fatalf("the probe failed: %v\n%s", err, out)
			}
			got := lines(out.String())
			_ = o.udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			buf := make([]byte, 64)
			n, _, _ := o.udp.ReadFromUDP(buf)
			got["reach the owner's UDP listener"] = map[bool]string{true: "yes", false: "no"}[n > 0]
			reached := []string{"connect the owner's socket in /tmp", "read the owner's shared memory", "read the owner's message queue",
				"read the owner's key", "read another process's arguments", "change a file outside", "reach the owner's TCP listener",
				"reach the owner's listener over MPTCP", "reach the owner's UDP listener", "look at the owner's files"}
			if !confine {
				// As it is, the same probe reaches what the owner has.
				for _, what := range []string{"connect the owner's socket in /tmp", "read the owner's shared memory",
					"read the owner's key", "reach the owner's TCP listener", "reach the owner's UDP listener", "look at the owner's files"} {
					if got[what] != "yes" {
						t.Errorf("unconfined, %s: %q, want yes: the probe cannot tell\n%s", what, got[what], out)
					}
				}
				return
			}
			for _, what := range reached {
				if got[what] != "no" {
					t.Errorf("%s: %q, want no\n%s", what, got[what], out)
				}
			}
			for _, what := range []string{"chmod /dev/null", "change the time of a system file", "set an attribute of a system file"} {
				if got[what] != "no" {
					t.Errorf("%s: %q, want no\n%s", what, got[what], out)
				}
			}
		})
	}
}

// TestEverythingAConfinedProcessStartsEndsWithIt starts a process that
// leaves a daemon of its own session behind, then ends; the daemon is gone
// with it. A process stopped by the host takes its daemon along too.
func TestEverythingAConfinedProcessStartsEndsWithIt(t *testing.T) {
	m := machine(t)
	r := newRoot(t)
	marker := "4242." + strconv.Itoa(os.Getpid())
	daemonAlive := func() bool {
		out, _ := exec.Command("pgrep", "-f", "^sleep "+marker).Output()
		return strings.TrimSpace(string(out)) != ""
	}
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep "+marker+" >/dev/null 2>&1 & sleep 0.3; echo started")
	cmd.Dir = r.ws
	p, err := sandbox.Start(cmd, m, sandbox.ForApp(r.ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	// The namespace's end kills the daemon as the process ends; the kernel
	// may take a moment to reap it. One that outlived the process would
	// sleep for more than an hour.
	timetest.WaitFor(t, 5*time.Second, "the daemon to end with the process that started it", func() bool { return !daemonAlive() })

	cmd = exec.Command("/bin/sh", "-c", "setsid sleep "+marker+" >/dev/null 2>&1 & sleep 60")
	cmd.Dir = r.ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err = sandbox.Start(cmd, m, sandbox.ForApp(r.ws))
	if err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 5*time.Second, "the daemon to start", daemonAlive)
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	_ = p.Wait()
	timetest.WaitFor(t, 5*time.Second, "the daemon to end with the stopped process", func() bool { return !daemonAlive() })
}

// TestAConfinedTreeEndsWhenTheServerDies starts, from a process standing
// for the server, a confined process that leaves a daemon of its own
// session; the server is killed, and the daemon goes with it.
func TestAConfinedTreeEndsWhenTheServerDies(t *testing.T) {
	machine(t)
	r := newRoot(t)
	marker := "4343." + strconv.Itoa(os.Getpid())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command(self, "-test.run=^TestProbeHelper$")
	server.Env = append(os.Environ(), "AUTOAPP_PROBE=server", "WS="+r.ws, "MARKER="+marker)
	var out bytes.Buffer
	server.Stdout, server.Stderr = &out, &out
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	daemonAlive := func() bool {
		out, _ := exec.Command("pgrep", "-f", "^sleep "+marker).Output()
		return strings.TrimSpace(string(out)) != ""
	}
	timetest.WaitFor(t, 5*time.Second, "the daemon to start", daemonAlive)
	_ = server.Process.Kill()
	_ = server.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for daemonAlive() {
		if time.Now().After(deadline) {
			ps, _ := exec.Command("pgrep", "-a", "-f", "sleep "+marker).Output()
			t.Fatalf("the daemon outlived the server by 5s: %s\n%s", ps, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linkOrCopy links from at to, or copies it where this user may not link
// it (the kernel's protected hard links, for a user other than its owner).
func linkOrCopy(t *testing.T, from, to string) {
	t.Helper()
	if os.Link(from, to) == nil {
		return
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestALimitStopsTheTreeWithASentence starts 500 processes, then holds 3
// GiB: each is stopped, and the host says which limit ended it.
func TestALimitStopsTheTreeWithASentence(t *testing.T) {
	m := machine(t)
	for _, c := range []struct{ mode, limit, sentence string }{
		{"fork", sandbox.LimitProcesses, "The build stage started more than 256 processes and was stopped."},
		{"memory", sandbox.LimitMemory, "The build stage used more than 2 GiB of memory and was stopped."},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := newRoot(t)
			start := time.Now()
			w, out := startProbe(t, r, m, true, sandbox.ForApp(r.ws), c.mode)
			err := w.Wait()
			var le *sandbox.LimitError
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("Wait = %v, want the %s limit\n%s", err, c.limit, out)
			}
			if got := le.Sentence("the build stage"); got != c.sentence {
				t.Errorf("sentence %q, want %q", got, c.sentence)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the limit took %s to stop the tree", d)
			}
		})
	}
}

// TestAPreviewIsReachedOnlyThroughTheHost starts a confined listener on
// its port: nothing on the machine connects to it there, and the host does
// through the process's relay.
func TestAPreviewIsReachedOnlyThroughTheHost(t *testing.T) {
	m := machine(t)
	r := newRoot(t)
	port := freePort(t)
	p := sandbox.ForApp(r.ws)
	p.Net, p.Port = sandbox.NetBindOne, port
	w, out := startProbe(t, r, m, true, p, "listen", "PORT="+strconv.Itoa(port))
	proc := w.(*sandbox.Process)
	t.Cleanup(func() { syscall.Kill(proc.Pid(), syscall.SIGKILL); proc.Wait() })
	var c net.Conn
	var err error
	timetest.WaitFor(t, 5*time.Second, "the relay to reach the listener", func() bool {
		c, err = proc.Dial(t.Context())
		return err == nil
	})
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	c.Close()
	if string(buf[:n]) != "hello from inside" {
		t.Errorf("through the relay: %q (%v)\n%s", buf[:n], err, out)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		c.Close()
		t.Errorf("the preview's port answered on the machine's own loopback")
	}
}

// TestProbeHelper is the confined probe of the tests above; it does nothing
// in an ordinary run.
func TestProbeHelper(t *testing.T) {
	switch os.Getenv("AUTOAPP_PROBE") {
	case "":
		return
	case "reach":
		reach()
	case "server":
		cmd := exec.Command("/bin/sh", "-c", "setsid sleep "+os.Getenv("MARKER")+" >/dev/null 2>&1 & sleep 60")
		cmd.Dir = os.Getenv("WS")
		if _, err := sandbox.Start(cmd, sandbox.Probe(), sandbox.ForApp(os.Getenv("WS"))); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		time.Sleep(60 * time.Second)
	case "fork":
		for range 500 {
			if err := exec.Command("sleep", "30").Start(); err != nil {
				fmt.Println("fork refused:", err)
				time.Sleep(30 * time.Second)
			}
		}
		time.Sleep(30 * time.Second)
	case "memory":
		held := make([]byte, 3<<30)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		time.Sleep(30 * time.Second)
	case "listen":
		ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from inside"))
			c.Close()
		}
	}
}

func reach() {
	say := func(what string, err error) {
		fmt.Printf("%s: %s\n", what, map[bool]string{true: "yes", false: "no"}[err == nil])
	}
	env := os.Getenv
	atoi := func(s string) int { n, _ := strconv.Atoi(env(s)); return n }
	say("connect the owner's socket in /tmp", func() error {
		c, err := net.Dial("unix", env("SOCK"))
		if err == nil {
			c.Close()
		}
		return err
	}())
	say("read the owner's shared memory", func() error { _, err := unix.SysvShmGet(atoi("SHM"), 0, 0); return err }())
	say("read the owner's message queue", func() error {
		if _, _, errno := unix.Syscall(unix.SYS_MSGGET, uintptr(atoi("MSG")), 0, 0); errno != 0 {
			return errno
		}
		return nil
	}())
	say("read the owner's key", func() error {
		buf := make([]byte, 64)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, atoi("KEY"), buf, 0)
		if err == nil && !strings.Contains(string(buf[:n]), ownerSecret) {
			return errors.New("not the secret")
		}
		return err
	}())
	say("read another process's arguments", func() error {
		b, err := os.ReadFile(env("ARGV"))
		if err == nil && !strings.Contains(string(b), "TestWhatLandlockDoesNotCoverIsOutOfReach") && !strings.Contains(string(b), ".test") {
			return errors.New("another process")
		}
		return err
	}())
	say("change a file outside", func() error {
		if err := os.Chmod(env("OUTSIDE"), 0o644); err != nil {
			return err
		}
		return os.Chtimes(env("OUTSIDE"), time.Unix(1, 0), time.Unix(1, 0))
	}())
	say("chmod /dev/null", os.Chmod("/dev/null", 0o666))
	say("change the time of a system file", os.Chtimes("/usr/bin/env", time.Now(), time.Now()))
	say("set an attribute of a system file", unix.Setxattr("/usr/bin/env", "user.autoapp", []byte("x"), 0))
	dial := func(proto int) error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, proto)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: atoi("TCP"), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		buf := make([]byte, 64)
		n, err := unix.Read(fd, buf)
		if err == nil && !strings.Contains(string(buf[:n]), ownerSecret) {
			return errors.New("not the owner's")
		}
		return err
	}
	say("reach the owner's TCP listener", dial(unix.IPPROTO_TCP))
	say("reach the owner's listener over MPTCP", dial(unix.IPPROTO_MPTCP))
	if c, err := net.Dial("udp", "127.0.0.1:"+env("UDP")); err == nil {
		c.Write([]byte(ownerSecret))
		c.Close()
	}
	say("look at the owner's files", func() error { _, err := os.Stat(env("SECRET")); return err }())
}

// TestAProcessStoppedAsItStartsNeverRunsOn stops confined processes the
// moment they are started, before bubblewrap can have tied the sandbox to
// itself: none of their commands is left running.
func TestAProcessStoppedAsItStartsNeverRunsOn(t *testing.T) {
	m := machine(t)
	r := newRoot(t)
	marker := "4545." + strconv.Itoa(os.Getpid())
	for range 10 {
		cmd := exec.Command("/bin/sh", "-c", "sleep "+marker)
		cmd.Dir = r.ws
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p, err := sandbox.Start(cmd, m, sandbox.ForApp(r.ws))
		if err != nil {
			t.Fatal(err)
		}
		p.Stop()
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not return within 5s of Stop")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", "^sleep "+marker).Output()
		if strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stopped process's command runs on: %s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
