package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/provider"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/views"
)

// Providers is what the handlers need of the model providers.
type Providers interface {
	List() []provider.ProviderView
	Get(name string) (provider.ProviderView, error)
	// Apply checks and writes the Settings form's add or edit, at once.
	Apply(e provider.Edit) error
	SetOn(name string, on bool) error
	Remove(name string) error
	DefaultModel() string
	SetDefaultModel(ref string) error
	CheckModel(ref, what string) error
	Models(ctx context.Context, name string) ([]string, error)
	Test(ctx context.Context, name string) ([]string, error)
	// TryTools asks one of the provider's models for a tool call.
	TryTools(ctx context.Context, name string, models []string) (bool, string)
}

// offeredWait bounds how long the Settings page waits for the providers'
// model lists; a slow provider leaves its models out of the suggestions.
const offeredWait = 1500 * time.Millisecond

// settingsNotes is what an action tells the person on the page it renders.
type settingsNotes struct {
	refusal views.Refusal
	notice  string
	form    views.ProviderForm
	// tested names the provider just tested, with what it answered.
	tested      string
	models      []string
	testProblem string
	// typedTiers are refused tier models, shown back as typed.
	typedTiers map[string]string
	// typedPrices are refused prices, shown back as typed.
	typedPrices *views.PricesView
	// typedNotifications are refused webhook settings, shown back as typed.
	typedNotifications *views.NotificationsView
	// typedIdle and typedTurn are refused limits, shown back as typed.
	typedIdle, typedTurn string
	// typedRuns is a refused number of runs at once, shown back as typed.
	typedRuns string
	// chosenModels are the models a refused Compare models chose.
	chosenModels []string
	// tools says whether the tested provider's model calls tools.
	tools   string
	toolsOK bool
}

// settingsPages are Settings: the providers, the model and tier models,
// the prices, the sandbox, the turn limits and Quit (Providers, Backlog,
// Prices, Overview, Sandbox, Limits, Quit).
type settingsPages struct{ frame }

func (h *settingsPages) settingsPage(c *fiber.Ctx) error {
	n := settingsNotes{}
	if name := c.Query("edit"); name != "" {
		p, err := h.Providers.Get(name)
		if err != nil {
			return err
		}
		n.form = views.ProviderForm{Name: p.Name, BaseURL: p.BaseURL, On: p.On, Editing: p.Name, ContextTokens: tokensText(p.ContextTokens), TextCalls: !p.NoTextCalls}
	}
	// What the last save saved, said once after its redirect.
	switch c.Query("saved") {
	case "provider":
		if p, err := h.Providers.Get(c.Query("name")); err == nil {
			state := "off"
			if p.On {
				state = "on"
			}
			n.notice = fmt.Sprintf("Saved the provider %s at %s; it is turned %s.", p.Name, p.BaseURL, state)
		}
	case "notifications":
		n.notice = "Saved the notifications."
	case "model":
		if m := h.Providers.DefaultModel(); m != "" {
			n.notice = "The engineer now runs on " + m + ", unless a task or its tier names another model."
		}
	}
	return h.renderSettings(c, n)
}

func (h *settingsPages) renderSettings(c *fiber.Ctx, n settingsNotes) error {
	s, err := h.page(c, "Settings", "settings")
	if err != nil {
		return err
	}
	op, err := newOp()
	if err != nil {
		return err
	}
	v := views.SettingsView{DefaultModel: h.Providers.DefaultModel(), Form: n.form, Refusal: n.refusal, Notice: n.notice, Op: op}
	list := h.Providers.List()
	for _, p := range list {
		row := views.ProviderRow{Name: p.Name, BaseURL: p.BaseURL, KeyMask: p.KeyMask, HasKey: p.HasKey, On: p.On, ContextTokens: tokensText(p.ContextTokens), NoTextCalls: p.NoTextCalls}
		if p.Name == n.tested {
			row.Tested, row.Models, row.TestProblem = true, n.models, n.testProblem
			row.Tools, row.ToolsOK = n.tools, n.toolsOK
		}
		v.Providers = append(v.Providers, row)
	}
	v.Offered = h.offered(c.UserContext(), list)
	if v.TierModels, err = tierModels(h.Backlog, n.typedTiers); err != nil {
		return err
	}
	v.Prices = h.pricesView(c.UserContext(), n.typedPrices)
	v.Sandbox = sandboxView(h.Sandbox)
	v.Limits = h.limitsView(n.typedIdle, n.typedTurn, n.typedRuns)
	v.Notifications = h.notificationsView(c.UserContext(), n.typedNotifications)
	if v.Scorecard, err = h.scorecardView(c.UserContext(), n.chosenModels, n.refusal); err != nil {
		return err
	}
	return render(c, views.SettingsPageView(s, v))
}

// offered asks the turned-on providers what they offer, all at once and
// briefly; their lists are cached, so this is cheap when they were asked lately.
func (h *settingsPages) offered(ctx context.Context, list []provider.ProviderView) []string {
	ctx, cancel := context.WithTimeout(ctx, offeredWait)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var refs []string
	for _, p := range list {
		if !p.On {
			continue
		}
		wg.Go(func() {
			models, err := h.Providers.Models(ctx, p.Name)
			if err != nil {
				return
			}
			mu.Lock()
			for _, m := range models {
				refs = append(refs, p.Name+":"+m)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Strings(refs)
	return refs
}

func (h *settingsPages) providerSave(c *fiber.Ctx) error {
	form := views.ProviderForm{Name: strings.TrimSpace(c.FormValue("name")), BaseURL: strings.TrimSpace(c.FormValue("base_url")),
		On: c.FormValue("on") == "1", Editing: c.FormValue("editing"), ContextTokens: strings.TrimSpace(c.FormValue("context_tokens")),
		TextCalls: c.FormValue("text_calls") == "1"}
	err := h.Providers.Apply(provider.Edit{Editing: form.Editing, Name: form.Name, BaseURL: form.BaseURL, APIKey: c.FormValue("api_key"),
		On: form.On, ContextTokens: form.ContextTokens, ClearKey: c.FormValue("clear_key") == "1", NoTextCalls: !form.TextCalls})
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{form: form, refusal: views.Refusal{At: "provider-form", Sentence: sentence}})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings?saved=provider&name="+url.QueryEscape(form.Name), fiber.StatusSeeOther)
}

// providerAction runs a write on one provider and shows the page, with a
// refusal beside that provider.
func (h *settingsPages) providerAction(c *fiber.Ctx, act func(name string) error) error {
	name := c.Params("name")
	err := act(name)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "provider-" + name, Sentence: sentence}})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings", fiber.StatusSeeOther)
}

func (h *settingsPages) providerOn(c *fiber.Ctx) error {
	on := c.FormValue("on") == "1"
	return h.providerAction(c, func(name string) error { return h.Providers.SetOn(name, on) })
}

func (h *settingsPages) providerRemove(c *fiber.Ctx) error {
	return h.providerAction(c, h.Providers.Remove)
}

// providerTest asks the provider for its models and shows what it said.
func (h *settingsPages) providerTest(c *fiber.Ctx) error {
	name := c.Params("name")
	if _, err := h.Providers.Get(name); err != nil {
		return err
	}
	models, err := h.Providers.Test(c.UserContext(), name)
	n := settingsNotes{tested: name, models: models}
	var pe *refusal.Error
	switch {
	case errors.As(err, &pe):
		n.testProblem = pe.Message
	case err != nil:
		return err
	case len(models) > 0:
		// The engineer's every turn calls tools: try one.
		n.toolsOK, n.tools = h.Providers.TryTools(c.UserContext(), name, models)
	}
	return h.renderSettings(c, n)
}

func (h *settingsPages) settingsModel(c *fiber.Ctx) error {
	err := h.Providers.SetDefaultModel(c.FormValue("model"))
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "model", Sentence: sentence}})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings?saved=model", fiber.StatusSeeOther)
}

// tierModels are the three tier models as saved, or as typed when the
// owner's typing was refused.
func tierModels(b Backlog, typed map[string]string) ([]views.TierModel, error) {
	models := typed
	if models == nil {
		var err error
		if models, err = b.TierModels(); err != nil {
			return nil, err
		}
	}
	out := make([]views.TierModel, 0, len(plan.Tiers))
	for _, tier := range plan.Tiers {
		out = append(out, views.TierModel{Tier: tier, Model: models[tier]})
	}
	return out, nil
}

// saveTierModels writes the three tier models as typed, each checked
// against the providers in Settings by the write itself; both the Backlog
// and Settings pages use it. It returns what was typed, to show back after
// a refusal.
func saveTierModels(c *fiber.Ctx, b Backlog, known intent.ModelChecker) (map[string]string, error) {
	m := map[string]string{}
	for _, tier := range plan.Tiers {
		m[tier] = strings.TrimSpace(c.FormValue("tier_" + tier))
	}
	return m, b.SetTierModels(c.UserContext(), c.FormValue("op"), m, known)
}

func (h *settingsPages) settingsTiers(c *fiber.Ctx) error {
	typed, err := saveTierModels(c, h.Backlog, h.Providers)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "models", Sentence: sentence}, typedTiers: typed})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings", fiber.StatusSeeOther)
}

// quitLauncher stops the launcher: the run in hand is interrupted and its
// intent stopped, requests in flight finish, the stores close.
func (h *settingsPages) quitLauncher(c *fiber.Ctx) error {
	if h.Quit == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher cannot be stopped from its pages.")
	}
	// After this answer is written: the shutdown waits for it.
	defer h.Quit()
	return render(c, views.Stopping(shell(c, "Stopping", "")))
}

// tokensText is a context window for a form: "" when none is set.
func tokensText(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
