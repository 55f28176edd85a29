package plan

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxModelRef is the longest model reference accepted, in characters.
const MaxModelRef = 200

// ParseModelRef splits a model reference. A bare id (gpt-5-mini) is a
// model of the provider in use, and provider is "". Anything with a colon
// is provider:model, split at the first colon: ollama:qwen3:27b is model
// qwen3:27b of ollama, so a model id with a colon of its own needs its
// provider written. The error is a sentence for the person.
func ParseModelRef(ref string) (provider, model string, err error) {
	switch n := utf8.RuneCountInString(ref); {
	case ref == "":
		return "", "", errors.New("The model reference is empty: write a model id, or provider:model.")
	case !utf8.ValidString(ref):
		return "", "", errors.New("The model reference is not valid text.")
	case n > MaxModelRef:
		return "", "", fmt.Errorf("The model reference has %d characters; a reference is at most %d.", n, MaxModelRef)
	case strings.ContainsFunc(ref, unicode.IsSpace):
		return "", "", fmt.Errorf("The model reference %q contains a space; write it without spaces.", ref)
	case strings.ContainsFunc(ref, unicode.IsControl):
		return "", "", fmt.Errorf("The model reference %q contains a control character.", ref)
	}
	provider, model, found := strings.Cut(ref, ":")
	if !found {
		return "", ref, nil
	}
	switch {
	case provider == "":
		return "", "", fmt.Errorf("The model reference %q has no provider before the colon; write provider:model.", ref)
	case model == "":
		return "", "", fmt.Errorf("The model reference %q has no model after the colon; write provider:model.", ref)
	}
	return provider, model, nil
}

// ModelFor is the model a task runs on, and where it came from: the
// task's own model when a person chose one ("task"), else its tier's
// model from intent-models.json ("tier quick"), else the model chosen in
// Settings ("settings"). Both are "" when none is set.
func ModelFor(taskModel string, tier string, tierModels map[string]string, settingsModel string) (model string, source string) {
	if m := strings.TrimSpace(taskModel); m != "" {
		return m, "task"
	}
	if m := strings.TrimSpace(tierModels[tier]); m != "" {
		return m, "tier " + tier
	}
	if m := strings.TrimSpace(settingsModel); m != "" {
		return m, "settings"
	}
	return "", ""
}
