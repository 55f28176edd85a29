package views

import "testing"

// TestACardsWhyIsCutAfterItsFirstSentence: a phone shows a failure's first
// sentence; what a file name, a number or an abbreviation holds is no end.
func TestACardsWhyIsCutAfterItsFirstSentence(t *testing.T) {
	for _, c := range []struct{ name, why, first, rest string }{
		{"one sentence", "failed: the build broke.", "failed: the build broke.", ""},
		{"no stop", "its plan waits for your approval", "its plan waits for your approval", ""},
		{"two sentences", "failed: 2 attempts in this run did not complete the task. The workspace did not change since the task began. No example was run.",
			"failed: 2 attempts in this run did not complete the task.", "The workspace did not change since the task began. No example was run."},
		{"a question first", "asks: Should the greeting be bold? Or italic?", "asks: Should the greeting be bold?", "Or italic?"},
		{"a file name and a number", "failed: site/index.html changed 1.5 times. Then it stopped.", "failed: site/index.html changed 1.5 times.", "Then it stopped."},
		{"an abbreviation", "failed: a word, e.g. the heading, is missing. Look again.", "failed: a word, e.g. the heading, is missing.", "Look again."},
		{"a digit after", "failed: the build broke. 3 problems were found.", "failed: the build broke.", "3 problems were found."},
		{"a line break", "failed: the build broke.\nSee the log.", "failed: the build broke.", "See the log."},
		{"empty", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			card := CardView{Why: c.why}
			if got := card.WhyFirst(); got != c.first {
				t.Errorf("first sentence of %q: got %q, want %q", c.why, got, c.first)
			}
			if got := card.WhyRest(); got != c.rest {
				t.Errorf("rest of %q: got %q, want %q", c.why, got, c.rest)
			}
		})
	}
}
