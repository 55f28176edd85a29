package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"autoapp/cmd/autoapp/backup"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/notice"
	"autoapp/intent/plan"
	"autoapp/intent/spend"
	"autoapp/intent/timetest"
	"autoapp/knowledge"
	"autoapp/migrations"
)

const (
	backupOwner    = "Ada"
	backupPassword = "a long enough password"
	backupKey      = "sk-backup-test-0123456789"
	// distillAsked is what the launcher asks the Settings model about a
	// case a turn resolved.
	distillAsked = "A failure the host saw has been resolved."
)

// headingTask is the one task of the site's intents: the home page says
// Hello notes.
func headingTask() plan.Task {
	return plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5, Risk: "normal",
		Reasoning: "low", Summary: "The home page greets notes readers.", Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Read the heading."}}
}

// headingTurn is the builder's turn that completes headingTask, the task
// slug: the
// example, the line, the cycle, done; hold, when set, holds the cycle's
// request at the scripted model.
func headingTurn(slug string, hold func()) []scripted.Reply {
	example, _ := json.Marshal(map[string]any{"title": "The home page says Hello notes", "steps": []map[string]any{
		{"method": "GET", "path": "/", "expect": map[string]any{"status": 200, "contains": []string{"Hello notes"}}}}})
	change, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": "acceptance/" + plan.ExampleID(slug, 1) + ".json",
		"action": "create", "content": string(example)}}})
	edit, _ := json.Marshal(map[string]any{"path": "site/index.html", "hunks": []map[string]string{{"find": "<h1>A new site</h1>",
		"replace": "<h1>A new site</h1>\n    <p>Hello notes</p>"}}})
	return []scripted.Reply{
		{ToolCalls: []scripted.Call{{Name: "source_change", Args: string(change)}, {Name: "source_edit", Args: string(edit)}}},
		{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}, Before: hold},
		{Text: "Done."},
	}
}

// backupRoot is replayRoot (the application notes with a stopped intent
// whose task failed, its cases and lessons) with the lesson replayed and
// confirmed, a lesson the owner wrote, the owner, the application site
// with an intent a real run delivered and one submitted for the held run,
// the providers' key, prices, limits and a webhook. It answers the
// scripted model, the submitted intent and its task's slug.
func backupRoot(t *testing.T) (root string, model *scripted.Server, held int64, heldSlug string) {
	t.Helper()
	root, model, caseID, lessonID, _ := replayRoot(t)
	model.Always(scripted.Contains(distillAsked), scripted.Reply{Text: `{"explanation":"The check failed until the page said it.","knowable":"specific","lesson":"","same_as":0}`})
	scriptReplays(model, 1)
	c, l := strconv.FormatInt(caseID, 10), strconv.FormatInt(lessonID, 10)
	if code, out, errOut := runCLI(t, "", "knowledge", "replay", c, "--root", root, "--runs", "1"); code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "", "knowledge", "confirm", l, "--root", root, "--yes", "--by", "Grace"); code != 0 {
		t.Fatalf("confirm: exit %d\n%s%s", code, out, errOut)
	}

	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	written, err := st.Lessons.Write(ctx, "Read the task's criteria before the first edit.", backupOwner, knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Owners.Create(ctx, backupOwner, backupPassword, backupPassword); err != nil {
		t.Fatal(err)
	}
	if err := st.Providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), APIKey: backupKey, On: true}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Spend.SavePrices([]spend.Row{{Model: "scripted:builder", Input: "0.5", Output: "1.5"}}, spend.CapsForm{Day: "20"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Limits.Save("9", "25"); err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	if _, err := st.Webhook.Book.Save(notice.Form{URL: hook.URL + "/hook", Kinds: []string{string(intent.NoticeDone)}, Format: notice.FormatJSON}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apps.CreateFromTemplate(ctx, "site", "Site", "static"); err != nil {
		t.Fatal(err)
	}
	plan := func() (int64, string) {
		in, err := st.Backlog.OpenDraft(ctx, "site", "Greet the notes readers.", intent.Analysis{Restated: []string{"The home page greets them."}})
		if err != nil {
			t.Fatal(err)
		}
		task, err := st.Backlog.AddTask(ctx, in.ID, headingTask())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Backlog.Submit(ctx, in.ID); err != nil {
			t.Fatal(err)
		}
		return in.ID, task.Slug
	}
	done, slug := plan()
	model.On(scripted.RunID(fmt.Sprintf("intent-%d-%s-a1", done, slug)), headingTurn(slug, nil)...)
	if err := st.Runs.Start(ctx, done); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, time.Minute, "the site's intent to be done", func() bool {
		d, err := st.Backlog.Get(ctx, done)
		running := len(st.Runs.Running()) > 0
		return err == nil && d.Status != intent.IntentRunning && !running
	})
	if d, _ := st.Backlog.Get(ctx, done); d.Status != intent.IntentDone {
		t.Fatalf("the site's intent is %s (%q), want done", d.Status, d.StopReason)
	}
	if _, err := st.Deliveries.Get(ctx, done); err != nil {
		t.Fatalf("the done intent has no delivery: %v", err)
	}
	if _, err := st.Lessons.Get(ctx, written); err != nil {
		t.Fatal(err)
	}
	held, heldSlug = plan()
	return root, model, held, heldSlug
}

// served is `autoapp serve` of the real binary over a data folder.
type served struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

var servingAtLine = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)

// serveRoot starts bin serving root on a free port; it is stopped when
// the test ends, if it was not before.
func serveRoot(t *testing.T, bin, root string) *served {
	t.Helper()
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
	s := &served{cmd: cmd, done: make(chan struct{})}
	base := make(chan string, 1)
	go func() {
		defer close(s.done)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := servingAtLine.FindStringSubmatch(lines.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.base = <-base:
		return s
	case <-s.done:
	case <-time.After(time.Minute):
	}
	t.Fatalf("the server did not say where it serves: %s", stderr.String())
	return nil
}

// stop ends the server as Ctrl-C would and waits for it.
func (s *served) stop(t *testing.T) {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("the server ended with %v", err)
	}
}

// console is a client signed in to a server as the owner, through the
// sign-in page as a browser is.
type console struct {
	base   string
	client *http.Client
}

func signInTo(t *testing.T, base string) *console {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &console{base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.get(t, "/signin")
	if status := c.post(t, "/signin", url.Values{"name": {backupOwner}, "password": {backupPassword}}); status != http.StatusSeeOther {
		t.Fatalf("the sign-in answered %d", status)
	}
	return c
}

func (c *console) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := c.client.Get(c.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// post sends form with the CSRF token from the page's cookie.
func (c *console) post(t *testing.T, path string, form url.Values) int {
	t.Helper()
	u, _ := url.Parse(c.base)
	for _, k := range c.client.Jar.Cookies(u) {
		if k.Name == "autoapp_csrf" {
			form.Set("_csrf", k.Value)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// listings are what the CLI prints of root, and what git says of each
// workspace, by what printed it; the root's own path is written <root>.
func listings(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	cli := func(args ...string) string {
		code, stdout, stderr := runCLI(t, "", append(args, "--root", root)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		// An export says when it was made.
		out[strings.Join(args, " ")] = exportedAt.ReplaceAllString(strings.ReplaceAll(stdout, root, "<root>"), "exported <when>")
		return stdout
	}
	var list []intentJSON
	if err := json.Unmarshal([]byte(cli("intent", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, in := range list {
		cli("intent", "show", strconv.FormatInt(in.ID, 10), "--json")
	}
	var lessons []knowledge.Lesson
	if err := json.Unmarshal([]byte(cli("knowledge", "list", "--json")), &lessons); err != nil {
		t.Fatal(err)
	}
	for _, l := range lessons {
		cli("knowledge", "show", strconv.FormatInt(l.ID, 10), "--json")
	}
	cli("knowledge", "export")
	cli("knowledge", "export", "--json")
	workspaces, _ := filepath.Glob(filepath.Join(root, "apps", "*", "workspace"))
	for _, ws := range workspaces {
		for _, args := range [][]string{
			{"log", "--all", "--format=%H %P %an <%ae> %ad %cn %cd %s", "--date=raw"},
			{"for-each-ref", "--format=%(refname) %(objectname)"},
			{"symbolic-ref", "HEAD"},
		} {
			cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("git %v in %s: %v", args, ws, err)
			}
			rel, _ := filepath.Rel(root, ws)
			out[rel+": git "+args[0]] = string(b)
		}
	}
	return out
}

// tables are every row of every table of the store at path, each table's
// rows as sorted lines.
func tables(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, name := range names {
		// The rowid too, where a table has one that is not its key:
		// task_runs is read in its order.
		q := `SELECT * FROM "` + name + `"`
		if name == "task_runs" {
			q = `SELECT rowid, * FROM task_runs`
		}
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v", v)
			}
			lines = append(lines, b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		slices.Sort(lines)
		out[name] = lines
	}
	return out
}

// wantSameTables fails unless every table of the store restored holds
// what the original held when the backup began (before), give or take
// rows the running server added while it ran (after): before ⊆ restored ⊆
// after, row for row.
func wantSameTables(t *testing.T, store string, before, restored, after map[string][]string) {
	t.Helper()
	for name, rows := range before {
		if !slices.Equal(rows, after[name]) {
			t.Logf("%s: %s changed while the backup was written (%d rows, then %d)", store, name, len(rows), len(after[name]))
		}
		got := restored[name]
		for _, r := range rows {
			if !slices.Contains(got, r) {
				t.Errorf("%s: the restored %s lacks the row\n%s", store, name, r)
			}
		}
		for _, r := range got {
			if !slices.Contains(after[name], r) {
				t.Errorf("%s: the restored %s holds a row the original never did:\n%s", store, name, r)
			}
		}
	}
	for name := range restored {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: the restored store has a table %s the original has not", store, name)
		}
	}
}

// TestABackupTakenWhileServeRunsATurnRestoresTheSameLauncher: the real
// binary serves a root with two applications, a delivered intent, a failed
// one, confirmed lessons and a replay, and holds a builder's turn at the
// model; backup writes the archive meanwhile, a line a part, saying the
// keys are not in it. Restored into a new folder, the CLI prints the same
// listings, git the same history of each workspace, every table holds
// the same rows, and serve opens it and shows the same pages. A damaged
// part is refused by its name, as are a folder that is not empty and an
// archive of a newer store, and each leaves nothing behind.
func TestABackupTakenWhileServeRunsATurnRestoresTheSameLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	root, model, heldIntent, heldSlug := backupRoot(t)
	gate := scripted.NewGate(t)
	model.On(scripted.RunID(fmt.Sprintf("intent-%d-%s-a1", heldIntent, heldSlug)), headingTurn(heldSlug, gate.Hold)...)

	original := serveRoot(t, bin, root)
	c := signInTo(t, original.base)
	if status := c.post(t, fmt.Sprintf("/backlog/intents/%d/run", heldIntent), url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("Run answered %d", status)
	}
	gate.Wait(t) // the turn has committed its first change and waits for the model

	before := listings(t, root)
	if !strings.Contains(before[fmt.Sprintf("intent show %d --json", heldIntent)], `"status": "in-progress"`) {
		t.Fatalf("the held intent's task is not in progress:\n%s", before[fmt.Sprintf("intent show %d --json", heldIntent)])
	}
	storesBefore := map[string]map[string][]string{}
	for _, s := range []string{"intents", "knowledge"} {
		storesBefore[s] = tables(t, filepath.Join(root, "launcher", s+".sqlite"))
	}

	dir := t.TempDir()
	archive := filepath.Join(dir, "autoapp.tar.gz")
	cmd := exec.Command(bin, "backup", "--root", root, "--to", archive)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("backup: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	storesAfter := map[string]map[string][]string{}
	for _, s := range []string{"intents", "knowledge"} {
		storesAfter[s] = tables(t, filepath.Join(root, "launcher", s+".sqlite"))
	}
	if after := listings(t, root); !maps.Equal(after, before) {
		for name := range after {
			if after[name] != before[name] {
				t.Errorf("%s:\n%s", name, firstDifference(before[name], after[name]))
			}
		}
		t.Fatal("the original changed while the backup was written; the comparison stands for nothing")
	}

	m := readManifest(t, archive)
	said := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(said) != len(m.Parts)+1 {
		t.Fatalf("backup said %d lines for %d parts:\n%s", len(said), len(m.Parts), stderr.String())
	}
	for i, p := range m.Parts {
		if !strings.Contains(said[i], ": "+p.Name+", ") {
			t.Errorf("progress line %d is %q, want one naming %s", i+1, said[i], p.Name)
		}
	}
	if last := said[len(said)-1]; !strings.Contains(last, "API keys are not in the archive") || !strings.Contains(last, "--with-keys") {
		t.Errorf("backup does not say the keys were left out: %q", last)
	}
	for _, want := range []string{"launcher/intents.sqlite", "launcher/knowledge.sqlite", "apps/notes/workspace.bundle", "apps/site/workspace.bundle",
		"apps/site/candidate.json", "launcher/providers.json", "launcher/prices.json", "launcher/limits.json", "launcher/notifications.json"} {
		if !slices.ContainsFunc(m.Parts, func(p backup.Part) bool { return p.Name == want }) {
			t.Errorf("the archive holds no %s", want)
		}
	}
	if m.WithKeys || m.Stores["intents"].Version == 0 || m.Stores["knowledge"].Version == 0 || m.LauncherVersion == "" {
		t.Errorf("the manifest: %+v", m)
	}
	if strings.Contains(string(readPart(t, archive, "launcher/providers.json")), backupKey) {
		t.Error("the key is in the archive made without --with-keys")
	}

	restored := filepath.Join(t.TempDir(), "restored")
	code, out, errOut := runCLI(t, "", "restore", "--from", archive, "--root", restored)
	if code != 0 || !strings.Contains(out, "Restored "+archive+" into "+restored) {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	after := listings(t, restored)
	for name, want := range before {
		if after[name] != want {
			t.Errorf("%s of the restored root:\n%s\nof the original:\n%s", name, after[name], want)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("the restored root has %s, the original not", name)
		}
	}
	for _, s := range []string{"intents", "knowledge"} {
		wantSameTables(t, s, storesBefore[s], tables(t, filepath.Join(restored, "launcher", s+".sqlite")), storesAfter[s])
	}
	for _, app := range []string{"notes", "site"} {
		ws := filepath.Join(restored, "apps", app, "workspace")
		if out, err := exec.Command("git", "-C", ws, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
			t.Errorf("the restored workspace of %s is not clean: %v\n%s", app, err, out)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(restored, "launcher", provider.FileName)); err != nil || strings.Contains(string(raw), backupKey) ||
		!strings.Contains(string(raw), model.URL()) {
		t.Errorf("the restored providers: %v\n%s", err, raw)
	}

	// The pages: the original stops, interrupting the held turn as any
	// stop does; the restored root's first start does the same. The turn
	// the original ended after the backup wrote its usage and what its
	// lessons served, which the spend (Overview) and the lessons' pages
	// count: those are not compared.
	original.stop(t)
	gate.Open()
	pages := []string{fmt.Sprintf("/backlog/intents/%d", heldIntent-1), "/backlog/intents/1", "/knowledge/cases", "/board"}
	shown := func(root string) map[string]string {
		s := serveRoot(t, bin, root)
		defer s.stop(t)
		c := signInTo(t, s.base)
		got := map[string]string{}
		for _, p := range pages {
			status, body := c.get(t, p)
			if status != http.StatusOK {
				t.Fatalf("GET %s answered %d", p, status)
			}
			got[p] = normalisePage(body, s.base)
		}
		return got
	}
	was, is := shown(root), shown(restored)
	for _, p := range pages {
		if was[p] != is[p] {
			t.Errorf("GET %s differs between the original and the restored root:\n%s", p, firstDifference(was[p], is[p]))
		}
	}

	t.Run("with the keys", func(t *testing.T) {
		keyed := filepath.Join(dir, "keyed.tar")
		code, _, errOut := runCLI(t, "", "backup", "--root", root, "--to", keyed, "--with-keys")
		if code != 0 || !strings.Contains(errOut, "The archive holds the providers' API keys (1)") {
			t.Fatalf("backup --with-keys: exit %d\n%s", code, errOut)
		}
		again := filepath.Join(t.TempDir(), "r")
		if code, _, errOut := runCLI(t, "", "restore", "--from", keyed, "--root", again); code != 0 {
			t.Fatalf("restore: exit %d\n%s", code, errOut)
		}
		if raw, err := os.ReadFile(filepath.Join(again, "launcher", provider.FileName)); err != nil || !strings.Contains(string(raw), backupKey) {
			t.Fatalf("the key did not come back: %v\n%s", err, raw)
		}
	})

	t.Run("a damaged part is refused by its name", func(t *testing.T) {
		for _, part := range []string{"apps/site/workspace.bundle", "launcher/knowledge.sqlite", "launcher/prices.json"} {
			damaged := filepath.Join(t.TempDir(), "damaged.tar")
			rewrite(t, archive, damaged, func(name string, data []byte) []byte {
				if name == part {
					data = bytes.Clone(data)
					data[len(data)/2] ^= 0xff
				}
				return data
			})
			target := filepath.Join(t.TempDir(), "r")
			code, _, errOut := runCLI(t, "", "restore", "--from", damaged, "--root", target)
			if code != 2 || !strings.Contains(errOut, "the part "+part+" does not match the SHA-256") {
				t.Errorf("%s damaged: exit %d, %q", part, code, errOut)
			}
			refusedInOneSentence(t, errOut)
			leftNothing(t, target)
		}
	})

	t.Run("an archive cut short is refused", func(t *testing.T) {
		raw, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(t.TempDir(), "cut.tar.gz")
		if err := os.WriteFile(cut, raw[:len(raw)*2/3], 0o600); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "r")
		code, _, errOut := runCLI(t, "", "restore", "--from", cut, "--root", target)
		if code != 2 || !strings.Contains(errOut, "The archive is damaged") {
			t.Errorf("exit %d, %q", code, errOut)
		}
		refusedInOneSentence(t, errOut)
		leftNothing(t, target)
	})

	t.Run("a folder that is not empty is refused", func(t *testing.T) {
		target := t.TempDir()
		kept := filepath.Join(target, "notes.txt")
		if err := os.WriteFile(kept, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI(t, "", "restore", "--from", archive, "--root", target)
		if code != 2 || !strings.Contains(errOut, target+" is not empty; restore into a new or an empty folder") {
			t.Errorf("exit %d, %q", code, errOut)
		}
		oneSentence(t, errOut)
		entries, _ := os.ReadDir(target)
		if b, err := os.ReadFile(kept); err != nil || string(b) != "mine" || len(entries) != 1 {
			t.Errorf("the folder was touched: %v, %d entries", err, len(entries))
		}
		if code, _, errOut := runCLI(t, "", "restore", "--from", archive, "--root", t.TempDir()); code != 0 {
			t.Errorf("an empty folder was refused: exit %d: %s", code, errOut)
		}
	})

	t.Run("an archive of a newer store is refused", func(t *testing.T) {
		latest, err := migrations.Latest(migrations.Knowledge)
		if err != nil {
			t.Fatal(err)
		}
		newer := filepath.Join(t.TempDir(), "newer.tar")
		rewrite(t, archive, newer, func(name string, data []byte) []byte {
			if name != backup.ManifestName {
				return data
			}
			var m backup.Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			m.Stores["knowledge"] = backup.StoreVersion{Version: latest + 1}
			m.LauncherVersion = "v9.0.0"
			b, _ := json.Marshal(m)
			return b
		})
		target := filepath.Join(t.TempDir(), "r")
		code, _, errOut := runCLI(t, "", "restore", "--from", newer, "--root", target)
		want := fmt.Sprintf("The archive's knowledge store is at migration %d, newer than %d, the newest this launcher knows; restore it with the launcher that wrote it (v9.0.0) or a later one.", latest+1, latest)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, %q; want %q", code, errOut, want)
		}
		refusedInOneSentence(t, errOut)
		leftNothing(t, target)
	})

	t.Run("refusals of the arguments", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"backup", "--root", root}, "autoapp backup: give --to, the archive to write."},
			{[]string{"backup", "--root", root, "--to", archive}, archive + " is there already; give --to the name of a new file."},
			{[]string{"backup", "--root", filepath.Join(dir, "nothing"), "--to", filepath.Join(dir, "x.tar")}, "There is no Autoapp data in"},
			{[]string{"restore", "--from", archive}, "autoapp restore: give --from, the archive, and --root"},
			{[]string{"restore", "--from", filepath.Join(dir, "none.tar"), "--root", filepath.Join(dir, "r")}, "The archive " + filepath.Join(dir, "none.tar") + " cannot be opened"},
			{[]string{"restore", "--from", filepath.Join(root, "launcher", "limits.json"), "--root", filepath.Join(dir, "r")}, "is not an Autoapp backup"},
		} {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
			}
			oneSentence(t, errOut)
		}
	})
}

// readManifest is the manifest at the head of the archive.
func readManifest(t *testing.T, archive string) backup.Manifest {
	t.Helper()
	var m backup.Manifest
	if err := json.Unmarshal(readPart(t, archive, backup.ManifestName), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// readPart is the entry name of the archive.
func readPart(t *testing.T, archive, name string) []byte {
	t.Helper()
	var found []byte
	rewrite(t, archive, "", func(n string, data []byte) []byte {
		if n == name {
			found = data
		}
		return data
	})
	if found == nil {
		t.Fatalf("the archive holds no %s", name)
	}
	return found
}

// rewrite reads every entry of the archive at from, through change, and
// writes them as a plain tar to to (nowhere when to is "").
func rewrite(t *testing.T, from, to string, change func(name string, data []byte) []byte) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(from, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		data = change(h.Name, data)
		h.Size = int64(len(data))
		tw.WriteHeader(h)
		tw.Write(data)
	}
	tw.Close()
	if to != "" {
		if err := os.WriteFile(to, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// leftNothing fails unless a refused restore left target as it was
// (absent) and nothing beside it.
func leftNothing(t *testing.T, target string) {
	t.Helper()
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("the refused restore left %s (%v)", target, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	for _, e := range entries {
		if strings.Contains(e.Name(), "restore-partial") {
			t.Errorf("the refused restore left %s", e.Name())
		}
	}
}

var (
	exportedAt = regexp.MustCompile(`exported \d{4}-\d\d-\d\d \d\d:\d\d|"exportedAt": "[^"]*"`)
	csrfField  = regexp.MustCompile(`name="(_csrf|op)" value="[^"]*"`)
	csrfHeader = regexp.MustCompile(`X-Csrf-Token&#34;:&#34;[^&]*&#34;`)
)

// normalisePage is a page with what differs between two servers of the
// same data taken out: the CSRF token, the operation ids of the forms and
// the server's own address.
func normalisePage(body, base string) string {
	body = strings.ReplaceAll(body, base, "<base>")
	body = strings.ReplaceAll(body, strings.TrimPrefix(base, "http://"), "<host>")
	body = csrfField.ReplaceAllString(body, `name="$1" value="<token>"`)
	return csrfHeader.ReplaceAllString(body, `X-Csrf-Token&#34;:&#34;<csrf>&#34;`)
}

// firstDifference is the text around where a and b first differ.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return "(no difference)"
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n  original: …%.400s\n  restored: …%.400s", i, a[from:], b[from:])
}

// refusedInOneSentence fails unless stderr ends in one sentence saying
// why, after any progress lines, with no Go panic or trace.
func refusedInOneSentence(t *testing.T, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	oneSentence(t, lines[len(lines)-1])
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "checked ") {
			t.Errorf("stderr holds more than progress and one sentence:\n%s", stderr)
		}
	}
}
