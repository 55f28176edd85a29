// Package provider keeps the AI providers the owner set up in Settings —
// each a name, a base URL of an OpenAI-compatible API, an optional key,
// and whether it is turned on — and the Settings model, in
// <root>/launcher/providers.json. It lists the models a provider offers and
// resolves a model reference to the one endpoint a turn is sent to. A key
// is written only to that file (mode 0600) and sent only to its own
// provider; no listing, error or log line carries it.
package provider

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"autoapp/intent/refusal"
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Limits of a provider's fields.
const (
	MaxName    = 40
	MaxBaseURL = 2000
	MaxAPIKey  = 4096
	// A context window set in Settings is 0 (ask the provider) or
	// between these, in tokens.
	MinContextTokens = 512
	MaxContextTokens = 10_000_000
)

// Provider is one OpenAI-compatible API the owner set up. BaseURL is kept
// without a trailing slash and without the /v1 the client appends.
// APIKey is never marshalled: the file has its own shape, and a page or a
// log that prints a Provider by mistake shows no key.
type Provider struct {
	Name    string `json:"name"`
	BaseURL string `json:"baseUrl"`
	APIKey  string `json:"-"`
	On      bool   `json:"on"`
	// ContextTokens is the context window of its models as the owner
	// set it (for Ollama, the num_ctx it runs with); 0 leaves it to what
	// the provider says.
	ContextTokens int `json:"contextTokens,omitempty"`
	// NoTextCalls turns off reading the tool calls its models write as
	// text (Hermes, Llama, Mistral or fenced JSON) when they send none.
	NoTextCalls bool `json:"noTextCalls,omitempty"`
}

// String names the provider without its key.
func (p Provider) String() string {
	return fmt.Sprintf("%s (%s, %s)", p.Name, p.BaseURL, onOff(p.On))
}

// LogValue keeps the key out of structured logs.
func (p Provider) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", p.Name), slog.String("baseUrl", p.BaseURL), slog.Bool("on", p.On))
}

// ProviderView is a provider as a page shows it: the key masked.
type ProviderView struct {
	Name    string `json:"name"`
	BaseURL string `json:"baseUrl"`
	// KeyMask is "••••" and the key's last four characters when the key
	// has at least 12, else "••••"; "" when there is no key.
	KeyMask       string `json:"keyMask"`
	HasKey        bool   `json:"hasKey"`
	On            bool   `json:"on"`
	ContextTokens int    `json:"contextTokens,omitempty"`
	NoTextCalls   bool   `json:"noTextCalls,omitempty"`
}

// Endpoint is where one turn goes: the provider, its base URL (without
// /v1), its key and the model id as that provider knows it.
type Endpoint struct {
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl"`
	APIKey   string `json:"-"`
	Model    string `json:"model"`
	// ContextTokens is the model's context window; 0 when unknown.
	ContextTokens int `json:"contextTokens,omitempty"`
	// NoTextCalls is the provider's: tool calls written as text are not read.
	NoTextCalls bool `json:"noTextCalls,omitempty"`
}

// String names the endpoint without its key.
func (e Endpoint) String() string { return e.Provider + ":" + e.Model + " at " + e.BaseURL }

// LogValue keeps the key out of structured logs.
func (e Endpoint) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", e.Provider), slog.String("baseUrl", e.BaseURL), slog.String("model", e.Model))
}

func (p Provider) view() ProviderView {
	return ProviderView{Name: p.Name, BaseURL: p.BaseURL, KeyMask: MaskKey(p.APIKey), HasKey: p.APIKey != "", On: p.On, ContextTokens: p.ContextTokens, NoTextCalls: p.NoTextCalls}
}

// MaskKey is how a key is shown: "••••" and its last four characters when
// it has at least 12 (so the shown part is a small share of it), else
// "••••"; "" for no key.
func MaskKey(key string) string {
	switch {
	case key == "":
		return ""
	case len(key) >= 12:
		return "••••" + key[len(key)-4:]
	}
	return "••••"
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func validateName(name string) *refusal.Error {
	switch n := utf8.RuneCountInString(name); {
	case name == "":
		return refuse(refusal.Invalid, "The provider name is empty; write one such as ollama or open-router.")
	case n > MaxName:
		return refuse(refusal.Invalid, "The provider name has %d characters; a name is at most %d.", n, MaxName)
	case !namePattern.MatchString(name):
		return refuse(refusal.Invalid, "The provider name %q may hold only lowercase letters, digits and dashes between them, such as open-router.", name)
	}
	return nil
}

// normaliseBaseURL checks a base URL and returns it without a trailing
// slash or /v1. The sentences never quote the URL: one with a password in
// it is refused, and the refusal must not repeat the password.
func normaliseBaseURL(raw string) (string, *refusal.Error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", refuse(refusal.Invalid, "The base URL is empty; write the address the provider answers at, such as http://127.0.0.1:11434.")
	case len(s) > MaxBaseURL:
		return "", refuse(refusal.Invalid, "The base URL is longer than %d characters.", MaxBaseURL)
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", refuse(refusal.Invalid, "The base URL must not contain spaces or control characters.")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "":
		return "", refuse(refusal.Invalid, "The base URL must start with http:// or https://.")
	case u.User != nil:
		return "", refuse(refusal.Invalid, "The base URL must not carry a user name or password; put a key in the API key field.")
	case u.Host == "" || u.Hostname() == "":
		return "", refuse(refusal.Invalid, "The base URL has no host; write it as http://host:port.")
	case strings.Contains(s, "?"):
		return "", refuse(refusal.Invalid, "The base URL must not have a query (the part after ?).")
	case strings.Contains(s, "#"):
		return "", refuse(refusal.Invalid, "The base URL must not have a fragment (the part after #).")
	}
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, "/v1")
	return strings.TrimRight(s, "/"), nil
}

func validateKey(key string) *refusal.Error {
	switch {
	case len(key) > MaxAPIKey:
		return refuse(refusal.Invalid, "The API key has %d characters; a key is at most %d.", len(key), MaxAPIKey)
	case strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r >= 0x7f }):
		// A key travels in an HTTP header: visible ASCII only.
		return refuse(refusal.Invalid, "The API key may hold only visible characters, without spaces or line breaks.")
	}
	return nil
}
