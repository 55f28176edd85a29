package plan_test

import (
	"fmt"
	"testing"

	"autoapp/intent/plan"
)

func TestWords(t *testing.T) {
	cases := []struct{ name, title, want string }{
		{"plain", "Add tags to notes", "add-tags-to-notes"},
		{"at most six words", "Add tags to notes and filter them by tag", "add-tags-to-notes-and-filter"},
		{"punctuation separates", "Fix 404 on /notes/{id}, again!", "fix-404-on-notes-id-again"},
		{"apostrophe joins", "Don't show the menu", "dont-show-the-menu"},
		{"accents fold", "Café menü: Straße", "cafe-menu-strasse"},
		{"letters without ASCII are dropped", "日本語 notes", "notes"},
		{"dashes and underscores separate", "snake_case--and-kebab", "snake-case-and-kebab"},
		{"empty", "", "task"},
		{"nothing usable", " -- !! 日本 ", "task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := plan.Words(c.title)
			if got != c.want {
				t.Fatalf("Words(%q) = %q, want %q", c.title, got, c.want)
			}
			if !plan.IsSlug("0001-" + got) {
				t.Fatalf("0001-%s is not a slug", got)
			}
		})
	}
}

func TestNextSlug(t *testing.T) {
	var taken []string // 0001 to 9999
	for i := 1; i <= 9999; i++ {
		taken = append(taken, fmt.Sprintf("%04d-t", i))
	}
	cases := []struct {
		name     string
		existing []string
		want     string
	}{
		{"first of the application", nil, "0001-add-tags-to-notes"},
		{"after the highest, not the last", []string{"0001-a", "0006-b", "0003-c"}, "0007-add-tags-to-notes"},
		{"gaps are not reused", []string{"0002-a", "0005-b"}, "0006-add-tags-to-notes"},
		{"other strings are ignored", []string{"", "abc", "123-x", "0004", "00a1-x", "12a45-x"}, "0005-add-tags-to-notes"},
		{"after 9999, five digits", taken, "10000-add-tags-to-notes"},
		{"after five digits, the next", []string{"0003-a", "12345-b", "9999-c"}, "12346-add-tags-to-notes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := plan.NextSlug(c.existing, "Add tags to notes"); got != c.want {
				t.Fatalf("NextSlug = %q, want %q", got, c.want)
			}
		})
	}
}
