package provider_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/provider"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
)

func TestModels(t *testing.T) {
	ctx := context.Background()
	t.Run("the list is read sorted and without repeats", func(t *testing.T) {
		fake := newFakeProvider(t, "Bearer "+secretKey, "qwen3:27b", "", "llama3.1:8b", "qwen3:27b", "gpt-oss:20b")
		r := openRegistry(t, t.TempDir(), newClock())
		mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: fake.URL + "/v1/", APIKey: secretKey, On: true})
		got, err := r.Models(ctx, "ollama")
		must(t, err)
		if want := []string{"gpt-oss:20b", "llama3.1:8b", "qwen3:27b"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Models = %q, want %q", got, want)
		}
		if paths := fake.Paths(); len(paths) != 1 || paths[0] != "GET /v1/models" {
			t.Fatalf("the provider was asked %q, want GET /v1/models once", paths)
		}
	})
	t.Run("an empty list is a list", func(t *testing.T) {
		fake := newFakeProvider(t, "")
		r := openRegistry(t, t.TempDir(), newClock())
		mustSave(t, r, provider.Provider{Name: "lm-studio", BaseURL: fake.URL, On: true})
		got, err := r.Models(ctx, "lm-studio")
		if err != nil || len(got) != 0 {
			t.Fatalf("Models = %q, %v; want none and no error", got, err)
		}
	})
	t.Run("no key sends no Authorization", func(t *testing.T) {
		fake := newFakeProvider(t, "", "llama")
		r := openRegistry(t, t.TempDir(), newClock())
		mustSave(t, r, provider.Provider{Name: "llama-cpp", BaseURL: fake.URL, On: true})
		_, err := r.Models(ctx, "llama-cpp")
		must(t, err)
		if got := fake.Auth(); len(got) != 1 || got[0] != "" {
			t.Fatalf("Authorization = %q, want none", got)
		}
	})
	t.Run("the caller cannot change the cached list", func(t *testing.T) {
		fake := newFakeProvider(t, "", "a", "b")
		r := openRegistry(t, t.TempDir(), newClock())
		mustSave(t, r, provider.Provider{Name: "vllm", BaseURL: fake.URL, On: true})
		got, err := r.Models(ctx, "vllm")
		must(t, err)
		got[0] = "changed"
		again, err := r.Models(ctx, "vllm")
		must(t, err)
		if again[0] != "a" {
			t.Fatalf("the cached list changed to %q", again)
		}
	})
}

func TestModelsCache(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*provider.Registry, *fakeProvider, *timetest.Clock) {
		fake := newFakeProvider(t, "Bearer "+secretKey, "qwen3")
		c := newClock()
		r := openRegistry(t, t.TempDir(), c)
		mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: fake.URL, APIKey: secretKey, On: true})
		return r, fake, c
	}
	models := func(t *testing.T, r *provider.Registry) {
		t.Helper()
		if _, err := r.Models(ctx, "ollama"); err != nil {
			t.Fatalf("Models: %v", err)
		}
	}
	wantRequests := func(t *testing.T, fake *fakeProvider, n int) {
		t.Helper()
		if got := fake.Requests(); got != n {
			t.Fatalf("the provider got %d requests, want %d", got, n)
		}
	}

	t.Run("a second call within 30 seconds is not sent", func(t *testing.T) {
		r, fake, c := setup(t)
		models(t, r)
		c.Advance(29 * time.Second)
		models(t, r)
		wantRequests(t, fake, 1)
	})
	t.Run("after 30 seconds it is asked again", func(t *testing.T) {
		r, fake, c := setup(t)
		models(t, r)
		c.Advance(30 * time.Second)
		models(t, r)
		wantRequests(t, fake, 2)
	})
	t.Run("a fresh list is used when the provider changed it", func(t *testing.T) {
		r, fake, c := setup(t)
		models(t, r)
		fake.setModels("qwen3", "qwen3-coder")
		c.Advance(31 * time.Second)
		got, err := r.Models(ctx, "ollama")
		must(t, err)
		if want := []string{"qwen3", "qwen3-coder"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Models = %q, want %q", got, want)
		}
	})
	t.Run("SetOn drops the cache", func(t *testing.T) {
		r, fake, _ := setup(t)
		models(t, r)
		must(t, r.SetOn("ollama", true))
		models(t, r)
		wantRequests(t, fake, 2)
	})
	t.Run("Save drops the cache", func(t *testing.T) {
		r, fake, _ := setup(t)
		models(t, r)
		must(t, r.Save(provider.Provider{Name: "ollama", BaseURL: fake.URL, On: true}, true))
		models(t, r)
		wantRequests(t, fake, 2)
	})
	t.Run("saving another provider keeps this one's cache", func(t *testing.T) {
		r, fake, _ := setup(t)
		models(t, r)
		mustSave(t, r, provider.Provider{Name: "vllm", BaseURL: "http://127.0.0.1:8000"})
		must(t, r.SetOn("vllm", true))
		models(t, r)
		wantRequests(t, fake, 1)
	})
	t.Run("Test always asks", func(t *testing.T) {
		r, fake, _ := setup(t)
		models(t, r)
		_, err := r.Test(ctx, "ollama")
		must(t, err)
		_, err = r.Test(ctx, "ollama")
		must(t, err)
		wantRequests(t, fake, 3)
	})
	t.Run("a failure is not cached", func(t *testing.T) {
		r, fake, _ := setup(t)
		fake.answer(http.StatusInternalServerError, "busy")
		if _, err := r.Models(ctx, "ollama"); err == nil {
			t.Fatal("Models succeeded on a 500")
		}
		fake.answer(http.StatusOK, "")
		models(t, r)
		wantRequests(t, fake, 2)
	})
}

func TestModelsErrors(t *testing.T) {
	closed := closedPort(t)
	// A provider that echoes the key back, as some do in their errors.
	echo := `{"error":{"message":"Incorrect API key provided: ` + secretKey + `"}}`
	cases := []struct {
		name    string
		status  int
		body    string
		key     string
		baseURL string // instead of the fake provider's
		message string
	}{
		{"401 refuses the key", http.StatusUnauthorized, echo, secretKey, "", "ollama refused the key."},
		{"403 refuses the key", http.StatusForbidden, echo, secretKey, "", "ollama refused the key."},
		{"401 without a key asks for one", http.StatusUnauthorized, `{"error":"auth"}`, "", "", "ollama asks for a key; add one in Settings."},
		{"404 is the wrong base URL", http.StatusNotFound, echo, secretKey, "", "ollama has no model list at {base}/v1/models; check the base URL."},
		{"500", http.StatusInternalServerError, "boom " + secretKey, secretKey, "", "ollama answered HTTP 500 when asked for its models."},
		{"429", http.StatusTooManyRequests, echo, secretKey, "", "ollama answered HTTP 429 when asked for its models."},
		{"not JSON", http.StatusOK, "<html>" + secretKey + "</html>", secretKey, "", "ollama did not answer with a model list."},
		{"JSON that is not a list", http.StatusOK, `{"models":["a"],"key":"` + secretKey + `"}`, secretKey, "", "ollama did not answer with a model list."},
		{"unreachable", 0, "", secretKey, closed, "ollama could not be reached at {base}."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := newFakeProvider(t, "")
			fake.answer(c.status, c.body)
			base := fake.URL
			if c.baseURL != "" {
				base = c.baseURL
			}
			var log logBuffer
			r := openRegistryLog(t, t.TempDir(), newClock(), nil, &log)
			mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: base, APIKey: c.key, On: true})
			_, err := r.Models(context.Background(), "ollama")
			wantError(t, err, refusal.Unavailable, strings.ReplaceAll(c.message, "{base}", base))
			wantNoKey(t, "the log", log.String(), secretKey)
			if !strings.Contains(log.String(), "provider=ollama") {
				t.Fatalf("the failure was not logged: %q", log.String())
			}
			if strings.Contains(c.body, secretKey) && !strings.Contains(log.String(), "••••") {
				t.Fatalf("the log lacks the provider's redacted answer: %q", log.String())
			}
		})
	}
}

func TestModelsTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close)
	t.Run("a provider out of time", func(t *testing.T) {
		// The client's own shorter limit stands in for the 10 seconds.
		r := openRegistryLog(t, t.TempDir(), newClock(), &http.Client{Timeout: 50 * time.Millisecond}, nil)
		mustSave(t, r, provider.Provider{Name: "vllm", BaseURL: slow.URL, APIKey: secretKey, On: true})
		_, err := r.Models(context.Background(), "vllm")
		wantError(t, err, refusal.Unavailable, "vllm did not answer within 50ms.")
	})
	t.Run("a caller that stops", func(t *testing.T) {
		r := openRegistry(t, t.TempDir(), newClock())
		mustSave(t, r, provider.Provider{Name: "vllm", BaseURL: slow.URL, On: true})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := r.Models(ctx, "vllm")
		wantError(t, err, refusal.Unavailable, "Asking vllm for its models was stopped before it answered.")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("errors.Is(%v, context.Canceled) = false", err)
		}
	})
}

func TestModelsTurnedOffSendsNothing(t *testing.T) {
	fake := newFakeProvider(t, "Bearer "+secretKey, "qwen3")
	r := openRegistry(t, t.TempDir(), newClock())
	mustSave(t, r, provider.Provider{Name: "ollama", BaseURL: fake.URL, APIKey: secretKey, On: false})
	_, err := r.Models(context.Background(), "ollama")
	wantError(t, err, refusal.Conflict, "ollama is not turned on in Settings.")
	if n := fake.Requests(); n != 0 {
		t.Fatalf("a provider turned off got %d requests", n)
	}
	// The owner's Test button asks it by name, to try it before turning it on.
	got, err := r.Test(context.Background(), "ollama")
	if err != nil || !reflect.DeepEqual(got, []string{"qwen3"}) {
		t.Fatalf("Test = %q, %v", got, err)
	}
}

func TestKeyNotFollowedOnRedirect(t *testing.T) {
	elsewhere := newFakeProvider(t, "", "stolen")
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/models", http.StatusFound)
	}))
	t.Cleanup(redirecting.Close)
	r := openRegistry(t, t.TempDir(), newClock())
	mustSave(t, r, provider.Provider{Name: "openai", BaseURL: redirecting.URL, APIKey: secretKey, On: true})
	_, err := r.Models(context.Background(), "openai")
	wantError(t, err, refusal.Unavailable, "openai answered HTTP 302 when asked for its models.")
	if n := elsewhere.Requests(); n != 0 {
		t.Fatalf("the redirect was followed: the other host got %d requests with %q", n, elsewhere.Auth())
	}
}

// closedPort is a loopback URL that nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	must(t, l.Close())
	return "http://" + addr
}
