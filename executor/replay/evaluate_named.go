package replay

import (
	"path"
	"slices"
	"strings"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/knowledge"
)

// approvals counts the calls of a turn that would have waited on the
// person: its questions (intent.ask).
func approvals(calls []ai.Call) int {
	n := 0
	for _, c := range calls {
		if c.Name == "intent.ask" {
			n++
		}
	}
	return n
}

// delivered is the text of each document out's turn was given, as far as
// it was delivered.
func delivered(out executor.BuilderOutcome) []string {
	var texts []string
	for _, d := range out.Result.Documents {
		for _, o := range out.Offered {
			if o.Ref != d.Ref {
				continue
			}
			r := []rune(o.Text)
			texts = append(texts, string(r[:min(len(r), d.Delivered)]))
			break
		}
	}
	return texts
}

// namedFiles are the files among files (the workspace's as the turn
// started) that texts name, those of them calls read or edited, and the
// files calls read that none of texts names; each sorted.
func namedFiles(files map[string]bool, texts []string, calls []ai.Call) (named, used, unnamed []string) {
	named, used, unnamed = []string{}, []string{}, []string{}
	all := strings.Join(texts, "\n")
	for f := range files {
		if strings.Contains(all, f) {
			named = append(named, f)
		}
	}
	slices.Sort(named)
	touched := map[string]bool{}
	for _, c := range calls {
		if c.Name == "source.read" {
			p := path.Clean(inputOf(c).Path)
			touched[p] = true
			if !slices.Contains(named, p) && !slices.Contains(unnamed, p) {
				unnamed = append(unnamed, p)
			}
		}
		if attempted(c) {
			for _, f := range named {
				if editsFile(c, f) {
					touched[f] = true
				}
			}
		}
	}
	for _, f := range named {
		if touched[f] {
			used = append(used, f)
		}
	}
	slices.Sort(unnamed)
	return named, used, unnamed
}

// hintCredit counts the run's hints credited with resolving a failure
// (served beside a failed build, closed resolved), and of those the ones
// whose lesson named no stage or a stage none of the run's failures (met)
// was at: credit that is noise.
func hintCredit(served []knowledge.Serving, lessons corpus, met []knowledge.Case) (credited, unrelated int) {
	stages := map[string]bool{}
	for _, c := range met {
		if c.Stage != "" {
			stages[c.Stage] = true
		}
	}
	for _, sv := range served {
		if sv.Reason != knowledge.ReasonHint || sv.Outcome != knowledge.OutcomeResolved {
			continue
		}
		credited++
		stage := ""
		for _, l := range lessons {
			if l.ID == sv.LessonID {
				stage = l.Applies.Stage
			}
		}
		if stage == "" || !stages[stage] {
			unrelated++
		}
	}
	return credited, unrelated
}
