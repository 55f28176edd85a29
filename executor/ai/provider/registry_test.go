package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/provider"
	"autoapp/intent/refusal"
)

const secretKey = "sk-test-0123456789abcd"

func TestFileModeAndReopen(t *testing.T) {
	root, c := t.TempDir(), newClock()
	fake := newFakeProvider(t, "Bearer "+secretKey, "qwen3:27b")
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: fake.URL, APIKey: secretKey, On: true})
	mustSave(t, r, provider.Provider{Name: "open-router", BaseURL: "https://openrouter.ai/api/v1"})
	must(t, r.SetDefaultModel("ollama:qwen3:27b"))

	path := filepath.Join(root, "launcher", "providers.json")
	info, err := os.Stat(path)
	must(t, err)
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("providers.json mode = %o, want 600", mode)
	}
	dir, err := os.Stat(filepath.Dir(path))
	must(t, err)
	if mode := dir.Mode().Perm(); mode != 0o700 {
		t.Fatalf("launcher folder mode = %o, want 700", mode)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	must(t, err)
	if len(entries) != 1 {
		t.Fatalf("launcher folder holds %v, want providers.json alone (no temporary file left)", entries)
	}

	again := openRegistry(t, root, c)
	if got, want := again.List(), r.List(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopening List = %+v, want %+v", got, want)
	}
	if got := again.DefaultModel(); got != "ollama:qwen3:27b" {
		t.Fatalf("after reopening DefaultModel = %q", got)
	}
	// The key itself survived: the provider receives it.
	if _, err := again.Test(context.Background(), "ollama"); err != nil {
		t.Fatalf("Test after reopening: %v", err)
	}
	if got := fake.Auth(); len(got) != 1 || got[0] != "Bearer "+secretKey {
		t.Fatalf("Authorization after reopening = %q", got)
	}
}

func TestListMasksKeys(t *testing.T) {
	cases := []struct {
		name, key, mask string
		hasKey          bool
	}{
		{"a long key shows its last four", secretKey, "••••abcd", true},
		{"twelve characters show four", "abcdefghijkl", "••••ijkl", true},
		{"eleven characters show none", "abcdefghijk", "••••", true},
		{"a short key shows none", "key1", "••••", true},
		{"no key", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := openRegistry(t, t.TempDir(), newClock())
			mustSave(t, r, provider.Provider{Name: "vllm", BaseURL: "http://127.0.0.1:8000", APIKey: c.key, On: true})
			want := []provider.ProviderView{{Name: "vllm", BaseURL: "http://127.0.0.1:8000", KeyMask: c.mask, HasKey: c.hasKey, On: true}}
			if got := r.List(); !reflect.DeepEqual(got, want) {
				t.Fatalf("List = %+v, want %+v", got, want)
			}
			got, err := r.Get("vllm")
			must(t, err)
			if got != want[0] {
				t.Fatalf("Get = %+v, want %+v", got, want[0])
			}
			if c.key == "" {
				return
			}
			b, err := json.Marshal(r.List())
			must(t, err)
			wantNoKey(t, "the JSON of List", string(b), c.key)
			wantNoKey(t, "List printed", fmt.Sprintf("%v %+v %#v", r.List(), r.List(), r.List()), c.key)
		})
	}
}

func TestProviderAndEndpointHideKey(t *testing.T) {
	p := provider.Provider{Name: "openai", BaseURL: "https://api.openai.com", APIKey: secretKey, On: true}
	e := provider.Endpoint{Provider: "openai", BaseURL: "https://api.openai.com", APIKey: secretKey, Model: "gpt-5"}
	pj, err := json.Marshal(p)
	must(t, err)
	ej, err := json.Marshal(e)
	must(t, err)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("turn", "provider", p, "endpoint", e)
	for where, text := range map[string]string{
		"Provider as JSON": string(pj), "Endpoint as JSON": string(ej),
		"Provider printed": fmt.Sprintf("%v %+v %s", p, p, p), "Endpoint printed": fmt.Sprintf("%v %+v %s", e, e, e),
		"the log": logged.String(),
	} {
		wantNoKey(t, where, text, secretKey)
	}
}

func TestSaveKeepKey(t *testing.T) {
	base := provider.Provider{Name: "openai", BaseURL: "https://api.openai.com", APIKey: secretKey, On: true}
	cases := []struct {
		name    string
		key     string
		keepKey bool
		mask    string
	}{
		{"an empty key with keepKey keeps the stored key", "", true, "••••abcd"},
		{"a new key with keepKey replaces it", "sk-another-key-wxyz", true, "••••wxyz"},
		{"an empty key without keepKey removes it", "", false, ""},
		{"a new key without keepKey replaces it", "sk-another-key-wxyz", false, "••••wxyz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := openRegistry(t, t.TempDir(), newClock())
			mustSave(t, r, base)
			edit := base
			edit.BaseURL, edit.APIKey, edit.On = "https://api.openai.com/v1/", c.key, false
			must(t, r.Save(edit, c.keepKey))
			got, err := r.Get("openai")
			must(t, err)
			want := provider.ProviderView{Name: "openai", BaseURL: "https://api.openai.com", KeyMask: c.mask, HasKey: c.mask != "", On: false}
			if got != want {
				t.Fatalf("after Save = %+v, want %+v", got, want)
			}
		})
	}
	t.Run("a new provider with keepKey and no key has none", func(t *testing.T) {
		r := openRegistry(t, t.TempDir(), newClock())
		must(t, r.Save(provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434"}, true))
		if got, _ := r.Get("ollama"); got.HasKey {
			t.Fatalf("a new provider saved without a key has one: %+v", got)
		}
	})
	t.Run("ClearKey removes the key", func(t *testing.T) {
		root := t.TempDir()
		r := openRegistry(t, root, newClock())
		mustSave(t, r, base)
		must(t, r.ClearKey("openai"))
		if got, _ := r.Get("openai"); got.HasKey || got.KeyMask != "" {
			t.Fatalf("after ClearKey = %+v", got)
		}
		b, err := os.ReadFile(filepath.Join(root, "launcher", "providers.json"))
		must(t, err)
		wantNoKey(t, "providers.json after ClearKey", string(b), secretKey)
	})
	t.Run("a pasted key loses its surrounding spaces", func(t *testing.T) {
		r := openRegistry(t, t.TempDir(), newClock())
		p := base
		p.APIKey = "  " + secretKey + "\n"
		mustSave(t, r, p)
		if got, _ := r.Get("openai"); got.KeyMask != "••••abcd" {
			t.Fatalf("after Save = %+v", got)
		}
	})
}

func TestSaveRefusals(t *testing.T) {
	ok := provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434"}
	with := func(edit func(*provider.Provider)) provider.Provider {
		p := ok
		edit(&p)
		return p
	}
	badURL := func(u string) provider.Provider { return with(func(p *provider.Provider) { p.BaseURL = u }) }
	badName := func(n string) provider.Provider { return with(func(p *provider.Provider) { p.Name = n }) }
	const scheme = "The base URL must start with http:// or https://."
	cases := []struct {
		name    string
		p       provider.Provider
		message string
	}{
		{"empty name", badName(""), "The provider name is empty; write one such as ollama or open-router."},
		{"capitals and a space", badName("Open Router"), `The provider name "Open Router" may hold only lowercase letters, digits and dashes between them, such as open-router.`},
		{"a colon", badName("ollama:local"), `The provider name "ollama:local" may hold only lowercase letters, digits and dashes between them, such as open-router.`},
		{"a leading dash", badName("-ollama"), `The provider name "-ollama" may hold only lowercase letters, digits and dashes between them, such as open-router.`},
		{"two dashes", badName("open--router"), `The provider name "open--router" may hold only lowercase letters, digits and dashes between them, such as open-router.`},
		{"41 characters", badName(strings.Repeat("a", 41)), "The provider name has 41 characters; a name is at most 40."},
		{"empty URL", badURL(""), "The base URL is empty; write the address the provider answers at, such as http://127.0.0.1:11434."},
		{"ftp", badURL("ftp://models.example.com"), scheme},
		{"relative", badURL("/v1"), scheme},
		{"no scheme", badURL("localhost:11434"), scheme},
		{"host only", badURL("127.0.0.1:11434"), scheme},
		{"no host", badURL("http:///v1"), "The base URL has no host; write it as http://host:port."},
		{"a query", badURL("http://127.0.0.1:11434/v1?key=abc"), "The base URL must not have a query (the part after ?)."},
		{"an empty query", badURL("http://127.0.0.1:11434/?"), "The base URL must not have a query (the part after ?)."},
		{"a fragment", badURL("http://127.0.0.1:11434/#top"), "The base URL must not have a fragment (the part after #)."},
		{"a user and password", badURL("https://owner:hunter2@api.example.com"), "The base URL must not carry a user name or password; put a key in the API key field."},
		{"a space inside", badURL("http://127.0.0.1:11434/my models"), "The base URL must not contain spaces or control characters."},
		{"too long", badURL("http://example.com/" + strings.Repeat("a", 2000)), "The base URL is longer than 2000 characters."},
		{"a key with a space", with(func(p *provider.Provider) { p.APIKey = "sk-abc def" }), "The API key may hold only visible characters, without spaces or line breaks."},
		{"a key with a line break", with(func(p *provider.Provider) { p.APIKey = "sk-abc\ndef" }), "The API key may hold only visible characters, without spaces or line breaks."},
		{"a key of 4097 characters", with(func(p *provider.Provider) { p.APIKey = strings.Repeat("k", 4097) }), "The API key has 4097 characters; a key is at most 4096."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			r := openRegistry(t, root, newClock())
			wantError(t, r.Save(c.p, false), refusal.Invalid, c.message)
			if got := r.List(); len(got) != 0 {
				t.Fatalf("a refused Save left %+v", got)
			}
			if _, err := os.Stat(filepath.Join(root, "launcher", "providers.json")); !os.IsNotExist(err) {
				t.Fatalf("a refused Save wrote the file: %v", err)
			}
		})
	}
}

func TestBaseURLNormalised(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434"},
		{"http://127.0.0.1:11434/", "http://127.0.0.1:11434"},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434"},
		{"http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434"},
		{"  https://openrouter.ai/api/v1  ", "https://openrouter.ai/api"},
		{"https://gateway.example.com/v1beta", "https://gateway.example.com/v1beta"},
		{"HTTPS://api.openai.com/v1", "HTTPS://api.openai.com"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			r := openRegistry(t, t.TempDir(), newClock())
			mustSave(t, r, provider.Provider{Name: "p", BaseURL: c.in})
			if got, _ := r.Get("p"); got.BaseURL != c.want {
				t.Fatalf("BaseURL %q stored as %q, want %q", c.in, got.BaseURL, c.want)
			}
		})
	}
}

func TestUnknownProvider(t *testing.T) {
	r := openRegistry(t, t.TempDir(), newClock())
	const message = `There is no provider called "x".`
	ctx := context.Background()
	_, getErr := r.Get("x")
	_, modelsErr := r.Models(ctx, "x")
	_, testErr := r.Test(ctx, "x")
	for name, err := range map[string]error{
		"Get": getErr, "Remove": r.Remove("x"), "SetOn": r.SetOn("x", true), "ClearKey": r.ClearKey("x"),
		"Models": modelsErr, "Test": testErr,
	} {
		t.Run(name, func(t *testing.T) { wantError(t, err, refusal.NotFound, message) })
	}
}

func TestRemove(t *testing.T) {
	root, c := t.TempDir(), newClock()
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434", On: true})
	mustSave(t, r, provider.Provider{Name: "openai", BaseURL: "https://api.openai.com", APIKey: secretKey, On: true})
	must(t, r.SetDefaultModel("ollama:qwen3:27b"))

	wantError(t, r.Remove("ollama"), refusal.Conflict,
		"ollama serves the Settings model ollama:qwen3:27b; choose another Settings model before removing it.")
	must(t, r.Remove("openai"))
	must(t, r.SetDefaultModel("gpt-5-mini"))
	must(t, r.Remove("ollama"))
	if got := openRegistry(t, root, c).List(); len(got) != 0 {
		t.Fatalf("after removing both and reopening, List = %+v", got)
	}
}

func TestSetOn(t *testing.T) {
	root, c := t.TempDir(), newClock()
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434"})
	must(t, r.SetOn("ollama", true))
	must(t, r.SetOn("ollama", true)) // a toggle sent twice is not an error
	if got, _ := openRegistry(t, root, c).Get("ollama"); !got.On {
		t.Fatalf("after SetOn and reopening, %+v is off", got)
	}
	must(t, r.SetOn("ollama", false))
	if got, _ := openRegistry(t, root, c).Get("ollama"); got.On {
		t.Fatalf("after SetOn(false) and reopening, %+v is on", got)
	}
}

func TestSetDefaultModel(t *testing.T) {
	root, c := t.TempDir(), newClock()
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434", On: true})
	cases := []struct {
		name, ref, want string
		code            refusal.Code
		message         string
	}{
		{"a bare id", "gpt-5-mini", "gpt-5-mini", "", ""},
		{"a known provider, split at the first colon", "ollama:qwen3:27b", "ollama:qwen3:27b", "", ""},
		{"surrounding spaces", " ollama:qwen3 ", "ollama:qwen3", "", ""},
		{"cleared", "", "", "", ""},
		{"an unknown provider", "vllm:llama", "", refusal.Invalid, `There is no provider called "vllm" for the Settings model vllm:llama.`},
		{"no model after the colon", "ollama:", "", refusal.Invalid, `The model reference "ollama:" has no model after the colon; write provider:model.`},
		{"a space inside", "qwen 3", "", refusal.Invalid, `The model reference "qwen 3" contains a space; write it without spaces.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must(t, r.SetDefaultModel("ollama:before"))
			err := r.SetDefaultModel(tc.ref)
			if tc.message != "" {
				wantError(t, err, tc.code, tc.message)
				if got := r.DefaultModel(); got != "ollama:before" {
					t.Fatalf("a refused SetDefaultModel changed it to %q", got)
				}
				return
			}
			must(t, err)
			if got := r.DefaultModel(); got != tc.want {
				t.Fatalf("DefaultModel = %q, want %q", got, tc.want)
			}
			if got := openRegistry(t, root, c).DefaultModel(); got != tc.want {
				t.Fatalf("after reopening DefaultModel = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFailedWriteChangesNothing(t *testing.T) {
	root, c := t.TempDir(), newClock()
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434"})
	before := r.List()
	// A folder where the file should be: the rename fails, even for root.
	path := filepath.Join(root, "launcher", "providers.json")
	must(t, os.Remove(path))
	must(t, os.MkdirAll(filepath.Join(path, "in-the-way"), 0o700))

	if err := r.SetOn("ollama", true); err == nil {
		t.Fatal("SetOn succeeded over a folder")
	}
	if err := r.Save(provider.Provider{Name: "vllm", BaseURL: "http://127.0.0.1:8000"}, false); err == nil {
		t.Fatal("Save succeeded over a folder")
	}
	if got := r.List(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after failed writes List = %+v, want %+v", got, before)
	}
}

func TestOpenRefusesABrokenFile(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"not JSON", "{", "is not a providers file"},
		{"a bad base URL", `{"providers":[{"name":"ollama","baseUrl":"ftp://x"}]}`, "The base URL must start with http:// or https://."},
		{"a name twice", `{"providers":[{"name":"a","baseUrl":"http://x"},{"name":"a","baseUrl":"http://y"}]}`, `names "a" twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(root, "launcher"), 0o700))
			must(t, os.WriteFile(filepath.Join(root, "launcher", "providers.json"), []byte(c.text), 0o600))
			_, err := provider.NewRegistry(root, time.Now, nil, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewRegistry = %v, want an error containing %q", err, c.want)
			}
		})
	}
}
