package ai

import (
	"encoding/json"
	"slices"
	"testing"

	"autoapp/intent/refusal"
)

const hunkSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "maxLength": 10},
		"mode": {"type": "string", "enum": ["append", "replace"]},
		"count": {"type": "integer", "minimum": 1, "maximum": 3},
		"ratio": {"type": "number"},
		"dry": {"type": "boolean"},
		"hunks": {
			"type": "array", "minItems": 1, "maxItems": 2,
			"items": {
				"type": "object",
				"properties": {"find": {"type": "string"}, "replace": {"type": "string"}},
				"required": ["find", "replace"],
				"additionalProperties": false
			}
		}
	},
	"required": ["path"],
	"additionalProperties": false
}`

func TestTheSchemaNamesEachFieldItRefuses(t *testing.T) {
	s, err := compileSchema(json.RawMessage(hunkSchema))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		input string
		want  []refusal.Problem
	}{
		{"valid", `{"path":"a.go","mode":"append","count":2,"ratio":0.5,"dry":true,"hunks":[{"find":"a","replace":"b"}]}`, nil},
		{"an integer written with a point", `{"path":"a.go","count":2.0}`, nil},
		{"missing required", `{}`, []refusal.Problem{{Field: "path", Message: "is required (a string)"}}},
		{"empty input reads as an empty object", ``, []refusal.Problem{{Field: "path", Message: "is required (a string)"}}},
		{"not JSON", `{"path":`, []refusal.Problem{{Field: "", Message: "the input is not valid JSON: unexpected EOF"}}},
		{"not an object", `["a.go"]`, []refusal.Problem{{Field: "", Message: "the input must be a JSON object, not an array"}}},
		{"wrong type", `{"path":7}`, []refusal.Problem{{Field: "path", Message: "expected a string, not a number"}}},
		{"empty string", `{"path":""}`, []refusal.Problem{{Field: "path", Message: "must not be empty"}}},
		{"too long", `{"path":"abcdefghijk"}`, []refusal.Problem{{Field: "path", Message: "must be at most 10 characters, not 11"}}},
		{"not in the enum", `{"path":"a","mode":"insert"}`, []refusal.Problem{{Field: "mode", Message: `must be one of "append", "replace"`}}},
		{"not an integer", `{"path":"a","count":1.5}`, []refusal.Problem{{Field: "count", Message: "expected an integer, not a number"}}},
		{"below the minimum", `{"path":"a","count":0}`, []refusal.Problem{{Field: "count", Message: "must be at least 1"}}},
		{"above the maximum", `{"path":"a","count":4}`, []refusal.Problem{{Field: "count", Message: "must be at most 3"}}},
		{"a boolean as a string", `{"path":"a","dry":"yes"}`, []refusal.Problem{{Field: "dry", Message: "expected true or false, not a string"}}},
		{"too few items", `{"path":"a","hunks":[]}`, []refusal.Problem{{Field: "hunks", Message: "give at least 1 item"}}},
		{"too many items", `{"path":"a","hunks":[{"find":"a","replace":"b"},{"find":"a","replace":"b"},{"find":"a","replace":"b"}]}`,
			[]refusal.Problem{{Field: "hunks", Message: "give at most 2 items, not 3"}}},
		{"nested fields", `{"path":"a","hunks":[{"find":1,"with":"b"}]}`, []refusal.Problem{
			{Field: "hunks[0].replace", Message: "is required (a string)"},
			{Field: "hunks[0].find", Message: "expected a string, not a number"},
			{Field: "hunks[0].with", Message: "is not a field here; the fields are find, replace"},
		}},
		{"an unknown field", `{"path":"a","paht":"b"}`, []refusal.Problem{{Field: "paht", Message: "is not a field here; the fields are count, dry, hunks, mode, path, ratio"}}},
		{"something after the object", `{"path":"a"} {}`, []refusal.Problem{{Field: "", Message: "the input is not valid JSON: something follows the JSON value"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.validate([]byte(c.input))
			if !slices.Equal(got, c.want) {
				t.Errorf("validate(%s)\n got %v\nwant %v", c.input, got, c.want)
			}
		})
	}
}

func TestASchemaOutsideTheSupportedPartIsRefused(t *testing.T) {
	cases := map[string]string{
		"an unknown keyword":   `{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}`,
		"an unknown type":      `{"type":"date"}`,
		"not an object":        `["object"]`,
		"empty":                ``,
		"a negative length":    `{"type":"string","minLength":-1}`,
		"required but unknown": `{"type":"object","properties":{},"required":["p"],"additionalProperties":false}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := compileSchema(json.RawMessage(raw)); err == nil {
				t.Errorf("compileSchema(%s) accepted it", raw)
			}
		})
	}
}
