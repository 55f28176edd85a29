package provider

import (
	"context"
	"slices"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// Resolve turns a model reference into the endpoint a turn is sent to. A
// bare id goes to the provider in use (InUse); provider:model to that
// provider. The provider must be in Settings and turned on — one that is
// not is sent nothing — and must still offer the model, which is checked
// against its model list before anything else is sent.
func (r *Registry) Resolve(ctx context.Context, ref string) (Endpoint, error) {
	name, model, err := plan.ParseModelRef(ref)
	if err != nil {
		return Endpoint{}, refuse(refusal.Invalid, "%s", err.Error())
	}
	r.mu.Lock()
	if name == "" {
		name = r.inUse()
		if name == "" {
			r.mu.Unlock()
			return Endpoint{}, refuse(refusal.Conflict, "Choose which provider serves %s in Settings.", model)
		}
	}
	i := r.find(name)
	if i < 0 {
		r.mu.Unlock()
		return Endpoint{}, refuse(refusal.NotFound, "There is no provider called %q in Settings.", name)
	}
	p := r.providers[i]
	r.mu.Unlock()
	if !p.On {
		return Endpoint{}, notOn(p.Name)
	}
	offered, err := r.Models(ctx, p.Name)
	if err != nil {
		return Endpoint{}, err
	}
	if !slices.Contains(offered, model) {
		return Endpoint{}, refuse(refusal.NotFound, "%s no longer offers %s.", p.Name, model)
	}
	return Endpoint{Provider: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Model: model, ContextTokens: r.window(p.Name, model), NoTextCalls: p.NoTextCalls}, nil
}

// InUse is the provider a bare model id goes to: the one the Settings
// model names, else the only provider turned on, else "" (the owner must
// choose).
func (r *Registry) InUse() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inUse()
}

// inUse is InUse for a caller that holds r.mu.
func (r *Registry) inUse() string {
	if r.model != "" {
		if name, _, err := plan.ParseModelRef(r.model); err == nil && name != "" {
			return name
		}
	}
	on := ""
	for _, p := range r.providers {
		if !p.On {
			continue
		}
		if on != "" {
			return ""
		}
		on = p.Name
	}
	return on
}
