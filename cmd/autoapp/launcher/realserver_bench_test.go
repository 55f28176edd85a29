package launcher_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// The real binary, built once for the benchmarks of this package into a
// folder TestMain removes.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func realBinary(b testing.TB) string {
	b.Helper()
	binary.once.Do(func() {
		binary.dir, binary.err = os.MkdirTemp("", "autoapp-bin-")
		if binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "autoapp")
		out, err := exec.Command("go", "build", "-o", binary.path, "autoapp/cmd/autoapp").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		b.Fatal(binary.err)
	}
	return binary.path
}

const (
	benchOwner    = "Ada"
	benchPassword = "correct horse battery staple"
	benchApp      = "notes"
	// benchTasks is how many tasks each intent of a seeded backlog plans.
	benchTasks = 6
)

// seedBacklog fills root, through the real stores and their migrations,
// with the owner, the application Notes (selected) and n intents of
// benchTasks tasks planned, run and ended as the executor leaves them:
// every fourth done, the others stopped with a task completed, one failed
// with the planning model's advice, one interrupted and one queued, and a
// builder's usage row for each task that ran.
func seedBacklog(root string, n int) error {
	ctx := context.Background()
	l, err := launcher.New(root, time.Now, nil, launcher.Options{Quiet: true})
	if err != nil {
		return err
	}
	defer l.Close()
	if err := l.Owners.Create(ctx, benchOwner, benchPassword, benchPassword); err != nil {
		return err
	}
	if _, err := l.Apps.CreateFromTemplate(ctx, benchApp, "Notes", "static"); err != nil {
		return err
	}
	if err := l.Apps.Select(ctx, benchApp); err != nil {
		return err
	}
	runs := 0
	move := func(taskID int64, to ...intent.TaskStatus) error {
		for _, st := range to {
			m := intent.Move{Reason: "the benchmark moved it", Actor: intent.ActorExecutor}
			if st == intent.TaskInProgress {
				runs++
				m.RunID = fmt.Sprintf("run-%d", runs)
				if err := l.Usage.RecordUsage(ctx, intent.Usage{Kind: intent.KindBuilder, RunID: m.RunID, AppID: benchApp,
					Model: "ollama:qwen3", Input: 12_000, Output: 900}); err != nil {
					return err
				}
			}
			if err := l.Backlog.MoveTask(ctx, taskID, st, m); err != nil {
				return fmt.Errorf("move task %d to %s: %w", taskID, st, err)
			}
		}
		return nil
	}
	for i := 1; i <= n; i++ {
		in, err := l.Backlog.OpenDraft(ctx, benchApp, fmt.Sprintf("Request %d: add tags to notes,\nand a filter by tag.", i), intent.Analysis{
			Restated:    []string{"Notes get tags.", "The list filters by one tag."},
			Fits:        []string{"The notes list"},
			Assumptions: []string{"One tag per note is enough for now."},
		})
		if err != nil {
			return err
		}
		var tasks []intent.Task
		for j := range benchTasks {
			p := plan.Task{Title: fmt.Sprintf("Step %d of the change", j+1), Priority: []string{"high", "medium", "low"}[j%3],
				Labels: []string{"views"}, EstimatedLines: 40, Risk: "normal", Reasoning: "low", Summary: "A change of the notes list.",
				Criteria: []plan.Criterion{{Text: "The page lists the notes."}, {Text: "An empty note is refused with a sentence.", Failure: true}}}
			if j%3 != 0 {
				p.BlockedBy = []string{tasks[j-1].Slug}
			}
			t, err := l.Backlog.AddTask(ctx, in.ID, p)
			if err != nil {
				return err
			}
			tasks = append(tasks, t)
		}
		if err := l.Backlog.Submit(ctx, in.ID); err != nil {
			return err
		}
		if err := l.Backlog.MoveIntent(ctx, in.ID, intent.IntentRunning, "the benchmark ran it"); err != nil {
			return err
		}
		if i%4 == 0 {
			for _, t := range tasks {
				if err := move(t.ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted); err != nil {
					return err
				}
			}
			if err := l.Backlog.MoveIntent(ctx, in.ID, intent.IntentDone, "every task completed"); err != nil {
				return err
			}
			continue
		}
		for _, m := range []struct {
			task int
			to   []intent.TaskStatus
		}{
			{0, []intent.TaskStatus{intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted}},
			{1, []intent.TaskStatus{intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed}},
			{3, []intent.TaskStatus{intent.TaskInQueue, intent.TaskInProgress, intent.TaskInterrupted}},
			{4, []intent.TaskStatus{intent.TaskInQueue}},
		} {
			if err := move(tasks[m.task].ID, m.to...); err != nil {
				return err
			}
		}
		if err := l.Backlog.SetAdvice(ctx, tasks[1].ID, "The build failed on a missing import; add it and run again."); err != nil {
			return err
		}
		if err := l.Backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "A task failed."); err != nil {
			return err
		}
	}
	return nil
}

// server is the real binary serving a data folder on a port of its own.
type server struct {
	cmd  *exec.Cmd
	base string
	// done is closed when its standard output ends.
	done chan struct{}
	// ended holds how the process ended, once it did.
	end   sync.Once
	ended error
}

var servingAt = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)

// startServer runs `autoapp serve` over root on a free loopback port and
// answers once it says where it serves.
func startServer(bin, root string) (*server, error) {
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	base := make(chan string, 1)
	go func() {
		defer close(s.done)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := servingAt.FindStringSubmatch(lines.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	select {
	case s.base = <-base:
		return s, nil
	case <-s.done:
	case <-time.After(time.Minute):
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("the server did not say where it serves: %s", stderr.String())
}

// stop ends the server as Ctrl-C would, and waits for it; kill kills
// it. Once it ended, either answers how.
func (s *server) stop() error { return s.signal(syscall.SIGTERM) }

func (s *server) kill() error { return s.signal(syscall.SIGKILL) }

func (s *server) signal(sig os.Signal) error {
	s.end.Do(func() {
		if err := s.cmd.Process.Signal(sig); err != nil {
			s.cmd.Process.Kill()
		}
		<-s.done
		s.ended = s.cmd.Wait()
		if sig == syscall.SIGKILL {
			s.ended = nil
		}
	})
	return s.ended
}

// signIn is a client that signed in to s through the sign-in page, as a
// browser does: the form sets the CSRF cookie the sign-in sends back.
func signIn(s *server) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.base + "/signin")
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	u, _ := url.Parse(s.base)
	var token string
	for _, c := range jar.Cookies(u) {
		if c.Name == "autoapp_csrf" {
			token = c.Value
		}
	}
	form := url.Values{"name": {benchOwner}, "password": {benchPassword}, "_csrf": {token}}
	req, _ := http.NewRequest(http.MethodPost, s.base+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	resp, err = client.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("the sign-in answered %d", resp.StatusCode)
	}
	return client, nil
}

// page is one GET of path by client, its status and its body.
func page(client *http.Client, base, path string) (int, string, error) {
	resp, err := client.Get(base + path)
	if err != nil {
		return 0, "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), err
}

// p50 is the median of the durations, in milliseconds.
func p50(took []time.Duration) float64 {
	slices.Sort(took)
	return float64(took[len(took)/2].Microseconds()) / 1000
}

// BenchmarkRealServerPages is the real binary over HTTP, signed in through
// the real sign-in, asked for the Backlog and the Overview (the rail, the
// needs, the whole page) with 10 and with 1,000 intents behind them, three
// in four stopped holding a failed task. It reports each page's median.
func BenchmarkRealServerPages(b *testing.B) {
	bin := realBinary(b)
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("%dintents", n), func(b *testing.B) {
			root := b.TempDir()
			if err := seedBacklog(root, n); err != nil {
				b.Fatal(err)
			}
			s, err := startServer(bin, root)
			if err != nil {
				b.Fatal(err)
			}
			defer s.stop()
			client, err := signIn(s)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range []struct{ name, path, want string }{
				{"backlog", "/backlog", `data-testid="intent-`},
				{"overview", "/overview", `data-testid="need-`},
			} {
				b.Run(p.name, func(b *testing.B) {
					status, body, err := page(client, s.base, p.path)
					if err != nil || status != http.StatusOK || !strings.Contains(body, p.want) {
						b.Fatalf("GET %s: %d %v; body: %.500s", p.path, status, err, body)
					}
					var took []time.Duration
					for b.Loop() {
						began := time.Now()
						status, _, err := page(client, s.base, p.path)
						took = append(took, time.Since(began))
						if err != nil || status != http.StatusOK {
							b.Fatalf("GET %s: %d %v", p.path, status, err)
						}
					}
					b.ReportMetric(p50(took), "ms-p50")
					b.ReportMetric(float64(len(body)), "bytes/answer")
				})
			}
		})
	}
}

// BenchmarkServedPages is BenchmarkRealServerPages with the server in
// this process (the program serve runs, on a loopback listener), so that
// -cpuprofile shows where a request's time goes:
//
//	go test -run '^$' -bench ServedPages/1000 -cpuprofile cpu.out ./cmd/autoapp/launcher
//	go tool pprof -top -cum -focus serveConn launcher.test cpu.out
func BenchmarkServedPages(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("%dintents", n), func(b *testing.B) {
			root := b.TempDir()
			if err := seedBacklog(root, n); err != nil {
				b.Fatal(err)
			}
			l, err := launcher.New(root, time.Now, nil, launcher.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ctx, cancel := context.WithCancel(context.Background())
			if err := l.Recover(ctx); err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- l.Serve(ctx, ln, launcher.Site{Hosts: []string{ln.Addr().String()}}, nil) }()
			defer func() {
				cancel()
				<-served
			}()
			s := &server{base: "http://" + ln.Addr().String()}
			client, err := signIn(s)
			if err != nil {
				b.Fatal(err)
			}
			for _, path := range []string{"/backlog", "/overview"} {
				b.Run(path[1:], func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						began := time.Now()
						status, _, err := page(client, s.base, path)
						took = append(took, time.Since(began))
						if err != nil || status != http.StatusOK {
							b.Fatalf("GET %s: %d %v", path, status, err)
						}
					}
					b.ReportMetric(p50(took), "ms-p50")
				})
			}
		})
	}
}

// BenchmarkRealServerColdStart is the real binary started on a long
// history (BenchmarkColdStart's, its million events spread over the last
// year, so that retention deletes nine in ten), timed from the start of
// the process to the first 200 from /healthz. Each start but the last
// case's is on a fresh copy of that history: "1Mevents" with its links
// index current, "1Mevents-older-links" with the index an older version
// of the derivation wrote (so it is rebuilt whole), and "again" started
// once more on the folder a first server left, its retention done. It
// reports each case's median.
func BenchmarkRealServerColdStart(b *testing.B) {
	bin := realBinary(b)
	history := yearOfHistory(b)
	fresh := func(b *testing.B, olderLinks bool) string {
		root := b.TempDir()
		if err := copyFolder(history, root); err != nil {
			b.Fatal(err)
		}
		if olderLinks {
			db, err := migrations.Open(filepath.Join(root, "launcher", "knowledge.sqlite"), migrations.Knowledge)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Write.Exec(`UPDATE links_state SET version = ?`, knowledge.LinksVersion-1); err != nil {
				b.Fatal(err)
			}
		}
		return root
	}
	for _, c := range []struct {
		name       string
		olderLinks bool
	}{{"1Mevents", false}, {"1Mevents-older-links", true}} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				b.StopTimer()
				root := fresh(b, c.olderLinks)
				b.StartTimer()
				took = append(took, coldStart(b, bin, root))
			}
			b.ReportMetric(p50(took), "ms-p50")
		})
	}
	b.Run("again", func(b *testing.B) {
		root := fresh(b, false)
		// A first server trims the history to the cap, and stops.
		s, err := startServer(bin, root)
		if err != nil {
			b.Fatal(err)
		}
		if err := waitForEvents(root, knowledge.MaxEvents+1000); err != nil {
			s.stop()
			b.Fatal(err)
		}
		if err := s.stop(); err != nil {
			b.Fatal(err)
		}
		var took []time.Duration
		for b.Loop() {
			took = append(took, coldStart(b, bin, root))
		}
		b.ReportMetric(p50(took), "ms-p50")
	})
}

// coldStart starts bin serving root and answers how long it took from
// the start of the process to the first 200 from /healthz; the server is
// stopped, untimed, before it returns.
func coldStart(b *testing.B, bin, root string) time.Duration {
	began := time.Now()
	s, err := startServer(bin, root)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		b.StopTimer()
		if err := s.stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}()
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(began)
			}
		}
		if time.Since(began) > time.Minute {
			b.Fatalf("/healthz did not answer 200 within a minute: %v", err)
		}
	}
}

// copyFolder copies the files under from into to, keeping their layout,
// and waits until they are on the disk: a start timed next must not share
// the disk with the copy's writeback.
func copyFolder(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			return err
		}
		if err := dst.Sync(); err != nil {
			dst.Close()
			return err
		}
		return dst.Close()
	})
}

// waitForEvents waits, up to five minutes, until the knowledge store
// under root holds at most max events.
func waitForEvents(root string, max int) error {
	db, err := migrations.OpenReadOnly(filepath.Join(root, "launcher", "knowledge.sqlite"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var n int
		if err := db.Read.Get(&n, `SELECT count(*) FROM events`); err != nil {
			return err
		}
		if n <= max {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the store still holds %d events", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
