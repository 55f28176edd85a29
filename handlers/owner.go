package handlers

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/owner"
	"autoapp/intent/refusal"
	"autoapp/views"
)

// ownerPages are the setup and sign-in pages and the session check in
// front of every other page (Owners).
type ownerPages struct {
	frame
	// ownerExists is remembered once true: the owner is never deleted.
	ownerExists atomic.Bool
}

func (h *ownerPages) setupForm(c *fiber.Ctx) error {
	if h.ownerExists.Load() {
		return c.Redirect("/signin", fiber.StatusSeeOther)
	}
	return render(c, views.SetupPage(shell(c, "Create the owner", ""), views.OwnerForm{}, owner.MinPasswordLength))
}

func (h *ownerPages) setup(c *fiber.Ctx) error {
	name := c.FormValue("name")
	err := h.Owners.Create(c.UserContext(), name, c.FormValue("password"), c.FormValue("again"))
	var oe *refusal.Error
	switch {
	case err == nil:
		h.ownerExists.Store(true)
		if err := h.startSession(c, name, c.FormValue("password")); err != nil {
			return err
		}
		return c.Redirect("/backlog", fiber.StatusSeeOther)
	case errors.As(err, &oe) && oe.Code == refusal.Conflict:
		h.ownerExists.Store(true)
		return err
	case errors.As(err, &oe):
		return render(c.Status(refusal.Status(oe.Code)), views.SetupPage(shell(c, "Create the owner", ""),
			views.OwnerForm{Name: name, Problem: oe.Message}, owner.MinPasswordLength))
	}
	return err
}

func (h *ownerPages) signInForm(c *fiber.Ctx) error {
	if _, ok := c.Locals(localOwner).(string); ok {
		return c.Redirect(safeNext(c.Query("next")), fiber.StatusSeeOther)
	}
	f := views.OwnerForm{Next: c.Query("next")}
	if c.Query("signed_out") != "" {
		f.Notice = "You are signed out."
	}
	return render(c, views.SignInPage(shell(c, "Sign in", ""), f))
}

func (h *ownerPages) signIn(c *fiber.Ctx) error {
	name := c.FormValue("name")
	err := h.startSession(c, name, c.FormValue("password"))
	var oe *refusal.Error
	if errors.As(err, &oe) {
		if oe.Code == refusal.Throttled {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(oe.RetryAfter/time.Second)))
		}
		return render(c.Status(refusal.Status(oe.Code)), views.SignInPage(shell(c, "Sign in", ""),
			views.OwnerForm{Name: name, Problem: oe.Message, Next: c.FormValue("next")}))
	}
	if err != nil {
		return err
	}
	return c.Redirect(safeNext(c.FormValue("next")), fiber.StatusSeeOther)
}

// startSession signs in and hands out a new session id and a new CSRF
// token, so nothing issued before sign-in is worth anything after it, and
// marks the browser as one that signed in.
func (h *ownerPages) startSession(c *fiber.Ctx, name, password string) error {
	if old := c.Cookies(sessionCookie); old != "" {
		if err := h.Owners.SignOut(c.UserContext(), old); err != nil {
			return err
		}
	}
	signed, err := h.Owners.SignIn(c.UserContext(), name, password,
		owner.Client{Address: frontOf(c).client, Browser: c.Cookies(browserCookie)})
	if err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: signed.Session, Path: "/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: secure(c),
		MaxAge: int(owner.SessionAbsolute / time.Second)})
	c.Cookie(&fiber.Cookie{Name: browserCookie, Value: signed.Browser, Path: "/signin", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: secure(c),
		MaxAge: int(owner.KnownBrowserLife / time.Second)})
	_, err = setCSRFCookie(c)
	return err
}

func (h *ownerPages) signOut(c *fiber.Ctx) error {
	id, _ := c.Locals(localSession).(string)
	if err := h.Owners.SignOut(c.UserContext(), id); err != nil {
		return err
	}
	clearCookie(c, sessionCookie)
	if _, err := setCSRFCookie(c); err != nil {
		return err
	}
	return c.Redirect("/signin?signed_out=1", fiber.StatusSeeOther)
}

// safeNext keeps a redirect after sign-in on this server. Control
// characters are refused because browsers drop tabs and newlines from a
// URL, which would turn "/\t/evil.example" into "//evil.example".
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/backlog"
	}
	return next
}
