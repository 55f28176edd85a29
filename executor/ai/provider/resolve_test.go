package provider_test

import (
	"context"
	"net/http"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/intent/refusal"
)

const (
	alphaKey = "sk-alpha-key-000000aaaa"
	betaKey  = "sk-beta-key-0000000bbbb"
)

// twoProviders is a registry with two providers turned on, each a fake
// server that fails the test if it sees any key but its own.
func twoProviders(t *testing.T) (*provider.Registry, *fakeProvider, *fakeProvider) {
	t.Helper()
	alpha := newFakeProvider(t, "Bearer "+alphaKey, "qwen3:27b", "llama3.1:8b", "mistral")
	beta := newFakeProvider(t, "Bearer "+betaKey, "gpt-5", "gpt-5-mini")
	r := openRegistry(t, t.TempDir(), newClock())
	mustSave(t, r, provider.Provider{Name: "alpha", BaseURL: alpha.URL + "/v1", APIKey: alphaKey, On: true})
	mustSave(t, r, provider.Provider{Name: "beta", BaseURL: beta.URL, APIKey: betaKey, On: true})
	return r, alpha, beta
}

func TestResolve(t *testing.T) {
	ctx := context.Background()

	t.Run("provider:model goes to that provider with its own key", func(t *testing.T) {
		r, alpha, beta := twoProviders(t)
		got, err := r.Resolve(ctx, "alpha:qwen3:27b")
		must(t, err)
		if want := (provider.Endpoint{Provider: "alpha", BaseURL: alpha.URL, APIKey: alphaKey, Model: "qwen3:27b"}); got != want {
			t.Fatalf("Resolve = %+v, want %+v", got, want)
		}
		got, err = r.Resolve(ctx, "beta:gpt-5-mini")
		must(t, err)
		if want := (provider.Endpoint{Provider: "beta", BaseURL: beta.URL, APIKey: betaKey, Model: "gpt-5-mini"}); got != want {
			t.Fatalf("Resolve = %+v, want %+v", got, want)
		}
		if alpha.Requests() != 1 || beta.Requests() != 1 {
			t.Fatalf("requests: alpha %d, beta %d; want one each", alpha.Requests(), beta.Requests())
		}
	})
	t.Run("a bare id goes to the Settings model's provider", func(t *testing.T) {
		r, alpha, beta := twoProviders(t)
		must(t, r.SetDefaultModel("beta:gpt-5"))
		got, err := r.Resolve(ctx, "gpt-5-mini")
		must(t, err)
		if want := (provider.Endpoint{Provider: "beta", BaseURL: beta.URL, APIKey: betaKey, Model: "gpt-5-mini"}); got != want {
			t.Fatalf("Resolve = %+v, want %+v", got, want)
		}
		if n := alpha.Requests(); n != 0 {
			t.Fatalf("alpha got %d requests for beta's model", n)
		}
	})
	t.Run("a bare id goes to the only provider turned on", func(t *testing.T) {
		r, _, beta := twoProviders(t)
		must(t, r.SetOn("beta", false))
		must(t, r.SetDefaultModel("mistral")) // bare: it names no provider
		if got := r.InUse(); got != "alpha" {
			t.Fatalf("InUse = %q, want alpha", got)
		}
		got, err := r.Resolve(ctx, "mistral")
		must(t, err)
		if got.Provider != "alpha" || got.Model != "mistral" {
			t.Fatalf("Resolve = %+v, want alpha's mistral", got)
		}
		if n := beta.Requests(); n != 0 {
			t.Fatalf("beta, turned off, got %d requests", n)
		}
	})
	t.Run("a bare id with no provider in use is refused", func(t *testing.T) {
		r, alpha, beta := twoProviders(t)
		_, err := r.Resolve(ctx, "gpt-5")
		wantError(t, err, refusal.Conflict, "Choose which provider serves gpt-5 in Settings.")
		if alpha.Requests()+beta.Requests() != 0 {
			t.Fatal("a provider was asked although none was chosen")
		}
	})
	t.Run("a provider turned off is sent nothing", func(t *testing.T) {
		r, alpha, _ := twoProviders(t)
		must(t, r.SetOn("alpha", false))
		_, err := r.Resolve(ctx, "alpha:qwen3:27b")
		wantError(t, err, refusal.Conflict, "alpha is not turned on in Settings.")
		if n := alpha.Requests(); n != 0 {
			t.Fatalf("alpha, turned off, got %d requests", n)
		}
	})
	t.Run("a bare id whose provider in use is turned off is sent nothing", func(t *testing.T) {
		r, alpha, _ := twoProviders(t)
		must(t, r.SetDefaultModel("alpha:qwen3:27b"))
		must(t, r.SetOn("alpha", false))
		_, err := r.Resolve(ctx, "qwen3:27b")
		// qwen3:27b has a colon, so it names provider qwen3: say so.
		wantError(t, err, refusal.NotFound, `There is no provider called "qwen3" in Settings.`)
		_, err = r.Resolve(ctx, "llama-bare")
		wantError(t, err, refusal.Conflict, "alpha is not turned on in Settings.")
		if n := alpha.Requests(); n != 0 {
			t.Fatalf("alpha, turned off, got %d requests", n)
		}
	})
	t.Run("a model the provider no longer offers", func(t *testing.T) {
		r, alpha, _ := twoProviders(t)
		_, err := r.Resolve(ctx, "alpha:qwen2.5:7b")
		wantError(t, err, refusal.NotFound, "alpha no longer offers qwen2.5:7b.")
		if paths := alpha.Paths(); len(paths) != 1 || paths[0] != "GET /v1/models" {
			t.Fatalf("alpha was sent %q, want only its model list asked", paths)
		}
	})
	t.Run("an unknown provider", func(t *testing.T) {
		r, _, _ := twoProviders(t)
		_, err := r.Resolve(ctx, "gamma:gpt-5")
		wantError(t, err, refusal.NotFound, `There is no provider called "gamma" in Settings.`)
	})
	t.Run("a model list that cannot be fetched", func(t *testing.T) {
		r, alpha, _ := twoProviders(t)
		alpha.answer(http.StatusBadGateway, "upstream "+alphaKey)
		_, err := r.Resolve(ctx, "alpha:qwen3:27b")
		wantError(t, err, refusal.Unavailable, "alpha answered HTTP 502 when asked for its models.")
	})
	t.Run("a malformed reference", func(t *testing.T) {
		r, _, _ := twoProviders(t)
		_, err := r.Resolve(ctx, "")
		wantError(t, err, refusal.Invalid, "The model reference is empty: write a model id, or provider:model.")
	})
	t.Run("the model list is reused within 30 seconds", func(t *testing.T) {
		r, alpha, _ := twoProviders(t)
		for range 3 {
			_, err := r.Resolve(ctx, "alpha:qwen3:27b")
			must(t, err)
		}
		if n := alpha.Requests(); n != 1 {
			t.Fatalf("alpha got %d requests for three resolutions, want 1", n)
		}
	})
}
