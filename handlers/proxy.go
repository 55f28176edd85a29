package handlers

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ParseTrustedProxy reads the address a proxy in front of this server
// connects from: an IP address (192.0.2.1, ::1) or a range of them
// (10.0.0.0/8, fd00::/8).
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Zone() == "" {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or a range of them (for example 10.0.0.0/8)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// proxies are the addresses whose forwarded headers this server believes:
// none unless the owner names them.
type proxies []netip.Prefix

// newProxies panics on a malformed address, as New does on a malformed
// name: a list the server could not read must not mean another list.
func newProxies(list []string) proxies {
	var p proxies
	for _, s := range list {
		r, err := ParseTrustedProxy(s)
		if err != nil {
			panic(fmt.Sprintf("handlers: Deps.TrustedProxies: %v", err))
		}
		p = append(p, r)
	}
	return p
}

func (p proxies) trust(a netip.Addr) bool {
	a = a.Unmap()
	for _, r := range p {
		if r.Contains(a) {
			return true
		}
	}
	return false
}

// front is the request as the browser sent it: the scheme and host it
// asked for and the address it came from. Without a trusted proxy they are
// the connection's and the request's own, whatever headers it carries; from
// a trusted proxy they are what its X-Forwarded-Proto, X-Forwarded-Host and
// X-Forwarded-For say. No other forwarded header (Forwarded, X-Real-Ip,
// X-Url-Scheme, X-Forwarded-Ssl) is ever read.
type front struct {
	scheme string
	host   string
	client string
}

// front reads the request's front. Fiber's own Hostname, Protocol and IP
// are not used: they believe the forwarded headers of anyone unless told
// otherwise.
func (p proxies) front(c *fiber.Ctx) front {
	req := c.Request()
	f := front{scheme: "http", host: string(req.URI().Host())}
	if c.Context().IsTLS() {
		f.scheme = "https"
	}
	remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	remote = remote.Unmap()
	f.client = remote.String()
	if !remote.IsValid() || !p.trust(remote) {
		return f
	}
	if host := firstValue(string(req.Header.Peek("X-Forwarded-Host"))); host != "" {
		f.host = host
	}
	if scheme := strings.ToLower(firstValue(string(req.Header.Peek("X-Forwarded-Proto")))); scheme == "http" || scheme == "https" {
		f.scheme = scheme
	}
	var hops []string
	for _, v := range req.Header.PeekAll("X-Forwarded-For") {
		hops = append(hops, strings.Split(string(v), ",")...)
	}
	f.client = p.forwardedClient(remote, hops).String()
	return f
}

// forwardedClient walks X-Forwarded-For from the right, the hop the trusted
// proxy added, past every hop that is a trusted proxy too: the first that
// is not is the browser. Hops to its left are whatever the browser wrote.
// A hop that is no address ends the walk at the last trusted one.
func (p proxies) forwardedClient(remote netip.Addr, hops []string) netip.Addr {
	client := remote
	for i := len(hops) - 1; i >= 0 && p.trust(client); i-- {
		a, ok := hopAddr(strings.TrimSpace(hops[i]))
		if !ok {
			break
		}
		client = a
	}
	return client
}

// hopAddr reads one hop of X-Forwarded-For: an address, with a port or not.
func hopAddr(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	host, _, err := net.SplitHostPort(hop)
	if err != nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// firstValue is the first of a header's comma-separated values: the one
// the first proxy on the way wrote.
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// frontOf is the front the Host check read, which runs before anything else.
func frontOf(c *fiber.Ctx) front {
	if f, ok := c.Locals(localFront).(front); ok {
		return f
	}
	return proxies(nil).front(c)
}

// secure tells whether the browser reached this server over TLS, so its
// cookies are marked Secure.
func secure(c *fiber.Ctx) bool {
	return frontOf(c).scheme == "https"
}
