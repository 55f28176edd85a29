package builder

import (
	"context"
	"encoding/json"
	"fmt"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/workspace"
)

// The topics spec.read answers.
const (
	TopicManifest = "manifest"
	TopicExamples = "examples"
	TopicPlan     = "plan"
)

// ExampleJSON is one complete acceptance example, as ExampleFormat shows it.
const ExampleJSON = `{
  "title": "A note added is listed on the notes page",
  "steps": [
    {"method": "POST", "path": "/api/notes", "body": {"title": "Milk"}, "expect": {"status": 201, "json": {"id": "{{any}}", "title": "Milk"}}},
    {"method": "GET", "path": "/notes", "expect": {"status": 200, "contains": ["Milk"], "absent": ["No notes yet"]}}
  ]
}`

// ExampleFormat is the acceptance example format, in plain words, with
// one complete example. The instructions and spec.read give it.
const ExampleFormat = `An acceptance example is one JSON file in the application's acceptance folder (acceptance/ unless autoapp.json says otherwise); its id is the file name without .json, in lowercase letters, digits and dashes. The file holds one object with two fields:
- "title": what a person would see work, in one line.
- "steps": the HTTP requests the host sends to the running preview, in order. Each step has:
  - "method": GET, HEAD, POST, PUT, PATCH or DELETE;
  - "path": a path on the preview starting with /, with an optional query ("/notes?tag=work"), never a scheme or host;
  - "headers" (optional): header names to one-line text values;
  - "body" (optional): a string is sent as text/plain, any other JSON value as application/json;
  - "expect": "status" (the exact status; left out means any 2xx), "contains" (texts the body must hold), "absent" (texts it must not hold), "json" (a subset the JSON body must match: objects on the keys listed, arrays element by element with the same length, and the string "{{any}}" matches any value that is present);
  - "fails" (optional): true when the route must refuse the request with a 4xx status; that step passes only on a refusal, and "expect" may then name the 4xx status and the sentence the person is told.
The host runs every example, stops an example at its first failing step and says why, and keeps a hash of each example's steps: a change to an older example's steps is seen.
A complete example, acceptance/0007-add-note-c1.json:
` + ExampleJSON + `
A failure criterion's example has a step with "fails": true, such as {"method": "POST", "path": "/api/notes", "body": {"title": ""}, "fails": true, "expect": {"status": 400, "contains": ["Give the note a title."]}}.`

type specAnswer struct {
	Manifest string          `json:"manifest,omitempty"`
	Examples *examplesAnswer `json:"examples,omitempty"`
	Plan     string          `json:"plan,omitempty"`
}

type examplesAnswer struct {
	Format string `json:"format"`
	// Folder is where the examples are kept.
	Folder string `json:"folder"`
	// Present are the ids of the examples in the folder now.
	Present []string `json:"present"`
	// Required are this task's examples, one per criterion.
	Required []requiredExample `json:"required"`
}

type requiredExample struct {
	ID        string `json:"id"`
	Criterion string `json:"criterion"`
	Failure   bool   `json:"failure,omitempty"`
	Present   bool   `json:"present"`
}

func (s *Session) specRead() ai.Tool {
	type input struct {
		Topic string `json:"topic"`
	}
	return ai.Tool{
		Name: "spec.read",
		Description: "Read the specification of the work: topic manifest is autoapp.json (the build stages, the preview, the acceptance folder, the artifacts); " +
			"examples is the acceptance example format with a complete example, the examples present and the ids this task must write; " +
			"plan is the task's plan. Left out, all three.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {
			"topic": {"type": "string", "enum": ["manifest", "examples", "plan"], "description": "one topic; left out for all three"}}}`),
		Example: json.RawMessage(`{"topic": "examples"}`),
		Handler: handler(s, "spec.read", func(ctx context.Context, _ workspace.CommitMeta, in input) (any, error) {
			var a specAnswer
			var raw []byte
			if in.Topic == "" || in.Topic == TopicManifest || in.Topic == TopicExamples {
				var err error
				if raw, err = s.manifestText(ctx); err != nil {
					return nil, err
				}
			}
			if in.Topic == "" || in.Topic == TopicManifest {
				a.Manifest = string(raw)
			}
			if in.Topic == "" || in.Topic == TopicExamples {
				ex, err := s.examples(raw)
				if err != nil {
					return nil, err
				}
				a.Examples = &ex
			}
			if in.Topic == "" || in.Topic == TopicPlan {
				a.Plan = s.cfg.PlanMarkdown
			}
			return a, nil
		}),
	}
}

// manifestText is the manifest the host obeys: the text HEAD commits,
// never what the working tree holds in its place.
func (s *Session) manifestText(ctx context.Context) ([]byte, error) {
	if s.cfg.ManifestText != nil {
		b, err := s.cfg.ManifestText()
		if err != nil {
			return nil, fmt.Errorf("builder: the manifest: %w", err)
		}
		return b, nil
	}
	b, _, _, err := s.ws.Manifest(ctx)
	if err != nil {
		return nil, fmt.Errorf("builder: the manifest: %w", err)
	}
	return b, nil
}

// examples is the format and where this task's examples stand.
func (s *Session) examples(manifest []byte) (examplesAnswer, error) {
	m, _ := app.ParseManifest(manifest)
	a := examplesAnswer{Format: ExampleFormat, Folder: m.AcceptanceDir(), Present: []string{}}
	present, err := acceptance.Load(s.ws.FS(), a.Folder)
	if err != nil {
		return a, fmt.Errorf("builder: %w", err)
	}
	have := map[string]bool{}
	for _, ex := range present {
		a.Present = append(a.Present, ex.ID)
		have[ex.ID] = true
	}
	for n, c := range s.cfg.Task.Criteria {
		id := plan.ExampleID(s.cfg.Task.Slug, n+1)
		a.Required = append(a.Required, requiredExample{ID: id, Criterion: c.Text, Failure: c.Failure, Present: have[id]})
	}
	return a, nil
}
