package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"autoapp/executor/ai"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// Limits of asking a provider for its models.
const (
	// ModelsTimeout bounds one request for a model list.
	ModelsTimeout = 10 * time.Second
	// CacheFor is how long a model list is kept before it is asked again.
	CacheFor = 30 * time.Second
	// MaxModelList is the largest model list read (OpenRouter's runs to
	// a few hundred models with their descriptions).
	MaxModelList = 16 << 20
	// maxLogged is how much of a provider's raw answer goes to the log.
	maxLogged = 500
)

// offer is a provider's model list and when it was fetched.
type offer struct {
	models []string
	// windows are the context windows, in tokens, of the models whose
	// provider says (see contextWindows).
	windows map[string]int
	at      time.Time
}

// Models is the model ids the named provider offers, from GET
// <base>/v1/models, kept for CacheFor; changing the provider forgets them.
// A provider that is not turned on is asked nothing. A failure is one
// sentence of ours; the provider's raw answer goes only to the log.
func (r *Registry) Models(ctx context.Context, name string) ([]string, error) {
	r.mu.Lock()
	i := r.find(name)
	if i < 0 {
		r.mu.Unlock()
		return nil, noProvider(name)
	}
	p := r.providers[i]
	if !p.On {
		r.mu.Unlock()
		return nil, notOn(name)
	}
	if o, ok := r.offered[name]; ok && r.now().Sub(o.at) < CacheFor {
		r.mu.Unlock()
		return slices.Clone(o.models), nil
	}
	r.mu.Unlock()
	return r.fetchAndKeep(ctx, p)
}

// Test asks the named provider for its models now, past the cache: the
// Settings page's Test button. The owner asks for it by name, so it asks
// a provider that is turned off too (to try one before turning it on);
// nothing else does.
func (r *Registry) Test(ctx context.Context, name string) ([]string, error) {
	r.mu.Lock()
	i := r.find(name)
	if i < 0 {
		r.mu.Unlock()
		return nil, noProvider(name)
	}
	p := r.providers[i]
	r.mu.Unlock()
	return r.fetchAndKeep(ctx, p)
}

// fetchAndKeep fetches p's model list and caches it, unless p changed
// while the request was out.
func (r *Registry) fetchAndKeep(ctx context.Context, p Provider) ([]string, error) {
	r.mu.Lock()
	generation := r.generation[p.Name]
	r.mu.Unlock()
	models, windows, body, err := r.fetch(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(windows) == 0 && servedByLlamaCpp(body) {
		windows = r.serverWindow(ctx, p, models)
	}
	r.mu.Lock()
	if r.generation[p.Name] == generation {
		r.offered[p.Name] = offer{models: models, windows: windows, at: r.now()}
	}
	r.mu.Unlock()
	return slices.Clone(models), nil
}

// fetch asks p for its models. The key goes in the Authorization header to
// p's own base URL; the client follows no redirect.
func (r *Registry) fetch(ctx context.Context, p Provider) ([]string, map[string]int, []byte, error) {
	limit := ModelsTimeout
	if t := r.client.Timeout; t > 0 && t < limit {
		limit = t
	}
	ctx2, cancel := context.WithTimeout(ctx, ModelsTimeout)
	defer cancel()
	u := p.BaseURL + "/v1/models"
	req, err := http.NewRequestWithContext(ctx2, http.MethodGet, u, nil)
	if err != nil {
		r.logFailure(p, u, 0, err, nil)
		return nil, nil, nil, refuse(refusal.Unavailable, "%s could not be reached at %s.", p.Name, p.BaseURL)
	}
	req.Header.Set("Accept", "application/json")
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.logFailure(p, u, 0, err, nil)
		return nil, nil, nil, failure(ctx, p, err, limit)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxModelList+1))
	if err != nil {
		r.logFailure(p, u, resp.StatusCode, err, body)
		return nil, nil, nil, failure(ctx, p, err, limit)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		r.logFailure(p, u, code, nil, body)
		if p.APIKey == "" {
			return nil, nil, nil, refuse(refusal.Unavailable, "%s asks for a key; add one in Settings.", p.Name)
		}
		return nil, nil, nil, refuse(refusal.Unavailable, "%s refused the key.", p.Name)
	case code == http.StatusNotFound:
		r.logFailure(p, u, code, nil, body)
		return nil, nil, nil, refuse(refusal.Unavailable, "%s has no model list at %s/v1/models; check the base URL.", p.Name, p.BaseURL)
	case code < 200 || code > 299:
		r.logFailure(p, u, code, nil, body)
		return nil, nil, nil, refuse(refusal.Unavailable, "%s answered HTTP %d when asked for its models.", p.Name, code)
	}
	models, ok := parseModelList(body)
	if !ok {
		r.logFailure(p, u, resp.StatusCode, nil, body)
		return nil, nil, nil, refuse(refusal.Unavailable, "%s did not answer with a model list.", p.Name)
	}
	return models, contextWindows(body), body, nil
}

// servedByLlamaCpp says the model list is llama.cpp's server's, which
// names itself the owner of its model.
func servedByLlamaCpp(body []byte) bool {
	var list struct {
		Data []struct {
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	return json.Unmarshal(body, &list) == nil && len(list.Data) == 1 && list.Data[0].OwnedBy == "llamacpp"
}

// contextWindows reads, from a model list, the context window each model
// has where the provider says: OpenRouter's context_length, vLLM's
// max_model_len.
func contextWindows(body []byte) map[string]int {
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			ContextLength int    `json:"context_length"`
			MaxModelLen   int    `json:"max_model_len"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return nil
	}
	windows := map[string]int{}
	for _, m := range list.Data {
		if n := max(m.ContextLength, m.MaxModelLen); n > 0 {
			windows[strings.TrimSpace(m.ID)] = n
		}
	}
	return windows
}

// serverWindow asks a llama.cpp server, which serves one model, for the
// context window it runs with (GET /props, n_ctx). Any other provider
// answers no such thing, and nothing is known.
func (r *Registry) serverWindow(ctx context.Context, p Provider, models []string) map[string]int {
	if len(models) != 1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ModelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.BaseURL+"/props", nil)
	if err != nil {
		return nil
	}
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&props) != nil || props.Settings.NCtx <= 0 {
		return nil
	}
	return map[string]int{models[0]: props.Settings.NCtx}
}

// window is the context window of model on the named provider: the one
// set in Settings, else the one the provider said, else 0 (unknown).
func (r *Registry) window(name, model string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := r.find(name); i >= 0 && r.providers[i].ContextTokens > 0 {
		return r.providers[i].ContextTokens
	}
	return r.offered[name].windows[model]
}

// parseModelList reads the OpenAI list shape {"data":[{"id":"…"}]} into
// sorted, distinct ids.
func parseModelList(body []byte) ([]string, bool) {
	if len(body) > MaxModelList {
		return nil, false
	}
	var list struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return nil, false
	}
	models := make([]string, 0, len(*list.Data))
	for _, m := range *list.Data {
		if id := strings.TrimSpace(m.ID); id != "" {
			models = append(models, id)
		}
	}
	slices.Sort(models)
	return slices.Compact(models), true
}

// failure is the sentence for a request that got no answer: stopped by the
// caller, out of time, or never connected.
func failure(ctx context.Context, p Provider, err error, limit time.Duration) *refusal.Error {
	if cerr := ctx.Err(); cerr != nil {
		return &refusal.Error{Code: refusal.Unavailable, Message: fmt.Sprintf("Asking %s for its models was stopped before it answered.", p.Name), Cause: cerr}
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		return refuse(refusal.Unavailable, "%s did not answer within %s.", p.Name, sayDuration(limit))
	}
	return refuse(refusal.Unavailable, "%s could not be reached at %s.", p.Name, p.BaseURL)
}

// logFailure writes what the provider answered, with its key cut out of
// anything that might echo it.
func (r *Registry) logFailure(p Provider, url string, status int, err error, body []byte) {
	attrs := []any{"provider", p.Name, "url", url}
	if status != 0 {
		attrs = append(attrs, "status", status)
	}
	if err != nil {
		attrs = append(attrs, "error", redact(err.Error(), p.APIKey))
	}
	if len(body) > 0 {
		// Redact before cutting, so the cut cannot leave a key's head.
		attrs = append(attrs, "answer", excerpt(redact(string(body), p.APIKey)))
	}
	r.log.Warn("provider: no model list", attrs...)
}

// excerpt is the head of a raw answer, cut on a character boundary.
func excerpt(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	cut := maxLogged
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "••••")
}

func notOn(name string) *refusal.Error {
	return refuse(refusal.Conflict, "%s is not turned on in Settings.", name)
}

// sayDuration writes a limit as a person reads it: "10 seconds".
func sayDuration(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// TryTools asks one of the provider's models for one small tool call (see
// ai.ProbeTools) and says in a sentence whether it can do the engineer's
// job: the Settings model when this provider serves it, else the first
// model models lists. A provider that lists none has nothing to try.
func (r *Registry) TryTools(ctx context.Context, name string, models []string) (bool, string) {
	r.mu.Lock()
	i := r.find(name)
	if i < 0 {
		r.mu.Unlock()
		return false, noProvider(name).Message
	}
	p, ref, inUse := r.providers[i], r.model, r.inUse()
	r.mu.Unlock()
	model := ""
	if prov, m, err := plan.ParseModelRef(ref); err == nil && ref != "" && (prov == name || prov == "" && inUse == name) && slices.Contains(models, m) {
		model = m
	} else if len(models) > 0 {
		model = models[0]
	}
	if model == "" {
		return false, name + " lists no model to try."
	}
	return ai.ProbeTools(ctx, ai.Endpoint{Provider: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Model: model, NoTextCalls: p.NoTextCalls}, r.now)
}
