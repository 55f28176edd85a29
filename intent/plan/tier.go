package plan

import (
	"fmt"
	"slices"
	"strings"
)

// The line counts the tier rule turns on.
const (
	QuickMaxLines = 60  // quick at most this many estimated lines
	DeepOverLines = 300 // deep over this many
)

var (
	quickLabels = []string{"copy", "theme", "views"}
	deepLabels  = []string{"migration", "contract"}
)

// Tier is the tier the host runs a task on, and the reasons, short
// phrases for the tier's tooltip. Deep when risk is high, reasoning is
// high, the estimate is over 300 lines, or a label is migration or
// contract; quick when reasoning is low, the estimate is at most 60 lines,
// risk is normal and every label is copy, theme or views; otherwise
// standard, with the reasons it is not quick.
func Tier(t Task) (tier string, reasons []string) {
	var deep []string
	if t.Risk == "high" {
		deep = append(deep, "risk is high")
	}
	if t.Reasoning == "high" {
		deep = append(deep, "reasoning is high")
	}
	if t.EstimatedLines > DeepOverLines {
		deep = append(deep, fmt.Sprintf("estimated %d lines, over %d", t.EstimatedLines, DeepOverLines))
	}
	for _, l := range deepLabels {
		if slices.Contains(t.Labels, l) {
			deep = append(deep, "label "+l)
		}
	}
	if len(deep) > 0 {
		return TierDeep, deep
	}

	var notQuick, others []string
	if t.Reasoning != "low" {
		notQuick = append(notQuick, notThe("reasoning", t.Reasoning, "low"))
	}
	if t.EstimatedLines > QuickMaxLines {
		notQuick = append(notQuick, fmt.Sprintf("estimated %d lines, over %d", t.EstimatedLines, QuickMaxLines))
	}
	if t.Risk != "normal" {
		notQuick = append(notQuick, notThe("risk", t.Risk, "normal"))
	}
	for _, l := range t.Labels {
		if !slices.Contains(quickLabels, l) && !slices.Contains(others, l) {
			others = append(others, l)
		}
	}
	if len(others) > 0 {
		notQuick = append(notQuick, labelPhrase(others)+", not only copy, theme or views")
	}
	if len(notQuick) > 0 {
		return TierStandard, append(notQuick, "nothing calls for deep")
	}

	labels := "no labels"
	if len(t.Labels) > 0 {
		labels = "labels " + and(unique(t.Labels))
	}
	return TierQuick, []string{"low reasoning", fmt.Sprintf("%d lines", t.EstimatedLines), labels}
}

func labelPhrase(ls []string) string {
	if len(ls) == 1 {
		return "label " + ls[0]
	}
	return "labels " + and(ls)
}

// and joins words as a sentence does: a, b and c.
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// notThe says a field is not the value quick needs: "reasoning medium, not low".
func notThe(field, v, want string) string {
	if v == "" {
		return field + " not set"
	}
	return field + " " + v + ", not " + want
}
