package provider_test

import (
	"context"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
)

func TestAModelsContextWindowComesFromTheProviderOrFromSettings(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name           string
		listed, served int
		set            int
		want           int
	}{
		{"a model list that names it (OpenRouter, vLLM)", 131072, 0, 0, 131072},
		{"llama.cpp's server, from /props", 0, 8192, 0, 8192},
		{"a provider that says nothing (Ollama)", 0, 0, 0, 0},
		{"set in Settings, over what the provider says", 131072, 0, 16384, 16384},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scripted.New(t)
			s.Models("m1")
			s.ContextWindows(c.listed, c.served)
			r := openRegistry(t, t.TempDir(), newClock())
			mustSave(t, r, provider.Provider{Name: "p", BaseURL: s.URL(), On: true, ContextTokens: c.set})
			ep, err := r.Resolve(ctx, "p:m1")
			must(t, err)
			if ep.ContextTokens != c.want {
				t.Errorf("ContextTokens = %d, want %d", ep.ContextTokens, c.want)
			}
		})
	}
	t.Run("a window out of bounds is refused", func(t *testing.T) {
		r := openRegistry(t, t.TempDir(), newClock())
		err := r.Save(provider.Provider{Name: "p", BaseURL: "http://127.0.0.1:11434", On: true, ContextTokens: 100}, false)
		if err == nil || err.Error() != "The context window must be a number of tokens between 512 and 10000000, or empty to ask the provider." {
			t.Errorf("Save = %v", err)
		}
	})
}
