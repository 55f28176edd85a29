package handlers

import (
	"crypto/subtle"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/owner"
	"autoapp/views"
)

// Cookie names. The session cookie holds a random 256-bit id whose hash is
// the sessions row; the CSRF cookie holds the token forms send back.
const (
	sessionCookie = "autoapp_session"
	csrfCookie    = "autoapp_csrf"
	localOwner    = "owner"
	localSession  = "session"
	localCSRF     = "csrf"
	localFront    = "front"
	// browserCookie marks a browser that signed in before: its token,
	// known to the owner service, earns it an allowance of failed
	// sign-ins of its own. Only the sign-in page reads it.
	browserCookie = "autoapp_browser"
)

// The content security policy allows nothing inline and nothing from
// elsewhere: scripts, styles and images come from this server only.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func securityHeaders(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", contentSecurityPolicy)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	return c.Next()
}

// Sentences of the CSRF refusals.
const (
	errCrossSite = "This request came from another site, so it was refused. Use the pages of this server."
	errNoToken   = "This form is out of date or did not come from this server, so it was refused. Reload the page and try again."
)

// csrf gives every visitor a token cookie and refuses any request that could
// change something unless it comes from this origin and carries that token.
func csrf(c *fiber.Ctx) error {
	token := c.Cookies(csrfCookie)
	if !validToken(token) {
		token = ""
	}
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		if token == "" {
			var err error
			if token, err = setCSRFCookie(c); err != nil {
				return err
			}
		}
		c.Locals(localCSRF, token)
		return c.Next()
	}
	if !sameOrigin(c) {
		return fiber.NewError(fiber.StatusForbidden, errCrossSite)
	}
	sent := c.Get(views.CSRFHeader)
	if sent == "" {
		sent = c.FormValue(views.CSRFField)
	}
	if token == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
		return fiber.NewError(fiber.StatusForbidden, errNoToken)
	}
	c.Locals(localCSRF, token)
	return c.Next()
}

func validToken(t string) bool {
	return len(t) == 43 && !strings.ContainsFunc(t, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
}

// sameOrigin accepts a request whose Origin is this server, or, when the
// browser sent no Origin, whose Sec-Fetch-Site says same-origin. A request
// that says neither is refused: every browser this serves sends one. This
// server is the scheme and host of the request's front: its own Host
// unless a trusted proxy forwarded it.
func sameOrigin(c *fiber.Ctx) bool {
	if origin := c.Get(fiber.HeaderOrigin); origin != "" {
		u, err := url.Parse(origin)
		f := frontOf(c)
		return err == nil && u.Scheme == f.scheme && strings.EqualFold(u.Host, f.host)
	}
	return c.Get("Sec-Fetch-Site") == "same-origin"
}

func setCSRFCookie(c *fiber.Ctx) (string, error) {
	token, err := owner.RandomToken()
	if err != nil {
		return "", err
	}
	c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: token, Path: "/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: secure(c)})
	c.Locals(localCSRF, token)
	return token, nil
}

func csrfToken(c *fiber.Ctx) string {
	t, _ := c.Locals(localCSRF).(string)
	return t
}

// publicPaths are reachable without a session.
var publicPaths = map[string]bool{"/setup": true, "/signin": true}

// session sends a fresh server to the setup page, and everyone without a
// live owner session to the sign-in page.
func (h *ownerPages) session(c *fiber.Ctx) error {
	exists, err := h.ownerCreated(c)
	if err != nil {
		return err
	}
	path := c.Path()
	if !exists {
		if path == "/setup" {
			return c.Next()
		}
		return redirect(c, "/setup")
	}
	id := c.Cookies(sessionCookie)
	o, err := h.Owners.Session(c.UserContext(), id)
	switch {
	case err == nil:
		c.Locals(localOwner, o.Name)
		c.Locals(localSession, id)
		return c.Next()
	case !errors.Is(err, owner.ErrNoSession):
		return err
	}
	if id != "" {
		clearCookie(c, sessionCookie)
	}
	if publicPaths[path] {
		return c.Next()
	}
	target := "/signin"
	if c.Method() == fiber.MethodGet && c.Get("HX-Request") != "true" && path != "/" {
		target += "?next=" + url.QueryEscape(string(c.Request().URI().RequestURI()))
	}
	return redirect(c, target)
}

func (h *ownerPages) ownerCreated(c *fiber.Ctx) (bool, error) {
	if h.ownerExists.Load() {
		return true, nil
	}
	exists, err := h.Owners.Exists(c.UserContext())
	if err != nil {
		return false, err
	}
	if exists {
		h.ownerExists.Store(true)
	}
	return exists, nil
}

// redirect sends htmx requests an HX-Redirect and others a 303.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusUnauthorized)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// clearCookie expires the cookie: fasthttp writes no Max-Age for a negative
// one, so only a date in the past makes the browser drop it.
func clearCookie(c *fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: secure(c)})
}
