package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

const secretKey = "sk-test-0123456789-secret"

// TestSettingsConnectAProviderAndChooseModels adds a provider pointing at
// the scripted model server, tests it, picks the Settings and tier models,
// and checks the key never comes back in a page.
func TestSettingsConnectAProviderAndChooseModels(t *testing.T) {
	s := startServer(t)
	model := scripted.New(t)
	model.Models("qwen3:27b", "small-model")
	page := newPage(t)
	createOwner(t, page, s)

	must(t, page.GetByTestId("rail-settings").Click())
	must(t, expect.Locator(page.GetByTestId("settings-empty")).ToHaveText("No model provider is set up yet."))

	// A malformed address is refused with a sentence, and the key typed is not shown back.
	form := page.GetByTestId("provider-form")
	must(t, form.GetByLabel("Name").Fill("scripted"))
	must(t, form.GetByLabel("Base URL").Fill("ftp://127.0.0.1/"))
	must(t, form.GetByLabel("API key").Fill(secretKey))
	must(t, form.GetByTestId("save-provider").Click())
	must(t, expect.Locator(page.GetByTestId("refusal-provider-form")).ToContainText("http"))
	html, err := page.Content()
	must(t, err)
	if strings.Contains(html, secretKey) {
		t.Fatal("the refused form shows the key back")
	}

	form = page.GetByTestId("provider-form")
	must(t, form.GetByLabel("Name").Fill("scripted"))
	must(t, form.GetByLabel("Base URL").Fill(model.URL()))
	must(t, form.GetByLabel("API key").Fill(secretKey))
	must(t, form.GetByTestId("save-provider").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/settings\?saved=provider`)))
	must(t, expect.Locator(page.GetByTestId("notice")).ToHaveText("Saved the provider scripted at "+model.URL()+"; it is turned on."))
	row := page.GetByTestId("provider-scripted")
	must(t, expect.Locator(row).ToContainText(model.URL()))
	must(t, expect.Locator(row.GetByTestId("key-mask")).ToHaveText("••••cret"))

	// Test lists what it offers, asked with the key, and asks its first
	// model for one tool call: this one answers in text.
	model.On(scripted.Contains("Call the tool echo"), scripted.Reply{Text: `echo("ready")`},
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "echo", Args: `{"word": "ready"}`}}})
	must(t, row.GetByTestId("test-provider").Click())
	result := page.GetByTestId("provider-scripted").GetByTestId("test-result")
	must(t, expect.Locator(result).ToContainText("It offers 2 models"))
	must(t, expect.Locator(result).ToContainText("qwen3:27b"))
	must(t, expect.Locator(result).ToContainText("small-model"))
	sawKey := false
	for _, r := range model.Requests() {
		if r.Authorization() == "Bearer "+secretKey {
			sawKey = true
		}
	}
	if !sawKey {
		t.Fatal("the provider was not asked with its key")
	}
	must(t, expect.Locator(page.GetByTestId("tool-test")).ToHaveText(
		"qwen3:27b answered in text instead of calling the tool: choose a model with tool support, or start llama.cpp's server with --jinja."))
	must(t, expect.Locator(page.GetByTestId("tool-test")).ToHaveAttribute("data-ok", "false"))

	// The Settings model, chosen from what Test listed, and the tier models.
	must(t, result.Locator("li", playwright.LocatorLocatorOptions{HasText: "small-model"}).GetByTestId("use-model").Click())
	must(t, expect.Locator(page.GetByTestId("notice")).ToHaveText("The engineer now runs on scripted:small-model, unless a task or its tier names another model."))
	must(t, expect.Locator(page.GetByTestId("default-model").GetByLabel("Model")).ToHaveValue("scripted:small-model"))
	// Tested again, the provider's model tried is the Settings model, which calls tools.
	must(t, page.GetByTestId("provider-scripted").GetByTestId("test-provider").Click())
	must(t, expect.Locator(page.GetByTestId("tool-test")).ToContainText("small-model calls tools: yes ("))
	must(t, expect.Locator(page.GetByTestId("tool-test")).ToHaveAttribute("data-ok", "true"))
	tiers := page.GetByTestId("tier-models")
	must(t, tiers.GetByLabel("quick").Fill("scripted:small-model"))
	must(t, tiers.GetByLabel("deep").Fill("scripted:qwen3:27b"))
	must(t, tiers.GetByRole("button").Click())
	tiers = page.GetByTestId("tier-models")
	must(t, expect.Locator(tiers.GetByLabel("quick")).ToHaveValue("scripted:small-model"))
	must(t, expect.Locator(tiers.GetByLabel("standard")).ToHaveValue(""))
	must(t, expect.Locator(tiers.GetByLabel("deep")).ToHaveValue("scripted:qwen3:27b"))
	b, err := os.ReadFile(filepath.Join(s.Root, "launcher", "intent-models.json"))
	must(t, err)
	var saved map[string]*string
	must(t, json.Unmarshal(b, &saved))
	if saved["quick"] == nil || *saved["quick"] != "scripted:small-model" || saved["standard"] != nil || *saved["deep"] != "scripted:qwen3:27b" {
		t.Fatalf("intent-models.json: %s", b)
	}
	// A tier model naming a provider that does not exist is refused.
	must(t, tiers.GetByLabel("standard").Fill("nobody:model"))
	must(t, tiers.GetByRole("button").Click())
	must(t, expect.Locator(page.GetByTestId("refusal-models")).ToContainText(`"nobody"`))
	must(t, expect.Locator(page.GetByTestId("tier-models").GetByLabel("standard")).ToHaveValue("nobody:model"))

	// Turn it off; the edit form leaves the key empty.
	_, err = page.Goto(s.URL + "/settings")
	must(t, err)
	must(t, page.GetByTestId("provider-scripted").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Turn off"}).Click())
	must(t, expect.Locator(page.GetByTestId("provider-scripted")).ToContainText("off"))
	must(t, page.GetByTestId("provider-scripted").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Edit"}).Click())
	must(t, expect.Locator(page.GetByTestId("provider-form").GetByLabel("API key")).ToHaveValue(""))
	must(t, expect.Locator(page.GetByTestId("provider-form").GetByLabel("Base URL")).ToHaveValue(model.URL()))

	// The key is nowhere in what the pages sent.
	for _, path := range []string{"/settings", "/settings?edit=scripted", "/backlog", "/apps"} {
		_, err := page.Goto(s.URL + path)
		must(t, err)
		html, err := page.Content()
		must(t, err)
		if strings.Contains(html, secretKey) || regexp.MustCompile(`0123456789`).MatchString(html) {
			t.Fatalf("%s shows the key", path)
		}
	}
	// The file that keeps it is readable by this user only.
	fi, err := os.Stat(filepath.Join(s.Root, "launcher", "providers.json"))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("providers.json has mode %v", fi.Mode().Perm())
	}
}

// TestQuitStopsTheLauncher presses Quit in Settings: the page says so and
// the process exits cleanly on its own.
func TestQuitStopsTheLauncher(t *testing.T) {
	s := startServer(t)
	page := newPage(t)
	createOwner(t, page, s)
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	must(t, page.GetByTestId("quit").Locator("summary").Click())
	must(t, page.GetByTestId("quit-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("stopping")).ToBeVisible())
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the launcher did not exit cleanly: %v\n%s", err, s.out)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the launcher did not stop within 15s of Quit")
	}
	s.stopped.Do(func() {})
}
