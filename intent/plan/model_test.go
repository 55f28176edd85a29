package plan_test

import (
	"strings"
	"testing"

	"autoapp/intent/plan"
)

func TestParseModelRef(t *testing.T) {
	cases := []struct {
		name, ref, provider, model, err string
	}{
		{"bare id", "gpt-5-mini", "", "gpt-5-mini", ""},
		{"provider and model", "openai:gpt-5", "openai", "gpt-5", ""},
		{"split at the first colon", "ollama:qwen3:27b", "ollama", "qwen3:27b", ""},
		{"200 characters", strings.Repeat("m", 200), "", strings.Repeat("m", 200), ""},
		{"empty", "", "", "", "The model reference is empty: write a model id, or provider:model."},
		{"no provider", ":qwen3", "", "", `The model reference ":qwen3" has no provider before the colon; write provider:model.`},
		{"no model", "ollama:", "", "", `The model reference "ollama:" has no model after the colon; write provider:model.`},
		{"space", "qwen 3", "", "", `The model reference "qwen 3" contains a space; write it without spaces.`},
		{"tab", "ollama:\tqwen3", "", "", `The model reference "ollama:\tqwen3" contains a space; write it without spaces.`},
		{"control character", "qwen\x003", "", "", `The model reference "qwen\x003" contains a control character.`},
		{"201 characters", strings.Repeat("m", 201), "", "", "The model reference has 201 characters; a reference is at most 200."},
		{"not text", "qwen\xff", "", "", "The model reference is not valid text."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			provider, model, err := plan.ParseModelRef(c.ref)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || provider != c.provider || model != c.model {
				t.Fatalf("ParseModelRef(%q) = %q, %q, %v; want %q, %q", c.ref, provider, model, err, c.provider, c.model)
			}
		})
	}
}

func TestModelFor(t *testing.T) {
	tiers := map[string]string{plan.TierQuick: "ollama:qwen3:8b", plan.TierStandard: "", plan.TierDeep: "  "}
	cases := []struct {
		name, taskModel, tier, settings string
		tiers                           map[string]string
		model, source                   string
	}{
		{"the task's own model", "openai:gpt-5", plan.TierQuick, "gpt-5-mini", tiers, "openai:gpt-5", "task"},
		{"the tier's model", "", plan.TierQuick, "gpt-5-mini", tiers, "ollama:qwen3:8b", "tier quick"},
		{"an empty tier model falls to Settings", "", plan.TierStandard, "gpt-5-mini", tiers, "gpt-5-mini", "settings"},
		{"a blank tier model falls to Settings", "", plan.TierDeep, "gpt-5-mini", tiers, "gpt-5-mini", "settings"},
		{"no tier models", " ", plan.TierQuick, "gpt-5-mini", nil, "gpt-5-mini", "settings"},
		{"none at all", "", plan.TierQuick, "", nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model, source := plan.ModelFor(c.taskModel, c.tier, c.tiers, c.settings)
			if model != c.model || source != c.source {
				t.Fatalf("ModelFor = %q, %q; want %q, %q", model, source, c.model, c.source)
			}
		})
	}
}
