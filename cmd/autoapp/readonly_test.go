package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAReadOnlyCommandRefusesAFolderWithoutDataAndCreatesNothing: a
// mistyped --root is refused with a sentence, and no data folder appears.
func TestAReadOnlyCommandRefusesAFolderWithoutDataAndCreatesNothing(t *testing.T) {
	for _, args := range [][]string{
		{"intent", "list"},
		{"intent", "show", "1"},
		{"knowledge", "list"},
		{"knowledge", "export"},
		{"intervention", "inspect", "--intent", "1"},
		{"mcp"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "mistyped")
			code, _, stderr := runCLI(t, "", append(args, "--root", root)...)
			if code == 0 || !strings.Contains(stderr, "There is no Autoapp data in "+root+".") {
				t.Fatalf("exit %d, stderr %q; want the refusal", code, stderr)
			}
			oneSentence(t, stderr)
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Fatalf("the command made %s (%v)", root, err)
			}
		})
	}
}

// TestAStoreReachedThroughASymlinkIsRefused: the inbox and the stores are
// real files of the data folder, never links.
func TestAStoreReachedThroughASymlinkIsRefused(t *testing.T) {
	real := t.TempDir()
	if code, _, stderr := runCLI(t, "a-good-long-password\na-good-long-password\n", "owner", "set", "--root", real, "--name", "Ada"); code != 0 {
		t.Fatalf("owner set: %d %s", code, stderr)
	}
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(real, "launcher"), filepath.Join(root, "launcher")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "intervention", "submit", "--root", root, "--intent", "1", "--request-id", "r1", "--kind", "pause", "--json")
	if code != 2 || !strings.Contains(stdout, "is a symbolic link") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the symlink refused", code, stdout, stderr)
	}
}

// TestInterventionWithJSONReportsAFlagErrorAsJSON: with --json, every
// refusal is JSON on stdout, a flag it cannot read included; -h is usage.
func TestInterventionWithJSONReportsAFlagErrorAsJSON(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "intervention", "submit", "--json", "--bogus")
	var e struct {
		OK    bool `json:"ok"`
		Error struct{ Code, Message string }
	}
	if code != 2 || json.Unmarshal([]byte(stdout), &e) != nil || e.OK || e.Error.Code != "invalid" || !strings.Contains(e.Error.Message, "bogus") {
		t.Fatalf("exit %d, stdout %q; want the flag error as JSON", code, stdout)
	}
	if code, _, stderr := runCLI(t, "", "intervention", "submit", "-h"); code != 0 || !strings.Contains(stderr, "-request-id") {
		t.Fatalf("-h: exit %d, %q; want usage and 0", code, stderr)
	}
}

// freshRoot is a data folder whose stores exist and hold nothing yet, as
// the first serve leaves it.
func freshRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestHelpOnEverySubcommandIsUsageAndExitZero(t *testing.T) {
	for _, args := range [][]string{{"serve", "-h"}, {"owner", "set", "-h"}, {"intent", "show", "--help"},
		{"knowledge", "list", "-h"}, {"intervention", "inspect", "-h"}, {"backup", "-h"}, {"restore", "-h"}, {"mcp", "-h"}} {
		if code, stdout, stderr := runCLI(t, "", args...); code != 0 || !strings.Contains(stdout+stderr, "-root") {
			t.Errorf("%s: exit %d, %q %q; want usage and 0", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

// TestInspectMigratesNothing: inspect reads the inbox as it is. Given the
// store of an older launcher (one migration behind), it leaves it so; a
// migrating open would change the schema under a server still running it.
func TestInspectMigratesNothing(t *testing.T) {
	root := freshRoot(t)
	path := filepath.Join(root, "launcher", "intents.sqlite")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE tasks DROP COLUMN rev_before`, `UPDATE schema_migrations SET version = 9`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", "1")
	db, err = sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int
	if err := db.QueryRow(`SELECT version FROM schema_migrations`).Scan(&version); err != nil || version != 9 {
		t.Errorf("after inspect the store is at version %d (%v), want 9 as it was", version, err)
	}
}
