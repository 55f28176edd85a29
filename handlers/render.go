package handlers

import (
	"context"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"autoapp/views"
)

// frame is what the handlers of every page share: the one Deps, and the
// frame a page is drawn in (the shell, the application the rail names and
// its mark when something needs the person), the error page and /healthz.
// Each page's handlers embed it.
type frame struct{ *Deps }

// render writes a component as the HTML response.
func render(c *fiber.Ctx, comp templ.Component) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// shell is the frame of a page for this request.
func shell(c *fiber.Ctx, title, current string) views.Shell {
	s := views.Shell{Title: title, Current: current, CSRF: csrfToken(c)}
	if o, ok := c.Locals(localOwner).(string); ok {
		s.Owner = o
	}
	return s
}

// page is the frame of a signed-in page: the shell with the application
// selected last, and the rail's mark when something needs the person.
func (f frame) page(c *fiber.Ctx, title, current string) (views.Shell, error) {
	return f.pageMarked(c, title, current, f.needsYou(c.UserContext()))
}

// pageMarked is page for a handler that has counted what needs the person
// already (it read the overview): the count is made once a request.
func (f frame) pageMarked(c *fiber.Ctx, title, current string, needsYou int) (views.Shell, error) {
	s := shell(c, title, current)
	s.NeedsYou = needsYou
	s.Running = f.running()
	id, err := f.Apps.Selected(c.UserContext())
	if err != nil || id == "" {
		return s, err
	}
	a, err := f.Apps.Get(c.UserContext(), id)
	if err != nil {
		return s, err
	}
	s.AppID, s.AppName = a.ID, a.Name
	return s, nil
}

// pageAbout is the frame of a page about one application (its own page,
// one of its intents): the rail names that application, whichever was
// selected last. Showing a page selects nothing.
func (f frame) pageAbout(c *fiber.Ctx, title, current, appID, appName string) views.Shell {
	s := shell(c, title, current)
	s.NeedsYou = f.needsYou(c.UserContext())
	s.Running = f.running()
	s.AppID, s.AppName = appID, appName
	return s
}

// running are the intents running, as the rail names them.
func (f frame) running() []views.RunLink {
	if f.Runs == nil {
		return nil
	}
	var out []views.RunLink
	for _, r := range f.Runs.Running() {
		out = append(out, views.RunLink{IntentID: r.IntentID, AppID: r.AppID})
	}
	return out
}

func errorPage(c *fiber.Ctx, status int, sentence string) templ.Component {
	return views.ErrorPage(shell(c, views.StatusTitle(status), ""), status, sentence)
}

// needsYou counts what waits for the person, for the rail's mark. A
// failure to read it leaves the rail unmarked and is logged: the page
// itself still shows.
func (f frame) needsYou(ctx context.Context) int {
	if f.Overview == nil {
		return 0
	}
	n, err := f.Overview.NeedCount(ctx)
	if err != nil {
		f.Log.Error("what needs the person could not be read", "err", err)
		return 0
	}
	return n
}
