package handlers

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// CanonicalHost is name in the form the Host check compares: "host:port"
// with the host in lower case, an IPv6 address in brackets and the port
// without leading zeros. A name without a port takes defaultPort. Anything
// that is not a host name or an IP address, with at most a port, is an error.
func CanonicalHost(name, defaultPort string) (string, error) {
	host, port := name, defaultPort
	if h, p, err := net.SplitHostPort(name); err == nil {
		host, port = h, p
		if port == "" {
			// "name:" is the default port, as RFC 3986 reads an empty one.
			port = defaultPort
		}
	} else if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		host = name[1 : len(name)-1]
	} else if strings.Contains(name, ":") {
		return "", fmt.Errorf("%q is not a host name with an optional port (for example box.example or box.example:8080)", name)
	}
	host = strings.ToLower(host)
	// Brackets hold an IPv6 address and nothing else.
	if strings.HasPrefix(name, "[") != strings.Contains(host, ":") || !validHost(host) {
		return "", fmt.Errorf("%q is not a host name or an IP address, with an optional port", name)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(port, "+") {
		return "", fmt.Errorf("%q does not have a port between 1 and 65535", name)
	}
	if ip := net.ParseIP(host); ip != nil && strings.Contains(host, ":") {
		// One spelling of each IPv6 address: [0:0::1] is [::1].
		host = ip.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// validHost accepts an IP address or a DNS name of letters, digits, dots,
// hyphens and underscores.
func validHost(host string) bool {
	if host == "" {
		return false
	}
	if strings.Contains(host, ":") {
		ip := net.ParseIP(host)
		return ip != nil && ip.To4() == nil
	}
	return !strings.ContainsFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
	})
}

// hostCheck answers 421 to a request whose Host is not one of this server's
// names, before anything else sees it. A page on another name that
// DNS-rebinds to this address sends its own name as the Host, so it gets no
// further than this, even on a fresh root without an owner. It also reads
// the request's front (see front), for every later check.
type hostCheck struct {
	accepted map[string]bool
	// home is the first name, the one the refusal points the person to.
	home string
	// proxies are the ones whose forwarded headers are believed.
	proxies proxies
}

// newHostCheck panics on an empty or malformed list: a server that was
// given no names must not end up answering every name.
func newHostCheck(hosts []string, trusted proxies) *hostCheck {
	if len(hosts) == 0 {
		panic("handlers: Deps.Hosts is empty; give the host:port names this server answers at")
	}
	hc := &hostCheck{accepted: map[string]bool{}, proxies: trusted}
	for _, h := range hosts {
		c, err := CanonicalHost(h, "")
		if err != nil {
			panic(fmt.Sprintf("handlers: Deps.Hosts: %v", err))
		}
		if hc.home == "" {
			hc.home = c
		}
		hc.accepted[c] = true
	}
	return hc
}

// Sentence of a request with more than one Host header.
const errTwoHosts = "The request has more than one Host header."

func (hc *hostCheck) handle(c *fiber.Ctx) error {
	// fasthttp keeps the last Host header it reads: with two, the one
	// checked here need not be the one another reader of the request
	// takes, so a request with more than one is refused outright.
	hosts := 0
	c.Request().Header.VisitAllInOrder(func(key, _ []byte) {
		if strings.EqualFold(string(key), fiber.HeaderHost) {
			hosts++
		}
	})
	if hosts > 1 {
		return plainRefusal(c, fiber.StatusBadRequest, errTwoHosts)
	}
	f := hc.proxies.front(c)
	c.Locals(localFront, f)
	// The Host header, the host of an absolute request target, which
	// fasthttp prefers to it, and the host a trusted proxy says the browser
	// asked for: all must be this server's.
	header := string(c.Request().Header.Host())
	target := string(c.Request().URI().Host())
	if hc.accepts(header) && hc.accepts(target) && hc.accepts(f.host) {
		return c.Next()
	}
	sent := ""
	for _, h := range []string{header, target, f.host} {
		if h != "" && !hc.accepts(h) {
			sent = h
			break
		}
	}
	sentence := fmt.Sprintf("This server answers only at http://%s/; it does not serve the name %s.", hc.home, sent)
	if sent == "" {
		sentence = fmt.Sprintf("This server answers only at http://%s/; the request named no host.", hc.home)
	}
	return plainRefusal(c, fiber.StatusMisdirectedRequest, sentence)
}

// plainRefusal answers a request refused before any page could be shown:
// a plain-text sentence nothing caches or sniffs.
func plainRefusal(c *fiber.Ctx, status int, sentence string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(status).SendString(sentence)
}

// accepts compares case-insensitively; a Host without a port is port 80.
func (hc *hostCheck) accepts(host string) bool {
	c, err := CanonicalHost(host, "80")
	return err == nil && hc.accepted[c]
}
