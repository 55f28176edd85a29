package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"autoapp/intent/refusal"
)

// Limits on the fields of a plan.
const (
	MaxTitle          = 120
	MaxSummary        = 600
	MaxCriterion      = 400
	MaxItem           = 400
	MaxEstimatedLines = 5000
	MaxLabels         = 4
)

// slugPattern is NNNN-words: the task's number in four digits or more, then
// one to six lowercase words.
var slugPattern = regexp.MustCompile(`^\d{4,}(-[a-z0-9]+){1,6}$`)

// IsSlug reports whether s has the form of a task's slug (0007-add-tags).
func IsSlug(s string) bool { return slugPattern.MatchString(s) }

// activationWording catches criteria that defer a check to after
// activation. Acceptance runs against a preview before anything is
// activated, so such a criterion can never be checked. Whole words only,
// case aside: "deactivated" and "onlyafter" do not trip it.
var activationWording = regexp.MustCompile(strings.NewReplacer(" ", `[\s\p{Zs}]+`).Replace(
	`(?i)\b(after activat[a-z]*|not in a preview|only after|in the activated)\b`))

// hostWordings are the host's own last criterion, in this host's words and
// in the seed's; an engineer who copies either is refused.
var hostWordings = []string{
	normalCriterion(HostCriterion),
	normalCriterion("Every criterion above has exactly one test named after it"),
}

// ValidateTask checks one task's plan on its own and names the field of
// each problem, with a sentence the engineer can act on. Indexes in field
// names count from zero, as in the task's JSON. The graph across tasks is
// ValidateGraph's. The checks run field by field, in the order of the
// task's JSON.
func ValidateTask(t Task) refusal.Problems {
	var ps problems
	for _, check := range taskChecks {
		check(t, &ps)
	}
	return refusal.Problems(ps)
}

// problems collects what the checks of a task find.
type problems refusal.Problems

func (ps *problems) add(field, format string, args ...any) {
	*ps = append(*ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// taskChecks are ValidateTask's checks, one per field or pair of fields.
var taskChecks = []func(Task, *problems){
	checkSlug, checkTitle, checkPriority, checkLabels, checkBlockedBy, checkEstimate, checkLocks, checkRisk,
	checkRepaidBy, checkReasoning, checkSummary, checkCriteria, checkNoFailurePath, checkItems,
}

func checkSlug(t Task, ps *problems) {
	if t.Slug != "" && !IsSlug(t.Slug) {
		ps.add("slug", "%q is not a slug: write the number in four digits or more, then one to six lowercase words joined by dashes (0007-add-tags)", t.Slug)
	}
}

func checkTitle(t Task, ps *problems) {
	switch {
	case strings.TrimSpace(t.Title) == "":
		ps.add("title", "a title is required: one imperative line naming the change")
	case !oneLine(t.Title):
		ps.add("title", "the title is one line of text, without line breaks or control characters")
	case utf8.RuneCountInString(t.Title) > MaxTitle:
		ps.add("title", "the title has %d characters; keep it to %d", utf8.RuneCountInString(t.Title), MaxTitle)
	}
}

func checkPriority(t Task, ps *problems) {
	if !slices.Contains(Priorities, t.Priority) {
		ps.add("priority", "%s; write one of %s", got(t.Priority), strings.Join(Priorities, ", "))
	}
}

func checkLabels(t Task, ps *problems) {
	switch {
	case len(t.Labels) == 0:
		ps.add("labels", "a task has one to %d labels from %s", MaxLabels, strings.Join(Labels, ", "))
	case len(t.Labels) > MaxLabels:
		ps.add("labels", "a task has at most %d labels, not %d; keep the ones that say what the change touches", MaxLabels, len(t.Labels))
	}
	for i, l := range t.Labels {
		field := fmt.Sprintf("labels[%d]", i)
		switch {
		case !slices.Contains(Labels, l):
			ps.add(field, "%q is not a label; labels come from %s", l, strings.Join(Labels, ", "))
		case slices.Index(t.Labels, l) < i:
			ps.add(field, "%q is already labels[%d]; name each label once", l, slices.Index(t.Labels, l))
		}
	}
}

func checkBlockedBy(t Task, ps *problems) {
	for i, b := range t.BlockedBy {
		field := fmt.Sprintf("blocked_by[%d]", i)
		switch {
		case !IsSlug(b):
			ps.add(field, "%q is not a slug; name the blocking task by its slug (0007-add-tags)", b)
		case t.Slug != "" && b == t.Slug:
			ps.add(field, "a task cannot be blocked by itself")
		}
	}
}

func checkEstimate(t Task, ps *problems) {
	if t.EstimatedLines < 1 || t.EstimatedLines > MaxEstimatedLines {
		ps.add("estimated_lines", "estimate the changed lines as a number from 1 to %d, not %d; a bigger change is several tasks", MaxEstimatedLines, t.EstimatedLines)
	}
}

func checkLocks(t Task, ps *problems) {
	for i, l := range t.Locks {
		if strings.TrimSpace(l) == "" {
			ps.add(fmt.Sprintf("locks[%d]", i), "a lock is a non-empty name of what the task holds while it runs")
		}
	}
}

func checkRisk(t Task, ps *problems) {
	if !slices.Contains(Risks, t.Risk) {
		ps.add("risk", "%s; write one of %s", got(t.Risk), strings.Join(Risks, ", "))
	}
}

func checkRepaidBy(t Task, ps *problems) {
	switch {
	case !t.Stub && t.RepaidBy != "":
		ps.add("repaid_by", "only a stub is repaid; set stub: true or drop repaid_by")
	case t.Stub && t.RepaidBy == "":
		ps.add("repaid_by", "a stub names the task that repays it in repaid_by")
	case t.Stub && !IsSlug(t.RepaidBy):
		ps.add("repaid_by", "%q is not a slug; name the repaying task by its slug (0007-add-tags)", t.RepaidBy)
	case t.Stub && t.Slug != "" && t.RepaidBy == t.Slug:
		ps.add("repaid_by", "a stub cannot repay itself; name the later task that replaces it")
	}
}

func checkReasoning(t Task, ps *problems) {
	if !slices.Contains(Reasoning, t.Reasoning) {
		ps.add("reasoning", "%s; write one of %s", got(t.Reasoning), strings.Join(Reasoning, ", "))
	}
}

func checkSummary(t Task, ps *problems) {
	switch n := utf8.RuneCountInString(t.Summary); {
	case strings.TrimSpace(t.Summary) == "":
		ps.add("summary", "a summary is required: one or two sentences saying what this is and why it exists")
	case n > MaxSummary:
		ps.add("summary", "the summary has %d characters; keep it to %d", n, MaxSummary)
	}
}

func checkCriteria(t Task, ps *problems) {
	if len(t.Criteria) == 0 {
		ps.add("criteria", "write at least one acceptance criterion: an observable, testable outcome")
	}
	for i, c := range t.Criteria {
		field := fmt.Sprintf("criteria[%d].text", i)
		switch n := utf8.RuneCountInString(c.Text); {
		case strings.TrimSpace(c.Text) == "":
			ps.add(field, "a criterion needs text: an observable, testable outcome")
		case !oneLine(c.Text):
			ps.add(field, "a criterion is one line of text, without line breaks or control characters")
		case n > MaxCriterion:
			ps.add(field, "the criterion has %d characters; keep it to %d, or split it in two", n, MaxCriterion)
		case slices.Contains(hostWordings, normalCriterion(c.Text)):
			ps.add(field, "the host writes this criterion itself; drop it")
		default:
			if m := activationWording.FindString(c.Text); m != "" {
				ps.add(field, "a criterion is checked against a preview before anything is activated; say what the preview shows instead of %q",
					strings.ToLower(strings.Join(strings.Fields(m), " ")))
			}
		}
	}
}

func checkNoFailurePath(t Task, ps *problems) {
	failure := slices.ContainsFunc(t.Criteria, func(c Criterion) bool { return c.Failure })
	reason := strings.TrimSpace(t.NoFailurePath)
	switch n := utf8.RuneCountInString(t.NoFailurePath); {
	case !failure && reason == "":
		ps.add("criteria", "add a failure criterion (failure: true) naming the route that refuses and what the person is told, or say in no_failure_path why nothing can go wrong")
	case failure && reason != "":
		ps.add("no_failure_path", "the task has a failure criterion, so it has a failure path; drop no_failure_path or the failure criterion")
	case reason != "" && !oneLine(t.NoFailurePath):
		ps.add("no_failure_path", "the reason is one line of text, without line breaks or control characters")
	case n > MaxCriterion:
		ps.add("no_failure_path", "the reason has %d characters; keep it to %d", n, MaxCriterion)
	}
}

func checkItems(t Task, ps *problems) {
	for _, list := range []struct {
		name  string
		items []string
	}{{"non_functional", t.NonFunctional}, {"test_notes", t.TestNotes}, {"runbook", t.Runbook}} {
		for i, s := range list.items {
			field := fmt.Sprintf("%s[%d]", list.name, i)
			switch n := utf8.RuneCountInString(s); {
			case strings.TrimSpace(s) == "":
				ps.add(field, "an item needs text; drop the empty one")
			case !oneLine(s):
				ps.add(field, "an item is one line of text, without line breaks or control characters")
			case n > MaxItem:
				ps.add(field, "the item has %d characters; keep it to %d", n, MaxItem)
			}
		}
	}
}

// got names a value the engineer wrote, or says it is missing.
func got(v string) string {
	if v == "" {
		return "missing"
	}
	return fmt.Sprintf("%q is not allowed", v)
}

// oneLine reports whether s holds no line break or other control character.
func oneLine(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsControl) && !strings.ContainsAny(s, "\u2028\u2029")
}

// normalCriterion folds case, spacing and a final full stop, so a copy of
// the host's criterion is caught however it is typed.
func normalCriterion(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimSuffix(s, ".")
}
