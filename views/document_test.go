package views

import (
	"strings"
	"testing"
)

func TestADocumentKeepsItsStructureAndNothingThatRuns(t *testing.T) {
	got := Document("## Acceptance criteria\n- [x] The page greets\n- [ ] The about page\n\n" +
		"<script>alert(1)</script>\n\nSee <img src=x onerror=alert(2)> [a](javascript:alert(3)) **bold**\n")
	for _, want := range []string{"<h2>Acceptance criteria</h2>", `checked=""`, `aria-label="passing"`, `aria-label="not yet passing"`, "<strong>bold</strong>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the document lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"<script", "onerror", "javascript:", "<img"} {
		if strings.Contains(got, bad) {
			t.Errorf("the document keeps %q:\n%s", bad, got)
		}
	}
}
