package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"autoapp/intent/atomicfile"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// FileName is the registry's file under <root>/launcher.
const FileName = "providers.json"

// Registry is the providers and the Settings model, kept in
// <root>/launcher/providers.json. Every change is written to the file
// before it is seen, so a refused or failed write changes nothing.
type Registry struct {
	path   string
	now    func() time.Time
	client *http.Client
	log    *slog.Logger

	mu        sync.Mutex
	providers []Provider // in the order they were added
	model     string     // the Settings model, a model reference or ""
	offered   map[string]offer
	// generation counts the changes of each provider, so that a model list
	// fetched before a change is not cached after it.
	generation map[string]uint64
}

// file is providers.json. It is the only place a key is written.
type file struct {
	Providers    []fileProvider `json:"providers"`
	DefaultModel string         `json:"defaultModel"`
}

type fileProvider struct {
	Name    string `json:"name"`
	BaseURL string `json:"baseUrl"`
	APIKey  string `json:"apiKey,omitempty"`
	On      bool   `json:"on"`
	// ContextTokens is the context window set in Settings; 0 or absent
	// leaves it to the provider.
	ContextTokens int `json:"contextTokens,omitempty"`
	// NoTextCalls turns off reading tool calls its models write as text.
	NoTextCalls bool `json:"noTextCalls,omitempty"`
}

// NewRegistry opens the registry under root, reading providers.json when
// it exists. now dates the model-list cache; client
// asks providers for their models (nil means a plain client); log receives
// providers' raw answers, never a key (nil discards).
func NewRegistry(root string, now func() time.Time, client *http.Client, log *slog.Logger) (*Registry, error) {
	if root == "" {
		return nil, errors.New("provider: no root folder given")
	}
	if now == nil {
		return nil, errors.New("provider: no clock given")
	}
	if client == nil {
		client = &http.Client{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A key goes to its own base URL and nowhere else: a redirect is
	// answered as it stands, never followed with the key.
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := &Registry{
		path:       filepath.Join(root, "launcher", FileName),
		now:        now,
		client:     &c,
		log:        log,
		offered:    map[string]offer{},
		generation: map[string]uint64{},
	}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Registry) load() error {
	b, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("provider: %s is not a providers file: %w", r.path, err)
	}
	seen := map[string]bool{}
	for i, fp := range f.Providers {
		p := Provider{Name: fp.Name, APIKey: fp.APIKey, On: fp.On, ContextTokens: fp.ContextTokens, NoTextCalls: fp.NoTextCalls}
		if e := validateName(p.Name); e != nil {
			return fmt.Errorf("provider: %s, provider %d: %s", r.path, i+1, e.Message)
		}
		if seen[p.Name] {
			return fmt.Errorf("provider: %s names %q twice", r.path, p.Name)
		}
		seen[p.Name] = true
		base, e := normaliseBaseURL(fp.BaseURL)
		if e == nil {
			e = validateKey(p.APIKey)
		}
		if e != nil {
			return fmt.Errorf("provider: %s, provider %q: %s", r.path, p.Name, e.Message)
		}
		p.BaseURL = base
		r.providers = append(r.providers, p)
	}
	if f.DefaultModel != "" {
		if _, _, err := plan.ParseModelRef(f.DefaultModel); err != nil {
			return fmt.Errorf("provider: %s, default model: %s", r.path, err.Error())
		}
	}
	r.model = f.DefaultModel
	return nil
}

// List is every provider in the order they were added, keys masked.
func (r *Registry) List() []ProviderView {
	r.mu.Lock()
	defer r.mu.Unlock()
	views := make([]ProviderView, len(r.providers))
	for i, p := range r.providers {
		views[i] = p.view()
	}
	return views
}

// Get is one provider, its key masked, for the Settings page's edit form.
func (r *Registry) Get(name string) (ProviderView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.find(name)
	if i < 0 {
		return ProviderView{}, noProvider(name)
	}
	return r.providers[i].view(), nil
}

// Save adds the provider p or replaces the one of the same name. With
// keepKey, an empty APIKey keeps the stored key (the Settings page sends
// none when the owner did not retype it); without, an empty APIKey means
// no key. ClearKey removes a key explicitly.
func (r *Registry) Save(p Provider, keepKey bool) error {
	return r.save(p, func(int) (bool, error) { return keepKey, nil })
}

// save validates p and writes it in place of the provider of its name, or
// as a new one; rule, under the lock, sees the index of the provider of
// that name (-1: none), refuses or says whether an empty key keeps the
// stored one.
func (r *Registry) save(p Provider, rule func(existing int) (keepKey bool, err error)) error {
	p.Name = strings.TrimSpace(p.Name)
	p.APIKey = strings.TrimSpace(p.APIKey)
	if e := validateName(p.Name); e != nil {
		return e
	}
	base, e := normaliseBaseURL(p.BaseURL)
	if e != nil {
		return e
	}
	p.BaseURL = base
	if e := validateKey(p.APIKey); e != nil {
		return e
	}
	if p.ContextTokens != 0 && (p.ContextTokens < MinContextTokens || p.ContextTokens > MaxContextTokens) {
		return refuse(refusal.Invalid, "The context window must be a number of tokens between %d and %d, or empty to ask the provider.", MinContextTokens, MaxContextTokens)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	keepKey, err := rule(r.find(p.Name))
	if err != nil {
		return err
	}
	next := slices.Clone(r.providers)
	if i := r.find(p.Name); i >= 0 {
		if keepKey && p.APIKey == "" {
			p.APIKey = next[i].APIKey
		}
		next[i] = p
	} else {
		next = append(next, p)
	}
	return r.commit(next, r.model, p.Name)
}

// Edit is the Settings form's add or edit of a provider, as typed: Editing
// names the provider edited ("" adds Name); ContextTokens is the window as
// typed ("" asks the provider; commas allowed); an empty APIKey keeps the
// stored key when editing, unless ClearKey.
type Edit struct {
	Editing       string
	Name          string
	BaseURL       string
	APIKey        string
	On            bool
	ContextTokens string
	ClearKey      bool
	// NoTextCalls turns off reading tool calls written as text.
	NoTextCalls bool
}

// Apply checks an edit from the Settings form against every rule and
// writes it once: adding a name that exists, renaming, editing a provider
// that is gone or a window that is not a number is refused with a
// sentence, and nothing is written.
func (r *Registry) Apply(e Edit) error {
	e.Name = strings.TrimSpace(e.Name)
	tokens := 0
	if t := strings.TrimSpace(e.ContextTokens); t != "" {
		n, err := strconv.Atoi(strings.ReplaceAll(t, ",", ""))
		if err != nil {
			return refuse(refusal.Invalid, "The context window %q is not a whole number of tokens.", t)
		}
		tokens = n
	}
	p := Provider{Name: e.Name, BaseURL: e.BaseURL, APIKey: e.APIKey, On: e.On, ContextTokens: tokens, NoTextCalls: e.NoTextCalls}
	return r.save(p, func(existing int) (keepKey bool, err error) {
		switch {
		case e.Editing == "" && existing >= 0:
			return false, refuse(refusal.Conflict, "A provider called %s exists already; edit it instead.", e.Name)
		case e.Editing != "" && e.Editing != e.Name:
			return false, refuse(refusal.Invalid, "A provider cannot be renamed; remove it and add it under the new name.")
		case e.Editing != "" && existing < 0:
			return false, noProvider(e.Editing)
		}
		return e.Editing != "" && !e.ClearKey, nil
	})
}

// ClearKey removes the named provider's key.
func (r *Registry) ClearKey(name string) error {
	return r.change(name, func(p *Provider) { p.APIKey = "" })
}

// SetOn turns the named provider on or off. Turning it to the state it is
// in already is not an error: the Settings toggle may be sent twice.
func (r *Registry) SetOn(name string, on bool) error {
	return r.change(name, func(p *Provider) { p.On = on })
}

// Remove removes the named provider. The provider that serves the
// Settings model is kept until another Settings model is chosen.
func (r *Registry) Remove(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.find(name)
	if i < 0 {
		return noProvider(name)
	}
	if provider, _, err := plan.ParseModelRef(r.model); err == nil && provider == name {
		return refuse(refusal.Conflict, "%s serves the Settings model %s; choose another Settings model before removing it.", name, r.model)
	}
	return r.commit(slices.Delete(slices.Clone(r.providers), i, i+1), r.model, name)
}

// DefaultModel is the Settings model, a model reference, or "" when none
// is chosen.
func (r *Registry) DefaultModel() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model
}

// SetDefaultModel chooses the Settings model; "" clears it. A reference
// that names a provider must name one in Settings. The model itself is
// not checked against the provider: the owner may type one it has not
// listed yet, and Resolve says so when a turn needs it.
func (r *Registry) SetDefaultModel(ref string) error {
	ref = strings.TrimSpace(ref)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkModel(ref, "the Settings model"); err != nil {
		return err
	}
	return r.commit(r.providers, ref, "")
}

// CheckModel validates a model reference someone is about to store (a tier
// model, a task's model): well formed, and a provider: prefix names a
// provider in Settings. "" is allowed: it means "use the next choice".
func (r *Registry) CheckModel(ref, what string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkModel(strings.TrimSpace(ref), what)
}

func (r *Registry) checkModel(ref, what string) error {
	if ref == "" {
		return nil
	}
	provider, _, err := plan.ParseModelRef(ref)
	if err != nil {
		return refuse(refusal.Invalid, "%s", err.Error())
	}
	if provider != "" && r.find(provider) < 0 {
		return refuse(refusal.Invalid, "There is no provider called %q for %s %s.", provider, what, ref)
	}
	return nil
}

// change applies edit to the named provider and writes the registry.
func (r *Registry) change(name string, edit func(*Provider)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.find(name)
	if i < 0 {
		return noProvider(name)
	}
	next := slices.Clone(r.providers)
	edit(&next[i])
	return r.commit(next, r.model, name)
}

// commit writes providers and model to the file, then makes them the
// registry's, dropping the cached model list of the provider changed.
// The caller holds r.mu.
func (r *Registry) commit(providers []Provider, model, changed string) error {
	f := file{Providers: make([]fileProvider, len(providers)), DefaultModel: model}
	for i, p := range providers {
		// The same fields; only the file's shape writes the key.
		f.Providers[i] = fileProvider(p)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	if err := atomicfile.Write(r.path, append(b, '\n')); err != nil {
		return fmt.Errorf("provider: cannot write %s: %w", r.path, err)
	}
	r.providers, r.model = providers, model
	if changed != "" {
		delete(r.offered, changed)
		r.generation[changed]++
	}
	return nil
}

// find is the index of the named provider, or -1. The caller holds r.mu.
func (r *Registry) find(name string) int {
	return slices.IndexFunc(r.providers, func(p Provider) bool { return p.Name == name })
}

func noProvider(name string) *refusal.Error {
	return refuse(refusal.NotFound, "There is no provider called %q.", name)
}
