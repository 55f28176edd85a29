package provider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/executor/ai/provider"
)

// TestWithoutKeysKeepsAllButTheKeys: the file a registry wrote, its key
// left out, opens as the same providers and Settings model with no key.
func TestWithoutKeysKeepsAllButTheKeys(t *testing.T) {
	root, c := t.TempDir(), newClock()
	r := openRegistry(t, root, c)
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: "http://127.0.0.1:11434", APIKey: secretKey, On: true, ContextTokens: 32768})
	mustSave(t, r, provider.Provider{Name: "open-router", BaseURL: "https://openrouter.ai/api/v1"})
	must(t, r.SetDefaultModel("ollama:qwen3:27b"))
	raw, err := os.ReadFile(filepath.Join(root, "launcher", provider.FileName))
	must(t, err)
	if n, err := provider.Keys(raw); err != nil || n != 1 {
		t.Fatalf("Keys = %d, %v; want 1", n, err)
	}
	out, n, err := provider.WithoutKeys(raw)
	if err != nil || n != 1 {
		t.Fatalf("WithoutKeys left out %d keys, %v; want 1", n, err)
	}
	if strings.Contains(string(out), secretKey) {
		t.Fatalf("the key is still there:\n%s", out)
	}
	again := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(again, "launcher"), 0o700))
	must(t, os.WriteFile(filepath.Join(again, "launcher", provider.FileName), out, 0o600))
	r2 := openRegistry(t, again, c)
	got := r2.List()
	if len(got) != 2 || got[0].Name != "ollama" || !got[0].On || got[0].ContextTokens != 32768 || got[0].HasKey || got[1].Name != "open-router" {
		t.Fatalf("the providers without keys are %+v", got)
	}
	if r2.DefaultModel() != "ollama:qwen3:27b" {
		t.Fatalf("the Settings model is %q", r2.DefaultModel())
	}
	if _, _, err := provider.WithoutKeys([]byte("not json")); err == nil {
		t.Fatal("a file that is not a providers file was taken")
	}
}
