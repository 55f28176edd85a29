package handlers

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/owner"
	"autoapp/views"
)

// Backlog is what the handlers need of the intents.
type Backlog interface {
	List(ctx context.Context, appID string) ([]intent.IntentSummary, error)
	Get(ctx context.Context, intentID int64) (intent.IntentDetail, error)
	Task(ctx context.Context, taskID int64) (intent.TaskDetail, error)
	SetTaskModel(ctx context.Context, opID string, taskID int64, model string) error
	RemoveTask(ctx context.Context, opID string, taskID int64) error
	Withdraw(ctx context.Context, opID string, intentID int64) error
	SetCap(ctx context.Context, intentID int64, f intent.CapForm) error
	TierModels() (map[string]string, error)
	SetTierModels(ctx context.Context, opID string, m map[string]string, known intent.ModelChecker) error
}

// Attention reads the pages of intents, and whether there is any
// (*intent.Attention).
type Attention interface {
	AnyIntent(ctx context.Context) (bool, error)
	ListPage(ctx context.Context, appID string, before int64, limit int) ([]intent.IntentSummary, bool, error)
}

// Interventions takes the owner's pause, stop and feedback for a running
// intent (*intent.Interventions).
type Interventions interface {
	SubmitIntervention(ctx context.Context, intentID int64, requestID string, kind intent.InterventionKind, text string) (intent.Receipt, bool, error)
}

// newOp is a fresh operation id for the forms of a page: submitting the
// same form twice carries the same id, and the second changes nothing.
func newOp() (string, error) {
	t, err := owner.RandomToken()
	if err != nil {
		return "", err
	}
	return t[:22], nil
}

// backlogPage is how many intents one page of the Backlog lists.
const backlogPage = 50

// backlogPages are the Backlog: the selected application's intents, the
// overview panel and the first steps, and the tier models' form (Backlog,
// Overview, Apps, Providers).
type backlogPages struct{ frame }

func (h *backlogPages) backlogList(c *fiber.Ctx) error {
	return h.renderBacklog(c, views.Refusal{}, "", nil)
}

// renderBacklog shows the Backlog; typed, when set, are tier models the
// owner typed that were refused, shown back instead of the saved ones.
func (h *backlogPages) renderBacklog(c *fiber.Ctx, r views.Refusal, notice string, typed map[string]string) error {
	ctx := c.UserContext()
	// The overview counts what needs the person, so the rail's mark is
	// not counted a second time.
	var ov *views.OverviewView
	needsYou := 0
	if h.Overview != nil {
		o, err := h.Overview.Read(ctx)
		if err != nil {
			return err
		}
		v := overviewView(o)
		ov, needsYou = &v, o.Needs.Total()
	}
	s, err := h.pageMarked(c, "Backlog", "backlog", needsYou)
	if err != nil {
		return err
	}
	op, err := newOp()
	if err != nil {
		return err
	}
	p := views.BacklogList{AppID: s.AppID, AppName: s.AppName, Refusal: r, Notice: notice, Op: op, Overview: ov}
	steps, err := h.firstSteps(ctx)
	if err != nil {
		return err
	}
	p.FirstSteps = steps
	if s.AppID != "" {
		before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
		intents, more, err := h.Attention.ListPage(ctx, s.AppID, before, backlogPage)
		if err != nil {
			return err
		}
		for _, i := range intents {
			p.Intents = append(p.Intents, intentRow(i))
		}
		if more {
			p.OlderHref = fmt.Sprintf("/backlog?before=%d", intents[len(intents)-1].ID)
		}
		p.Paged = before > 0
		if p.TierModels, err = tierModels(h.Backlog, typed); err != nil {
			return err
		}
	}
	return render(c, views.BacklogListPage(s, p))
}

func (h *backlogPages) backlogModels(c *fiber.Ctx) error {
	typed, err := saveTierModels(c, h.Backlog, h.Providers)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderBacklog(c, views.Refusal{At: "models", Sentence: sentence}, "", typed)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/backlog", fiber.StatusSeeOther)
}

func paramID(c *fiber.Ctx, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such intent or task.")
	}
	return id, nil
}

func intentRow(i intent.IntentSummary) views.IntentRow {
	row := views.IntentRow{ID: i.ID, Status: string(i.Status), BeingWritten: i.BeingWritten(),
		Request: firstLine(i.Request, 140), Created: clock(i.CreatedAt), Questions: i.QuestionCount}
	var parts []string
	total := 0
	for _, st := range intent.TaskStatuses {
		if n := i.Counts[st]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	sort.Strings(parts)
	switch total {
	case 0:
		row.Counts = "no tasks yet"
	case 1:
		row.Counts = "1 task: " + strings.Join(parts, ", ")
	default:
		row.Counts = fmt.Sprintf("%d tasks: %s", total, strings.Join(parts, ", "))
	}
	return row
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// firstSteps are the three steps of a first run — connect a model, make an
// application, make a request — until all are done, in the order they
// must be done.
func (h *backlogPages) firstSteps(ctx context.Context) ([]views.FirstStep, error) {
	apps, err := h.Apps.List(ctx)
	if err != nil {
		return nil, err
	}
	asked, err := h.Attention.AnyIntent(ctx)
	if err != nil {
		return nil, err
	}
	steps := []views.FirstStep{
		{Text: "Connect a model: the engineer is any model behind an OpenAI-compatible API.", Href: "/settings", Link: "Open Settings", Done: h.Providers.DefaultModel() != ""},
		{Text: "Make an application, from a template or a git folder of yours.", Href: "/apps", Link: "Open Applications", Done: len(apps) > 0},
		{Text: "Make a request: say what the engineer should build.", Href: "/request", Link: "Open Request", Done: asked},
	}
	for _, st := range steps {
		if !st.Done {
			return steps, nil
		}
	}
	return nil, nil
}
