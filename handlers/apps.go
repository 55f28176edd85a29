package handlers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/acceptance"
	"autoapp/executor/candidate"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/views"
)

// refused is the sentence and status of an error the person can act on, or
// ok false for a failure of the server.
func refused(err error) (status int, sentence string, ok bool) {
	r, ok := refusal.As(err)
	if !ok {
		return 0, "", false
	}
	return refusal.Status(r.Code), r.Message, true
}

func isRefusal(err error) bool {
	_, _, ok := refused(err)
	return ok
}

// appPages are the Applications list and an application's page with its
// candidate, manifest and releases (Apps, Candidates, Actions, Sandbox).
type appPages struct{ frame }

func (h *appPages) appList(c *fiber.Ctx) error {
	return h.renderApps(c, views.AppForm{})
}

func (h *appPages) renderApps(c *fiber.Ctx, form views.AppForm) error {
	ctx := c.UserContext()
	s, err := h.page(c, "Applications", "apps")
	if err != nil {
		return err
	}
	apps, err := h.Apps.List(ctx)
	if err != nil {
		return err
	}
	p := views.AppsPage{Form: form, Sandbox: sandboxView(h.Sandbox)}
	for _, a := range apps {
		row := appRow(a, s.AppID)
		row.PreviewURL, _ = h.Candidates.PreviewURL(a.ID)
		p.Apps = append(p.Apps, row)
	}
	for _, t := range app.Templates {
		p.Templates = append(p.Templates, views.TemplateOption{Key: t.Key, Title: t.Title, About: t.About})
	}
	return render(c, views.ApplicationsPage(s, p))
}

func (h *appPages) appCreate(c *fiber.Ctx) error {
	form := views.AppForm{ID: strings.TrimSpace(c.FormValue("id")), Name: c.FormValue("name"), Template: c.FormValue("template")}
	a, err := h.Apps.CreateFromTemplate(c.UserContext(), form.ID, form.Name, form.Template)
	return h.afterCreate(c, a, err, form)
}

func (h *appPages) appRegister(c *fiber.Ctx) error {
	form := views.AppForm{ID: strings.TrimSpace(c.FormValue("id")), Name: c.FormValue("name"),
		Source: c.FormValue("source"), Register: true}
	a, err := h.Apps.Register(c.UserContext(), form.ID, form.Name, form.Source)
	return h.afterCreate(c, a, err, form)
}

func (h *appPages) afterCreate(c *fiber.Ctx, a app.App, err error, form views.AppForm) error {
	if status, sentence, ok := refused(err); ok {
		form.Problem = sentence
		c.Status(status)
		return h.renderApps(c, form)
	}
	if err != nil {
		return err
	}
	if err := h.Apps.Select(c.UserContext(), a.ID); err != nil {
		return err
	}
	if c.FormValue("back") == "request" {
		return c.Redirect("/request", fiber.StatusSeeOther)
	}
	return c.Redirect("/apps/"+a.ID, fiber.StatusSeeOther)
}

// appPage shows one application; the rail names it, and the selection
// stays as it was.
func (h *appPages) appPage(c *fiber.Ctx) error {
	return h.renderApp(c, c.Params("id"), appNotes{})
}

// appSelect is opening an application from the list: the person chose it,
// so it is selected, and its page shown.
func (h *appPages) appSelect(c *fiber.Ctx) error {
	id := c.Params("id")
	if err := h.Apps.Select(c.UserContext(), id); err != nil {
		return err
	}
	return c.Redirect("/apps/"+id, fiber.StatusSeeOther)
}

// appNotes is what an action tells the person on the page it renders.
type appNotes struct {
	notice, problem   string
	manifest          string
	manifestProblems  []string
	manifestNotice    string
	candidateProblem  string
	keepManifestDraft bool
}

func (h *appPages) renderApp(c *fiber.Ctx, id string, n appNotes) error {
	ctx := c.UserContext()
	a, err := h.Apps.Get(ctx, id)
	if err != nil {
		return err
	}
	s := h.pageAbout(c, a.Name, "apps", a.ID, a.Name)
	p := views.AppPage{App: appRow(a, s.AppID), Workspace: h.Apps.WorkspaceDir(id),
		Notice: n.notice, Problem: n.problem, ManifestNotice: n.manifestNotice, ManifestProblems: n.manifestProblems}
	raw, _, problems, err := h.Apps.Manifest(id)
	if err != nil {
		return err
	}
	p.Manifest = string(raw)
	if n.keepManifestDraft {
		p.Manifest = n.manifest
	} else {
		for _, pr := range problems {
			p.ManifestProblems = append(p.ManifestProblems, pr.String())
		}
	}
	if err := h.appLiveView(c, &p); err != nil {
		return err
	}
	if n.candidateProblem != "" {
		p.Candidate.Problem = n.candidateProblem
	}
	return render(c, views.ApplicationPage(s, p))
}

// appLive is the polled part of an application's page: its candidate and
// releases.
func (h *appPages) appLive(c *fiber.Ctx) error {
	a, err := h.Apps.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	p := views.AppPage{App: appRow(a, "")}
	if err := h.appLiveView(c, &p); err != nil {
		return err
	}
	return render(c, views.AppLive(shell(c, "", "apps"), p))
}

// appLiveView fills what the polled part shows: the candidate, the
// owner's action going or its problem, and the releases.
func (h *appPages) appLiveView(c *fiber.Ctx, p *views.AppPage) error {
	ctx, id := c.UserContext(), p.App.ID
	// The action first: one seen ended has written all it will, so the
	// candidate read after it is final; one seen going is shown going.
	act, acted := h.Actions.OwnerAction(id)
	o, err := h.Candidates.Observe(ctx, id)
	if err != nil {
		return err
	}
	p.Candidate = candidateView(id, o)
	if acted {
		if act.Going() {
			p.Candidate.Going = &views.CandidateGoing{What: act.What, Started: clock(act.Started), Doing: act.Doing.Sentence()}
		} else {
			p.Candidate.Problem = act.Problem
		}
	}
	releases, err := h.Apps.Releases(ctx, id, 20)
	if err != nil {
		return err
	}
	for _, r := range releases {
		p.Releases = append(p.Releases, views.ReleaseRow{ID: r.ID, Revision: short(r.Revision),
			BuiltAt: clock(time.UnixMilli(r.BuiltAt)), Current: r.ID == p.App.Current})
	}
	return nil
}

func (h *appPages) appManifest(c *fiber.Ctx) error {
	id := c.Params("id")
	raw := c.FormValue("manifest")
	err := h.Actions.SaveManifest(c.UserContext(), id, []byte(raw))
	var ae *refusal.Error
	if errors.As(err, &ae) && ae.Code == refusal.Invalid {
		n := appNotes{manifest: raw, keepManifestDraft: true}
		for _, p := range ae.Problems {
			n.manifestProblems = append(n.manifestProblems, p.String())
		}
		if len(n.manifestProblems) == 0 {
			n.manifestProblems = []string{ae.Message}
		}
		c.Status(fiber.StatusUnprocessableEntity)
		return h.renderApp(c, id, n)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/apps/"+id, fiber.StatusSeeOther)
}

// candidateAction starts a build and check or a preview start, or stops
// the preview, and shows the page, with the action's refusal in the
// candidate panel.
func (h *appPages) candidateAction(c *fiber.Ctx, act func(ctx context.Context, id string) error) error {
	id := c.Params("id")
	if _, err := h.Apps.Get(c.UserContext(), id); err != nil {
		return err
	}
	err := act(c.UserContext(), id)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderApp(c, id, appNotes{candidateProblem: sentence})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/apps/"+id+"#candidate", fiber.StatusSeeOther)
}

func (h *appPages) appCycle(c *fiber.Ctx) error {
	return h.candidateAction(c, h.Actions.BuildAndCheck)
}

func (h *appPages) appPreviewStart(c *fiber.Ctx) error {
	return h.candidateAction(c, h.Actions.StartPreview)
}

func (h *appPages) appPreviewStop(c *fiber.Ctx) error {
	return h.candidateAction(c, h.Actions.StopPreview)
}

func (h *appPages) appActivate(c *fiber.Ctx) error {
	id := c.Params("id")
	err := h.Actions.Activate(c.UserContext(), id, c.FormValue("release"))
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderApp(c, id, appNotes{problem: sentence})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/apps/"+id, fiber.StatusSeeOther)
}

func appRow(a app.App, selected string) views.AppRow {
	return views.AppRow{ID: a.ID, Name: a.Name, Origin: a.Origin, Current: a.CurrentRelease, Selected: a.ID == selected}
}

// candidateView shapes what the host observed for the candidate panel.
func candidateView(id string, o candidate.Observed) views.CandidateView {
	v := views.CandidateView{AppID: id, Edited: o.Edited, PreviewRunning: o.PreviewRunning,
		PreviewNote: o.PreviewNote, ChecksNote: o.ChecksNote}
	if o.Edited {
		v.EditedNote = candidate.EditedSinceBuild
	}
	if b := o.Build; b != nil {
		v.Built, v.BuildOK, v.Revision, v.BuiltAt = true, b.OK, short(b.Revision), clock(b.At)
		v.StagesRun, v.NotRun = b.StagesRun, b.NotRun
		if b.Release != nil {
			v.Release = b.Release.ID
		}
		for _, p := range b.Problems {
			v.Problems = append(v.Problems, p.String())
		}
	}
	if o.PreviewRunning {
		v.PreviewURL, v.PreviewRelease = o.Live.Link, o.Live.Release
	} else if o.State.Preview != nil && o.State.Preview.Problem != "" && v.PreviewNote == "" {
		v.PreviewNote = o.State.Preview.Problem
	}
	if k := o.Checks; k != nil {
		v.ChecksRun, v.ChecksPassed = true, k.Passed
		for _, r := range k.Results {
			v.Checks = append(v.Checks, checkRow(r))
		}
	}
	if o.Cycle != nil {
		v.LastStep, v.Next = o.Cycle.Step, o.Cycle.Next
	}
	return v
}

func checkRow(r acceptance.Result) views.CheckRow {
	return views.CheckRow{ID: r.ID, Title: r.Title, Passed: r.Passed, Sentence: r.Failure}
}

func short(rev string) string {
	if len(rev) > 10 {
		return rev[:10]
	}
	return rev
}

func clock(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05")
}
