package main

import (
	"context"
	"strings"
	"testing"
)

// TestEveryMistakeIsOneSentenceWithItsExitCode walks the refusals of every
// verb that reads its own arguments: a usage mistake is exit 2 and one
// sentence naming the command; what a read finds nothing of is said on
// stdout with exit 0.
func TestEveryMistakeIsOneSentenceWithItsExitCode(t *testing.T) {
	empty := freshRoot(t)
	appOnly := freshRoot(t)
	st, err := open(appOnly)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apps.CreateFromTemplate(context.Background(), "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		// stdout or stderr holds the sentence; stderr is then that one
		// sentence.
		stdout, stderr string
	}{
		// knowledge
		{name: "knowledge alone", args: []string{"knowledge"}, code: 2, stderr: "Usage:\n  autoapp knowledge list"},
		{name: "knowledge help", args: []string{"knowledge", "help"}, code: 0, stdout: "Usage:\n  autoapp knowledge list"},
		{name: "knowledge of an unknown verb", args: []string{"knowledge", "frobnicate"}, code: 2,
			stderr: `autoapp knowledge: "frobnicate" is not a subcommand; use list, show, replay, evaluate, confirm, retire, export or links.`},
		{name: "list with two filters", args: []string{"knowledge", "list", "--provisional", "--confirmed", "--root", empty}, code: 2,
			stderr: "autoapp knowledge list: give at most one of --provisional, --confirmed, --review and --method."},
		{name: "list with a flag it does not take", args: []string{"knowledge", "list", "--with", "1"}, code: 2,
			stderr: "autoapp knowledge list: flag provided but not defined: -with; see `autoapp knowledge help`."},
		{name: "show with a flag of replay", args: []string{"knowledge", "show", "1", "--runs", "2"}, code: 2,
			stderr: "autoapp knowledge show: flag provided but not defined: -runs; see `autoapp knowledge help`."},
		{name: "retire with confirm's --yes", args: []string{"knowledge", "retire", "1", "--yes"}, code: 2,
			stderr: "autoapp knowledge retire: flag provided but not defined: -yes; see `autoapp knowledge help`."},
		{name: "list with an argument", args: []string{"knowledge", "list", "extra"}, code: 2,
			stderr: "autoapp knowledge list: unexpected argument \"extra\"; see `autoapp knowledge help`."},
		{name: "show with two ids", args: []string{"knowledge", "show", "3", "--json", "4"}, code: 2,
			stderr: "autoapp knowledge show: unexpected argument \"4\"; see `autoapp knowledge help`."},
		{name: "retire without an id", args: []string{"knowledge", "retire", "--by", "Ada"}, code: 2,
			stderr: "autoapp knowledge retire: give the lesson's id, as `knowledge list` prints it."},
		{name: "confirm of id 0", args: []string{"knowledge", "confirm", "0"}, code: 2,
			stderr: "autoapp knowledge confirm: give the lesson's id, as `knowledge list` prints it."},
		{name: "replay of a word", args: []string{"knowledge", "replay", "tags"}, code: 2,
			stderr: "autoapp knowledge replay: give the case's id, as the Knowledge page or `knowledge show` prints it."},
		{name: "replay with a negative lesson", args: []string{"knowledge", "replay", "1", "--with", "-1"}, code: 2,
			stderr: "autoapp knowledge replay: give --runs between 1 and 10, and --with a lesson's id."},
		{name: "show of a lesson that is not there", args: []string{"knowledge", "show", "99", "--root", empty}, code: 2,
			stderr: "autoapp knowledge show: There is no lesson 99."},
		{name: "confirm of a lesson that is not there", args: []string{"knowledge", "confirm", "99", "--yes", "--root", empty}, code: 2,
			stderr: "autoapp knowledge confirm: There is no lesson 99."},
		{name: "retire of a lesson that is not there", args: []string{"knowledge", "retire", "99", "--root", empty}, code: 2,
			stderr: "autoapp knowledge retire: There is no lesson 99."},
		{name: "list of no lessons", args: []string{"knowledge", "list", "--root", empty}, stdout: "No lessons.\n"},
		{name: "list of no provisional lessons", args: []string{"knowledge", "list", "--provisional", "--root", empty}, stdout: "No provisional lessons.\n"},
		{name: "list of no confirmed lessons", args: []string{"knowledge", "list", "--confirmed", "--root", empty}, stdout: "No confirmed lessons.\n"},
		{name: "list of no lessons needing review", args: []string{"knowledge", "list", "--review", "--root", empty}, stdout: "No lessons needing review.\n"},
		{name: "list of no method notes", args: []string{"knowledge", "list", "--method", "--root", empty},
			stdout: "No lessons that say the way of working was unclear.\n"},
		{name: "links of an empty index", args: []string{"knowledge", "links", "--root", empty},
			stdout: "The index holds no links; --rebuild builds it from the stores.\n"},
		{name: "links of an application in an empty index", args: []string{"knowledge", "links", "--app", "notes", "--root", empty},
			stdout: "The index holds no links of notes; --rebuild builds it from the stores.\n"},
		{name: "links rebuilt from empty stores", args: []string{"knowledge", "links", "--rebuild", "--root", empty},
			stdout: "The index holds no links.\n"},
		{name: "links as JSON of an empty index", args: []string{"knowledge", "links", "--json", "--root", empty}, stdout: "[]\n"},

		// intent
		{name: "intent alone", args: []string{"intent"}, code: 2,
			stderr: "autoapp intent: use `intent list [--app ID] [--json]` or `intent show N [--json]`."},
		{name: "intent of an unknown verb", args: []string{"intent", "remove"}, code: 2,
			stderr: "autoapp intent: use `intent list [--app ID] [--json]` or `intent show N [--json]`."},
		{name: "intent list with no application", args: []string{"intent", "list", "--root", empty}, stdout: "There are no applications yet.\n"},
		{name: "intent list with no intent", args: []string{"intent", "list", "--root", appOnly}, stdout: "No application has an intent yet.\n"},
		{name: "intent list of an application with no intent", args: []string{"intent", "list", "--app", "notes", "--root", appOnly},
			stdout: "notes has no intents yet.\n"},
		{name: "intent list of an unknown application", args: []string{"intent", "list", "--app", "nope", "--root", empty}, code: 2,
			stderr: `autoapp intent list: There is no application called "nope".`},
		{name: "intent list as JSON with no intent", args: []string{"intent", "list", "--json", "--root", appOnly}, stdout: "[]\n"},
		{name: "intent show of an intent that is not there", args: []string{"intent", "show", "7", "--root", empty}, code: 2,
			stderr: "autoapp intent show: There is no intent 7."},

		// intervention
		{name: "intervention alone", args: []string{"intervention"}, code: 2,
			stderr: "autoapp intervention: use `intervention submit --intent N --request-id ID --kind feedback|pause [--text T] [--json]` or `intervention inspect --intent N [--json]`."},
		{name: "inspect without an intent", args: []string{"intervention", "inspect", "--root", empty}, code: 2,
			stderr: "autoapp intervention inspect: Name the intent with --intent N, as `autoapp intent list` prints it."},
		{name: "inspect with an argument", args: []string{"intervention", "inspect", "--intent", "1", "extra"}, code: 2,
			stderr: `autoapp intervention inspect: Unexpected argument "extra"; every value goes with its flag.`},
		{name: "inspect of an intent that is not there", args: []string{"intervention", "inspect", "--intent", "4", "--root", empty}, code: 2,
			stderr: "autoapp intervention inspect: There is no intent 4."},
		{name: "inspect as JSON without an intent", args: []string{"intervention", "inspect", "--json"}, code: 2,
			stdout: `"message": "Name the intent with --intent N, as ` + "`autoapp intent list`" + ` prints it."`},
		{name: "submit to an intent that is not there", args: []string{"intervention", "submit", "--intent", "4", "--request-id", "r1", "--kind", "pause", "--root", empty}, code: 2,
			stderr: "autoapp intervention submit: There is no intent 4."},

		// owner set
		{name: "owner set of no owner without a name", args: []string{"owner", "set", "--root", empty}, code: 2,
			stderr: "autoapp owner set: no owner exists yet, so give a name with --name."},
		{name: "owner set without a password", args: []string{"owner", "set", "--name", "Ada", "--root", empty}, code: 2,
			stderr: "autoapp owner set: the password was not given; type it twice, or pipe it in as two lines."},
		{name: "owner set with the password once", args: []string{"owner", "set", "--name", "Ada", "--root", empty}, stdin: "a-good-long-password\n", code: 2,
			stderr: "autoapp owner set: the password was not given; type it twice, or pipe it in as two lines."},
		{name: "owner set with a short password", args: []string{"owner", "set", "--name", "Ada", "--root", empty}, stdin: "short\nshort\n", code: 2,
			stderr: "autoapp owner set: The password must be at least 12 characters long."},

		// serve
		{name: "serve with an argument", args: []string{"serve", "extra"}, code: 2, stderr: `autoapp serve: unexpected argument "extra".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
			if tt.stdout != "" && !strings.Contains(stdout, tt.stdout) {
				t.Fatalf("stdout %q, want it to say %q (stderr %q)", stdout, tt.stdout, stderr)
			}
			if tt.stderr != "" {
				if !strings.Contains(stderr, tt.stderr) {
					t.Fatalf("stderr %q, want it to say %q (stdout %q)", stderr, tt.stderr, stdout)
				}
				if !strings.HasPrefix(tt.stderr, "Usage:") {
					oneSentence(t, stderr)
				}
			}
			if tt.code == 0 && stderr != "" {
				t.Fatalf("a read that found nothing said on stderr: %q", stderr)
			}
		})
	}
}
