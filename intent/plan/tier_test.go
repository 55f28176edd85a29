package plan_test

import (
	"slices"
	"testing"

	"autoapp/intent/plan"
)

func TestTier(t *testing.T) {
	quick := func() plan.Task {
		return plan.Task{Reasoning: "low", EstimatedLines: 40, Risk: "normal", Labels: []string{"views"}}
	}
	cases := []struct {
		name    string
		change  func(*plan.Task)
		tier    string
		reasons []string
	}{
		{"quick", func(k *plan.Task) {}, plan.TierQuick, []string{"low reasoning", "40 lines", "labels views"}},
		{"quick at 60 lines", func(k *plan.Task) { k.EstimatedLines = 60 }, plan.TierQuick, []string{"low reasoning", "60 lines", "labels views"}},
		{"quick with copy and theme", func(k *plan.Task) { k.Labels = []string{"theme", "copy", "views"} }, plan.TierQuick,
			[]string{"low reasoning", "40 lines", "labels copy, theme and views"}},
		{"standard at 61 lines", func(k *plan.Task) { k.EstimatedLines = 61 }, plan.TierStandard,
			[]string{"estimated 61 lines, over 60", "nothing calls for deep"}},
		{"standard at 300 lines", func(k *plan.Task) { k.EstimatedLines = 300 }, plan.TierStandard,
			[]string{"estimated 300 lines, over 60", "nothing calls for deep"}},
		{"deep at 301 lines", func(k *plan.Task) { k.EstimatedLines = 301 }, plan.TierDeep, []string{"estimated 301 lines, over 300"}},
		{"deep at 420 lines", func(k *plan.Task) { k.EstimatedLines = 420 }, plan.TierDeep, []string{"estimated 420 lines, over 300"}},
		{"deep on high risk", func(k *plan.Task) { k.Risk = "high" }, plan.TierDeep, []string{"risk is high"}},
		{"deep on high reasoning", func(k *plan.Task) { k.Reasoning = "high" }, plan.TierDeep, []string{"reasoning is high"}},
		{"deep on migration", func(k *plan.Task) { k.Labels = []string{"views", "migration"} }, plan.TierDeep, []string{"label migration"}},
		{"deep on contract", func(k *plan.Task) { k.Labels = []string{"contract"} }, plan.TierDeep, []string{"label contract"}},
		{"deep gives every reason", func(k *plan.Task) {
			k.Risk, k.Reasoning, k.EstimatedLines, k.Labels = "high", "high", 900, []string{"contract", "migration"}
		}, plan.TierDeep, []string{"risk is high", "reasoning is high", "estimated 900 lines, over 300", "label migration", "label contract"}},
		{"standard on medium reasoning", func(k *plan.Task) { k.Reasoning = "medium" }, plan.TierStandard,
			[]string{"reasoning medium, not low", "nothing calls for deep"}},
		{"standard on a host label", func(k *plan.Task) { k.Labels = []string{"views", "host"} }, plan.TierStandard,
			[]string{"label host, not only copy, theme or views", "nothing calls for deep"}},
		{"standard on several reasons", func(k *plan.Task) {
			k.Reasoning, k.EstimatedLines, k.Labels = "", 100, []string{"acceptance", "host"}
		}, plan.TierStandard, []string{"reasoning not set", "estimated 100 lines, over 60",
			"labels acceptance and host, not only copy, theme or views", "nothing calls for deep"}},
		{"standard when risk is unset", func(k *plan.Task) { k.Risk = "" }, plan.TierStandard,
			[]string{"risk not set", "nothing calls for deep"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := quick()
			c.change(&k)
			tier, reasons := plan.Tier(k)
			if tier != c.tier || !slices.Equal(reasons, c.reasons) {
				t.Fatalf("Tier = %s %q, want %s %q", tier, reasons, c.tier, c.reasons)
			}
		})
	}
}
