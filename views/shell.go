// Package views holds the templ components: the layout with its rail, the
// pages, and later the fragments the pages poll. Components take structs
// shaped like the page and never query anything.
package views

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Shell is what every page's frame needs.
type Shell struct {
	// Title names the page in the tab and its heading.
	Title string
	// Owner is the signed-in owner's name; empty on the sign-in and setup pages.
	Owner string
	// CSRF is the token every form and htmx request sends back.
	CSRF string
	// Current is the rail entry to mark: backlog, board, apps, request, knowledge or settings.
	Current string
	// AppID and AppName are the application the rail names: the one the
	// page is about, else the one selected last, if any.
	AppID, AppName string
	// NeedsYou counts what waits for the person (a question, a task that
	// asked, a failed task, a release to make current); the rail marks
	// the Backlog while it is above 0.
	NeedsYou int
	// Running are the intents running now, each with its application.
	Running []RunLink
}

// RunLink is an intent running, as the rail names it.
type RunLink struct {
	IntentID int64
	AppID    string
}

// RailEntry is one place the rail leads to.
type RailEntry struct {
	Key, Label, Href string
}

// Rail lists the pages in the order the rail shows them.
var Rail = []RailEntry{
	{"backlog", "Backlog", "/backlog"},
	{"board", "Board", "/board"},
	{"apps", "Applications", "/apps"},
	{"request", "Request", "/request"},
	{"knowledge", "Knowledge", "/knowledge"},
	{"settings", "Settings", "/settings"},
}

// CSRFField is the name of the hidden form field that carries the token.
const CSRFField = "_csrf"

// CSRFHeader is the header htmx sends the token in.
const CSRFHeader = "X-Csrf-Token"

func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{CSRFHeader: token})
	return string(b)
}

func current(s Shell, key string) string {
	if s.Current == key {
		return "page"
	}
	return "false"
}

// StatusTitle names a refusal by its HTTP status.
func StatusTitle(status int) string {
	switch {
	case status == 403:
		return "Refused"
	case status == 404:
		return "Not found"
	case status == 429:
		return "Too many attempts"
	case status >= 500:
		return "Something went wrong"
	default:
		return "That did not work"
	}
}

func joinWords(words []string) string {
	return strings.Join(words, ", ")
}

func pluralModels(n int) string { return Count(n, "model", "models") }

// Count says how many of a thing, the noun agreeing: "1 attempt",
// "0 attempts", "3 attempts".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
