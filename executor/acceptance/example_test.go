package acceptance_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"autoapp/executor/acceptance"
)

// file wraps steps (a JSON array's inside) into an example file.
func file(steps string) string {
	return `{"title": "A person sees it work", "steps": [` + steps + `]}`
}

func fields(t *testing.T, ex acceptance.Example) []string {
	t.Helper()
	var fs []string
	for _, p := range ex.Problems {
		fs = append(fs, p.Field)
	}
	return fs
}

func TestParseNamesEachProblemByField(t *testing.T) {
	manySteps := strings.Repeat(`{"method": "GET", "path": "/"},`, acceptance.MaxSteps) + `{"method": "GET", "path": "/"}`
	tests := []struct {
		name   string
		id     string
		file   string
		fields []string
		says   string // part of the first problem's sentence
	}{
		{name: "a valid example", file: file(`{"method": "GET", "path": "/", "expect": {"status": 200, "contains": ["Hello"]}}`)},
		{name: "a step without expect", file: file(`{"method": "GET", "path": "/missing", "fails": true}`)},
		{name: "every kind of body and expectation", file: file(`
			{"method": "POST", "path": "/notes?x=1", "headers": {"Accept": "application/json"}, "body": {"name": "milk"},
			 "expect": {"status": 201, "json": {"id": "{{any}}", "tags": ["a"]}, "absent": ["Traceback"]}},
			{"method": "PUT", "path": "/notes/1", "body": "raw text", "expect": {"status": 422}, "fails": true}`)},
		{name: "not JSON", file: "{\n  \"title\": \"x\",\n  steps: []\n}", fields: []string{""}, says: "line 3, column 3"},
		{name: "not an object", file: `[1, 2]`, fields: []string{""}, says: "one JSON object"},
		{name: "too large", file: `{"title": "` + strings.Repeat("x", acceptance.MaxFileSize) + `"}`, fields: []string{""}, says: "larger than 64 KiB"},
		{name: "an id that is not lowercase letters digits and dashes", id: "0007_Add Tags", file: file(`{"method": "GET", "path": "/"}`), fields: []string{"id"}},
		{name: "no title", file: `{"steps": [{"method": "GET", "path": "/"}]}`, fields: []string{"title"}},
		{name: "a blank title", file: `{"title": "  ", "steps": [{"method": "GET", "path": "/"}]}`, fields: []string{"title"}},
		{name: "no steps", file: `{"title": "x"}`, fields: []string{"steps"}},
		{name: "an empty list of steps", file: `{"title": "x", "steps": []}`, fields: []string{"steps"}, says: "at least one step"},
		{name: "more steps than allowed", file: file(manySteps), fields: []string{"steps"}, says: "at most 50 steps"},
		{name: "an unknown top-level field", file: `{"title": "x", "steps": [{"method": "GET", "path": "/"}], "notes": 1}`, fields: []string{"notes"}},
		{name: "an unknown step field", file: file(`{"method": "GET", "path": "/", "expects": {}}`), fields: []string{"steps[0].expects"}, says: "is not a field of a step"},
		{name: "an unknown expect field", file: file(`{"method": "GET", "path": "/", "expect": {"code": 200}}`), fields: []string{"steps[0].expect.code"}},
		{name: "a step that is not an object", file: file(`"GET /"`), fields: []string{"steps[0]"}},
		{name: "an unknown method", file: file(`{"method": "FETCH", "path": "/"}`), fields: []string{"steps[0].method"}, says: `"FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE`},
		{name: "a lowercase method", file: file(`{"method": "get", "path": "/"}`), fields: []string{"steps[0].method"}},
		{name: "no path", file: file(`{"method": "GET"}`), fields: []string{"steps[0].path"}},
		{name: "a relative path", file: file(`{"method": "GET", "path": "notes"}`), fields: []string{"steps[0].path"}, says: "must be a path starting with /"},
		{name: "a path with a scheme and host", file: file(`{"method": "GET", "path": "/"}, {"method": "GET", "path": "http://evil.example/x"}`), fields: []string{"steps[1].path"}},
		{name: "a path that names a host", file: file(`{"method": "GET", "path": "/"}, {"method": "GET", "path": "//evil.example/x"}`), fields: []string{"steps[1].path"}, says: "names a host"},
		{name: "a path with a backslash", file: file(`{"method": "GET", "path": "/\\evil.example"}`), fields: []string{"steps[0].path"}},
		{name: "a status out of range", file: file(`{"method": "GET", "path": "/", "expect": {"status": 999}}`), fields: []string{"steps[0].expect.status"}},
		{name: "a status that is text", file: file(`{"method": "GET", "path": "/", "expect": {"status": "200"}}`), fields: []string{"steps[0].expect.status"}},
		{name: "a failing step expecting a 2xx", file: file(`{"method": "GET", "path": "/", "fails": true, "expect": {"status": 200}}`), fields: []string{"steps[0].expect.status"}, says: "expects a 4xx"},
		{name: "fails that is not a boolean", file: file(`{"method": "GET", "path": "/", "fails": "yes"}`), fields: []string{"steps[0].fails"}},
		{name: "contains that is not a list", file: file(`{"method": "GET", "path": "/", "expect": {"contains": "Hello"}}`), fields: []string{"steps[0].expect.contains"}},
		{name: "an empty text to look for", file: file(`{"method": "GET", "path": "/", "expect": {"absent": ["a", ""]}}`), fields: []string{"steps[0].expect.absent[1]"}},
		{name: "a HEAD step checking the body", file: file(`{"method": "HEAD", "path": "/", "expect": {"contains": ["Hello"]}}`), fields: []string{"steps[0].expect.contains"}},
		{name: "a header the host sets", file: file(`{"method": "GET", "path": "/", "headers": {"host": "evil.example"}}`), fields: []string{`steps[0].headers["host"]`}},
		{name: "a header value on two lines", file: file(`{"method": "GET", "path": "/", "headers": {"X-A": "a\r\nX-B: b"}}`), fields: []string{`steps[0].headers["X-A"]`}},
		{name: "headers that are not text", file: file(`{"method": "GET", "path": "/", "headers": {"X-A": 1}}`), fields: []string{"steps[0].headers"}},
		{name: "every problem at once", file: `{"steps": [{"method": "FETCH", "path": "//evil"}, {"method": "GET", "path": "/", "expect": {"status": 42}}]}`,
			fields: []string{"title", "steps[0].method", "steps[0].path", "steps[1].expect.status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.id
			if id == "" {
				id = "0001-example"
			}
			ex, problems := acceptance.Parse(id, []byte(tt.file))
			if got := fields(t, ex); !slices.Equal(got, tt.fields) {
				t.Fatalf("problems at %q, want at %q: %v", got, tt.fields, problems)
			}
			if !slices.Equal(ex.Problems, problems) {
				t.Errorf("the example keeps %v, Parse returned %v", ex.Problems, problems)
			}
			if tt.says != "" && !strings.Contains(problems[0].Message, tt.says) {
				t.Errorf("problem %q does not say %q", problems[0].Message, tt.says)
			}
			if len(tt.fields) == 0 && len(ex.Hash) != 64 {
				t.Errorf("a valid example has hash %q, want 64 hex digits", ex.Hash)
			}
			if len(tt.fields) > 0 && ex.Hash != "" {
				t.Errorf("an example with problems has hash %q", ex.Hash)
			}
		})
	}
}

func TestParseReadsTheSteps(t *testing.T) {
	ex, problems := acceptance.Parse("0007-add-tags-c2", []byte(file(`
		{"method": "POST", "path": "/notes", "headers": {"accept": "application/json"}, "body": {"n": 12345678901234567890},
		 "expect": {"status": 201, "contains": ["milk"], "json": {"id": "{{any}}"}}},
		{"method": "DELETE", "path": "/notes/1", "fails": true}`)))
	if problems != nil {
		t.Fatal(problems)
	}
	if ex.ID != "0007-add-tags-c2" || ex.Title != "A person sees it work" || len(ex.Steps) != 2 {
		t.Fatalf("read %+v", ex)
	}
	s := ex.Steps[0]
	if s.Method != "POST" || s.Path != "/notes" || s.Headers["Accept"] != "application/json" || s.Expect.Status != 201 {
		t.Errorf("first step read as %+v", s)
	}
	if got := fmt.Sprint(s.Body); got != "map[n:12345678901234567890]" {
		t.Errorf("body read as %s; a large number must stay exact", got)
	}
	if !ex.Steps[1].Fails {
		t.Errorf("second step should fail")
	}
}

func TestHashIsOfTheStepsOnly(t *testing.T) {
	const base = `{"title": "Tags", "steps": [
		{"method": "POST", "path": "/tags", "headers": {"Accept": "application/json"}, "body": {"name": "a", "color": "red"},
		 "expect": {"status": 201, "json": {"id": "{{any}}", "name": "a"}}}]}`
	tests := []struct {
		name string
		file string
		same bool
	}{
		{name: "the same file", file: base, same: true},
		{name: "other whitespace", file: strings.Join(strings.Fields(base), " "), same: true},
		{name: "other key order", same: true, file: `{"steps": [
			{"expect": {"json": {"name": "a", "id": "{{any}}"}, "status": 201}, "body": {"color": "red", "name": "a"},
			 "headers": {"accept": "application/json"}, "path": "/tags", "method": "POST"}], "title": "Tags"}`},
		{name: "another title", file: strings.Replace(base, `"Tags"`, `"Tags can be added"`, 1), same: true},
		{name: "another path", file: strings.Replace(base, `"/tags"`, `"/tags/"`, 1)},
		{name: "another status", file: strings.Replace(base, `201`, `200`, 1)},
		{name: "another body", file: strings.Replace(base, `"red"`, `"blue"`, 1)},
		{name: "the body as text", file: strings.Replace(base, `{"name": "a", "color": "red"}`, `"{\"name\": \"a\", \"color\": \"red\"}"`, 1)},
		{name: "another expected JSON", file: strings.Replace(base, `"name": "a"}}`, `"name": "b"}}`, 1)},
		{name: "a step more", file: strings.Replace(base, `}}]}`, `}}, {"method": "GET", "path": "/tags"}]}`, 1)},
	}
	want, problems := acceptance.Parse("0001-tags", []byte(base))
	if problems != nil {
		t.Fatal(problems)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := acceptance.Parse("0001-tags", []byte(tt.file))
			if problems != nil {
				t.Fatal(problems)
			}
			if same := got.Hash == want.Hash; same != tt.same {
				t.Errorf("hash %s against %s: same = %v, want %v", got.Hash, want.Hash, same, tt.same)
			}
			if got.Hash != acceptance.Hash(got.Steps) {
				t.Errorf("Example.Hash %s differs from Hash(steps) %s", got.Hash, acceptance.Hash(got.Steps))
			}
		})
	}

	t.Run("fails set", func(t *testing.T) {
		plain, _ := acceptance.Parse("0001-tags", []byte(file(`{"method": "GET", "path": "/tags/x", "expect": {"status": 404}}`)))
		fails, _ := acceptance.Parse("0001-tags", []byte(file(`{"method": "GET", "path": "/tags/x", "expect": {"status": 404}, "fails": true}`)))
		if plain.Hash == "" || plain.Hash == fails.Hash {
			t.Errorf("hashes %q and %q should differ", plain.Hash, fails.Hash)
		}
	})
}

func TestLoadReadsEveryExampleInTheFolder(t *testing.T) {
	fsys := fstest.MapFS{
		"acceptance/0002-broken.json":  {Data: []byte(`{"title": "x", "steps": [{"method": "GET", "path": "http://evil/"}]}`)},
		"acceptance/0001-home.json":    {Data: []byte(file(`{"method": "GET", "path": "/"}`))},
		"acceptance/README.md":         {Data: []byte("not an example")},
		"acceptance/Bad Name.json":     {Data: []byte(file(`{"method": "GET", "path": "/"}`))},
		"acceptance/nested/0003.json":  {Data: []byte(file(`{"method": "GET", "path": "/"}`))},
		"elsewhere/0009-ignored.json":  {Data: []byte(file(`{"method": "GET", "path": "/"}`))},
		"acceptance/0004-empty.json":   {Data: []byte(``)},
		"acceptance/0005-second.json":  {Data: []byte(file(`{"method": "GET", "path": "/second"}`))},
		"acceptance/0006-huge.json":    {Data: []byte(strings.Repeat(" ", acceptance.MaxFileSize+10))},
		"acceptance/0007-a-folder.txt": {Data: []byte(`{}`)},
	}
	examples, err := acceptance.Load(fsys, "acceptance/")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id     string
		fields string
	}
	var got []row
	for _, ex := range examples {
		got = append(got, row{ex.ID, fmt.Sprintf("%q", fields(t, ex))})
	}
	want := []row{
		{"0001-home", `[]`},
		{"0002-broken", `["steps[0].path"]`},
		{"0004-empty", `[""]`},
		{"0005-second", `[]`},
		{"0006-huge", `[""]`},
		{"Bad Name", `["id"]`},
	}
	if !slices.Equal(got, want) {
		t.Errorf("loaded %v\nwant %v", got, want)
	}

	examples, err = acceptance.Load(fsys, "no-such-folder")
	if err != nil || len(examples) != 0 {
		t.Errorf("a missing folder gave %v, %v; want no examples and no error", examples, err)
	}
}
