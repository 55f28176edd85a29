package plan_test

import (
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

func TestSlug(t *testing.T) {
	cases := []struct {
		name string
		n    int
		want string
	}{
		{"first of the application", 1, "0001-add-tags-to-notes"},
		{"four digits", 7, "0007-add-tags-to-notes"},
		{"the last of four digits", 9999, "9999-add-tags-to-notes"},
		{"after 9999, five digits", 10000, "10000-add-tags-to-notes"},
		{"after five digits, the next", 12346, "12346-add-tags-to-notes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := plan.Slug(c.n, "Add tags to notes")
			if got != c.want {
				t.Fatalf("Slug = %q, want %q", got, c.want)
			}
			if !plan.IsSlug(got) {
				t.Fatalf("%s is not a slug", got)
			}
		})
	}
}
