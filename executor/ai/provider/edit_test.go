package provider_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/intent/refusal"
)

// TestAnEditFromSettingsIsOneCheckedWrite: the Settings form's edit of a
// provider is one method that checks every rule (a new name that exists,
// a rename, the context window as typed) and writes once: a new base URL
// with its key cleared lands whole, and when the write fails nothing of
// it does. (Before, the page saved and then cleared the key in a second
// write, with the rules in the handler.)
func TestAnEditFromSettingsIsOneCheckedWrite(t *testing.T) {
	root := t.TempDir()
	r := openRegistry(t, root, newClock())
	must(t, r.Apply(provider.Edit{Name: "openai", BaseURL: "https://api.openai.com", APIKey: secretKey, On: true}))

	wantError(t, r.Apply(provider.Edit{Name: "openai", BaseURL: "https://example.com"}), refusal.Conflict,
		"A provider called openai exists already; edit it instead.")
	wantError(t, r.Apply(provider.Edit{Editing: "openai", Name: "openai2", BaseURL: "https://api.openai.com"}), refusal.Invalid,
		"A provider cannot be renamed; remove it and add it under the new name.")
	wantError(t, r.Apply(provider.Edit{Editing: "vllm", Name: "vllm", BaseURL: "http://127.0.0.1:8000"}), refusal.NotFound,
		`There is no provider called "vllm".`)
	wantError(t, r.Apply(provider.Edit{Editing: "openai", Name: "openai", BaseURL: "https://api.openai.com", ContextTokens: "32k"}), refusal.Invalid,
		`The context window "32k" is not a whole number of tokens.`)

	// Editing without retyping the key keeps it; the window takes commas.
	must(t, r.Apply(provider.Edit{Editing: "openai", Name: "openai", BaseURL: "https://api.openai.com", On: true, ContextTokens: "128,000"}))
	if got, _ := r.Get("openai"); !got.HasKey || got.ContextTokens != 128000 {
		t.Fatalf("after an edit that kept the key: %+v", got)
	}

	// A failed write changes nothing: neither the URL nor the key.
	before := r.List()
	path := filepath.Join(root, "launcher", "providers.json")
	must(t, os.Remove(path))
	must(t, os.MkdirAll(filepath.Join(path, "in-the-way"), 0o700))
	if err := r.Apply(provider.Edit{Editing: "openai", Name: "openai", BaseURL: "https://proxy.example.com", ClearKey: true}); err == nil {
		t.Fatal("an edit succeeded over a folder")
	}
	if got := r.List(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after a failed edit List = %+v, want %+v", got, before)
	}
	must(t, os.RemoveAll(path))

	must(t, r.Apply(provider.Edit{Editing: "openai", Name: "openai", BaseURL: "https://proxy.example.com", ClearKey: true}))
	got, _ := r.Get("openai")
	if got.BaseURL != "https://proxy.example.com" || got.HasKey {
		t.Fatalf("after the edit that cleared the key: %+v", got)
	}
	b, err := os.ReadFile(path)
	must(t, err)
	wantNoKey(t, "providers.json after the edit", string(b), secretKey)
}
