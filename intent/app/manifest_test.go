package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
)

// notAManifest begins the sentence for a file that cannot be read as a manifest.
const notAManifest = "autoapp.json is not valid JSON for a manifest: "

func TestAValidManifestHasNoProblems(t *testing.T) {
	tests := []struct {
		name, manifest string
		acceptance     string
		wait           time.Duration
	}{
		{
			name: "static preview",
			manifest: `{
				"name": "Static site",
				"build": [{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "10s"}],
				"preview": {"static": "site"},
				"acceptance": "acceptance/",
				"artifacts": ["site/index.html", "site/style.css"]
			}` + "\n\n",
			acceptance: "acceptance",
			wait:       app.DefaultStartWait,
		},
		{
			name: "command preview",
			manifest: `{
				"name": "Notes service",
				"build": [
					{"name": "vet", "command": ["go", "vet", "./..."], "timeout": "2m"},
					{"name": "compile", "command": ["go", "build", "-o", "bin/notes", "."], "timeout": "30m"}
				],
				"preview": {"command": ["bin/notes", "--port", "$PORT"], "startTimeout": "45s"},
				"acceptance": "checks/./http/",
				"artifacts": ["bin/notes"]
			}`,
			acceptance: "checks/http",
			wait:       45 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := app.ParseManifest([]byte(tt.manifest))
			if len(problems) > 0 {
				t.Fatalf("a valid manifest has problems: %v", problems)
			}
			if got := m.AcceptanceDir(); got != tt.acceptance {
				t.Errorf("AcceptanceDir = %q, want %q", got, tt.acceptance)
			}
			if got := m.Preview.StartWait(); got != tt.wait {
				t.Errorf("the preview may take %s to answer, want %s", got, tt.wait)
			}
		})
	}
}

func TestTheAcceptanceFolderIsAcceptanceWhenTheManifestNamesNone(t *testing.T) {
	m, problems := app.ParseManifest([]byte(`{
		"name": "Site",
		"build": [{"name": "check", "command": ["true"], "timeout": "5s"}],
		"preview": {"static": "site"}
	}`))
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if got := m.AcceptanceDir(); got != "acceptance" {
		t.Fatalf("AcceptanceDir = %q, want %q", got, "acceptance")
	}
}

func TestEveryManifestProblemIsNamedByItsField(t *testing.T) {
	// stage is a build stage that is fine on its own.
	const stage = `{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "10s"}`
	tests := []struct {
		name     string
		manifest string
		want     refusal.Problems
	}{
		{
			name:     "missing name",
			manifest: `{"build": [` + stage + `], "preview": {"static": "site"}}`,
			want:     refusal.Problems{{Field: "name", Message: "give the application a name"}},
		},
		{
			name:     "blank name",
			manifest: `{"name": "   ", "build": [` + stage + `], "preview": {"static": "site"}}`,
			want:     refusal.Problems{{Field: "name", Message: "give the application a name"}},
		},
		{
			name:     "a stage without name, command or timeout",
			manifest: `{"name": "Site", "build": [{}], "preview": {"static": "site"}}`,
			want: refusal.Problems{
				{Field: "build[0].name", Message: "give the stage a name"},
				{Field: "build[0].command", Message: "give the command as a list: the program, then its arguments"},
				{Field: "build[0].timeout", Message: `give a timeout such as "2m"`},
			},
		},
		{
			name: "two stages with one name",
			manifest: `{"name": "Site", "build": [` + stage + `, ` +
				`{"name": "check", "command": ["true"], "timeout": "5s"}], "preview": {"static": "site"}}`,
			want: refusal.Problems{{Field: "build[1].name", Message: `"check" names two stages`}},
		},
		{
			name: "a timeout that is not a duration",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": "forever"}],` +
				` "preview": {"static": "site"}}`,
			want: refusal.Problems{{Field: "build[0].timeout", Message: `"forever" is not a duration such as "90s" or "2m"`}},
		},
		{
			name: "a timeout written as a number",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": 5}],` +
				` "preview": {"static": "site"}}`,
			want: refusal.Problems{{Field: "build[0].timeout", Message: `write a duration as a string such as "90s" or "2m"`}},
		},
		{
			name: "a timeout over 30m",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": "31m"}],` +
				` "preview": {"static": "site"}}`,
			want: refusal.Problems{{Field: "build[0].timeout", Message: "at most 30m"}},
		},
		{
			name:     "a preview with both a command and a static folder",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"command": ["bin/site"], "static": "site"}}`,
			want:     refusal.Problems{{Field: "preview", Message: "give either a command or a static folder, not both"}},
		},
		{
			name:     "a preview with neither",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {}}`,
			want:     refusal.Problems{{Field: "preview", Message: "give a command that listens on $PORT, or a static folder"}},
		},
		{
			name:     "a static folder that leaves the workspace",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"static": "site/../../public"}}`,
			want:     refusal.Problems{{Field: "preview.static", Message: `"site/../../public" leaves the workspace`}},
		},
		{
			name:     "an absolute static folder",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"static": "/srv/site"}}`,
			want:     refusal.Problems{{Field: "preview.static", Message: `"/srv/site" must be a relative path with / between folders`}},
		},
		{
			name:     "a static folder inside .git",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"static": ".git/hooks"}}`,
			want:     refusal.Problems{{Field: "preview.static", Message: `".git/hooks" is inside .git`}},
		},
		{
			name:     "an acceptance folder that leaves the workspace",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"static": "site"}, "acceptance": "../checks"}`,
			want:     refusal.Problems{{Field: "acceptance", Message: `"../checks" leaves the workspace`}},
		},
		{
			name: "the second artifact leaves the workspace",
			manifest: `{"name": "Site", "build": [` + stage + `], "preview": {"static": "site"},` +
				` "artifacts": ["site/index.html", "../secrets.txt"]}`,
			want: refusal.Problems{{Field: "artifacts[1]", Message: `"../secrets.txt" leaves the workspace`}},
		},
		{
			name: "several problems at once",
			manifest: `{"build": [{"name": "check", "timeout": "forever"}],` +
				` "preview": {"command": ["bin/site"], "static": "site"}, "artifacts": ["/etc/passwd"]}`,
			want: refusal.Problems{
				{Field: "name", Message: "give the application a name"},
				{Field: "build[0].command", Message: "give the command as a list: the program, then its arguments"},
				{Field: "build[0].timeout", Message: `"forever" is not a duration such as "90s" or "2m"`},
				{Field: "preview", Message: "give either a command or a static folder, not both"},
				{Field: "artifacts[0]", Message: `"/etc/passwd" must be a relative path with / between folders`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := app.ParseManifest([]byte(tt.manifest))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("problems:\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestWhatIsNotAManifestIsRefusedInOneSentence(t *testing.T) {
	tests := []struct {
		name, manifest string
		// says is a part of the sentence that tells the owner what to fix.
		says string
	}{
		{
			name: "an unknown field",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": "5s"}],` +
				` "preview": {"static": "site"}, "deploy": "production"}`,
			says: `"deploy"`,
		},
		{
			name:     "a field of the wrong type",
			manifest: `{"name": ["Site"], "build": [], "preview": {"static": "site"}}`,
			says:     "name should be string, not array",
		},
		{name: "an empty file", manifest: ""},
		{name: "only whitespace", manifest: " \n\t"},
		{
			name:     "not JSON at all",
			manifest: "name: Site\nbuild: []\n",
			says:     "invalid character",
		},
		{
			name: "a stray brace after the manifest",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": "5s"}],` +
				` "preview": {"static": "site"}}}`,
			says: "more after the manifest",
		},
		{
			name: "a second object after the manifest",
			manifest: `{"name": "Site", "build": [{"name": "check", "command": ["true"], "timeout": "5s"}],` +
				` "preview": {"static": "site"}} {"name": "Other"}`,
			says: "more after the manifest",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := app.ParseManifest([]byte(tt.manifest))
			if len(problems) != 1 {
				t.Fatalf("want one problem, got %q", problems)
			}
			p := problems[0]
			if p.Field != "" {
				t.Errorf("the problem is named by the field %q, but it is about the whole file", p.Field)
			}
			if tt.manifest == "" || strings.TrimSpace(tt.manifest) == "" {
				if p.Message != "autoapp.json is empty: write the manifest as a JSON object" {
					t.Errorf("an empty manifest says %q", p.Message)
				}
				return
			}
			if !strings.HasPrefix(p.Message, notAManifest) || !strings.Contains(p.Message, tt.says) {
				t.Errorf("the problem says %q, want %q and %q", p.Message, notAManifest, tt.says)
			}
		})
	}
}

func TestProblemsReadAsOneSentence(t *testing.T) {
	tests := []struct {
		name     string
		problems refusal.Problems
		want     string
	}{
		{
			name:     "one problem",
			problems: refusal.Problems{{Field: "name", Message: "give the application a name"}},
			want:     "name: give the application a name",
		},
		{
			name: "two problems",
			problems: refusal.Problems{
				{Field: "name", Message: "give the application a name"},
				{Field: "build[0].timeout", Message: "at most 30m"},
			},
			want: "name: give the application a name; build[0].timeout: at most 30m",
		},
		{
			name: "a problem of the whole file has no field",
			problems: refusal.Problems{
				{Message: "the workspace has no autoapp.json"},
				{Field: "preview", Message: "give either a command or a static folder, not both"},
			},
			want: "the workspace has no autoapp.json; preview: give either a command or a static folder, not both",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.problems.Error(); got != tt.want {
				t.Fatalf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("from a parsed manifest", func(t *testing.T) {
		_, problems := app.ParseManifest([]byte(`{"build": [{"name": "check", "command": ["true"], "timeout": "31m"}], "preview": {"static": "site"}}`))
		want := "name: give the application a name; build[0].timeout: at most 30m"
		if got := problems.Error(); got != want {
			t.Fatalf("Error() = %q, want %q", got, want)
		}
	})
}
