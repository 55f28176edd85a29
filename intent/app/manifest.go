package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"autoapp/intent/refusal"
)

// ManifestFile is the manifest's name at the workspace's top. The engineer
// can never edit it; the owner edits it from the application's page.
const ManifestFile = "autoapp.json"

// DefaultAcceptance is the acceptance folder when the manifest names none.
const DefaultAcceptance = "acceptance/"

// Limits of the manifest.
const (
	MaxStages        = 20
	MaxStageTimeout  = 30 * time.Minute
	DefaultStartWait = 30 * time.Second
)

// Manifest is autoapp.json: how the host builds, previews and checks an
// application, and which files it hands over.
type Manifest struct {
	Name       string   `json:"name"`
	Build      []Stage  `json:"build"`
	Preview    Preview  `json:"preview"`
	Acceptance string   `json:"acceptance,omitempty"`
	Artifacts  []string `json:"artifacts,omitempty"`
}

// Stage is one build step: an argv run in the workspace with a timeout.
type Stage struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
	Timeout Duration `json:"timeout"`
	// Network gives the stage the machine's network, to fetch modules;
	// without it the stage has only a loopback of its own.
	Network bool `json:"network,omitempty"`
}

// Preview says how a release is shown: a command that listens on $PORT, or
// a static folder the host serves itself. Exactly one is set.
type Preview struct {
	Command []string `json:"command,omitempty"`
	Static  string   `json:"static,omitempty"`
	// StartTimeout bounds the wait for the first answer (default 30s).
	StartTimeout Duration `json:"startTimeout,omitempty"`
}

// Duration is a time.Duration written as "90s" or "2m" in JSON. A value
// that is not a duration is kept as a problem for Validate to name by its
// field, rather than ending the decoding.
type Duration struct {
	time.Duration
	invalid string
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string ("90s", "2m").
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		d.invalid = "write a duration as a string such as \"90s\" or \"2m\""
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.invalid = fmt.Sprintf("%q is not a duration such as \"90s\" or \"2m\"", s)
		return nil
	}
	d.Duration, d.invalid = v, ""
	return nil
}

// ParseManifest reads and validates autoapp.json. Every problem is named
// by its field; the manifest is usable only when there are none.
func ParseManifest(b []byte) (Manifest, refusal.Problems) {
	var m Manifest
	if len(bytes.TrimSpace(b)) == 0 {
		return m, refusal.Problems{{Message: "autoapp.json is empty: write the manifest as a JSON object"}}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, refusal.Problems{{Field: "", Message: "autoapp.json is not valid JSON for a manifest: " + jsonMessage(err)}}
	}
	// Decode stops after the first value; anything but space after it
	// would be saved as a file no other JSON reader accepts.
	if _, err := dec.Token(); err != io.EOF {
		return m, refusal.Problems{{Field: "", Message: "autoapp.json is not valid JSON for a manifest: " +
			"there is more after the manifest's closing }"}}
	}
	return m, m.Validate()
}

func jsonMessage(err error) string {
	var ute *json.UnmarshalTypeError
	if e, ok := err.(*json.UnmarshalTypeError); ok {
		ute = e
		return fmt.Sprintf("%s should be %s, not %s", ute.Field, ute.Type, ute.Value)
	}
	return err.Error()
}

// Validate names every problem of a manifest.
func (m *Manifest) Validate() refusal.Problems {
	var ps refusal.Problems
	add := func(field, format string, args ...any) {
		ps = append(ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(m.Name) == "" {
		add("name", "give the application a name")
	} else if len(m.Name) > 100 {
		add("name", "at most 100 characters")
	}
	if len(m.Build) > MaxStages {
		add("build", "at most %d stages", MaxStages)
	}
	seen := map[string]bool{}
	for i, s := range m.Build {
		f := fmt.Sprintf("build[%d]", i)
		switch {
		case strings.TrimSpace(s.Name) == "":
			add(f+".name", "give the stage a name")
		case seen[s.Name]:
			add(f+".name", "%q names two stages", s.Name)
		}
		seen[s.Name] = true
		if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
			add(f+".command", "give the command as a list: the program, then its arguments")
		}
		switch {
		case s.Timeout.invalid != "":
			add(f+".timeout", "%s", s.Timeout.invalid)
		case s.Timeout.Duration <= 0:
			add(f+".timeout", "give a timeout such as \"2m\"")
		case s.Timeout.Duration > MaxStageTimeout:
			add(f+".timeout", "at most %dm", int(MaxStageTimeout.Minutes()))
		}
	}
	p := m.Preview
	switch {
	case len(p.Command) > 0 && p.Static != "":
		add("preview", "give either a command or a static folder, not both")
	case len(p.Command) == 0 && p.Static == "":
		add("preview", "give a command that listens on $PORT, or a static folder")
	case len(p.Command) > 0 && strings.TrimSpace(p.Command[0]) == "":
		add("preview.command", "the first word is the program to run")
	case p.Static != "":
		if msg := relativeProblem(p.Static); msg != "" {
			add("preview.static", "%s", msg)
		}
	}
	if p.StartTimeout.invalid != "" {
		add("preview.startTimeout", "%s", p.StartTimeout.invalid)
	} else if p.StartTimeout.Duration < 0 || p.StartTimeout.Duration > 5*time.Minute {
		add("preview.startTimeout", "between 0 and 5m")
	}
	if m.Acceptance != "" {
		if msg := relativeProblem(m.Acceptance); msg != "" {
			add("acceptance", "%s", msg)
		}
	}
	for i, a := range m.Artifacts {
		if msg := relativeProblem(a); msg != "" {
			add(fmt.Sprintf("artifacts[%d]", i), "%s", msg)
		}
	}
	return ps
}

// AcceptanceDir is the acceptance folder, cleaned, without a trailing slash.
func (m *Manifest) AcceptanceDir() string {
	if m.Acceptance == "" {
		return path.Clean(DefaultAcceptance)
	}
	return path.Clean(m.Acceptance)
}

// StartWait is how long a preview may take to answer.
func (p Preview) StartWait() time.Duration {
	if p.StartTimeout.Duration > 0 {
		return p.StartTimeout.Duration
	}
	return DefaultStartWait
}

// relativeProblem says what is wrong with a path that must stay inside the
// workspace, or "" when nothing is.
func relativeProblem(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "give a path inside the workspace"
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\"):
		return fmt.Sprintf("%q must be a relative path with / between folders", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Sprintf("%q leaves the workspace", p)
	}
	if c == ".git" || strings.HasPrefix(c, ".git/") {
		return fmt.Sprintf("%q is inside .git", p)
	}
	return ""
}
