package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"autoapp/handlers"
)

// allowRemote is --allow-remote. Alone (or =true) it allows an address other
// machines can reach, as the bool flag it was; with names
// (--allow-remote=box.example,box.example:9000) it allows that too and adds
// the names this server may also be reached by. Repeating it adds names.
type allowRemote struct {
	allowed bool
	names   []string
}

// IsBoolFlag lets --allow-remote stand alone.
func (a *allowRemote) IsBoolFlag() bool { return true }

// String is the names given, as flag prints a default.
func (a *allowRemote) String() string {
	if a == nil {
		return ""
	}
	return strings.Join(a.names, ",")
}

// Set takes a bool as before, or a comma-separated list of host names, each
// with an optional port; a name without one means the port serve listens on.
func (a *allowRemote) Set(value string) error {
	if b, err := strconv.ParseBool(value); err == nil {
		a.allowed = b
		if !b {
			a.names = nil
		}
		return nil
	}
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return fmt.Errorf("%q holds an empty name; separate the names with single commas", value)
		}
		// The port here only checks the form: the real one is known once listening.
		if _, err := handlers.CanonicalHost(name, "80"); err != nil {
			return err
		}
		a.names = append(a.names, name)
	}
	a.allowed = true
	return nil
}

// acceptedHosts are the Host names the server answers at, listening on addr
// (as given to --addr) at port: the listen host unless it is every
// interface, the names given with --allow-remote, then the loopback names.
// The first is the one a refused request is pointed to.
func acceptedHosts(addr string, port int, remote []string) ([]string, error) {
	p := strconv.Itoa(port)
	var hosts []string
	seen := map[string]bool{}
	add := func(name string) error {
		c, err := handlers.CanonicalHost(name, p)
		if err != nil {
			return err
		}
		if !seen[c] {
			seen[c] = true
			hosts = append(hosts, c)
		}
		return nil
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			// A host no browser can name (an IPv6 zone) is simply not one.
			_ = add(net.JoinHostPort(host, p))
		}
	}
	for _, name := range remote {
		if err := add(name); err != nil {
			return nil, fmt.Errorf("--allow-remote: %w", err)
		}
	}
	for _, name := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	return hosts, nil
}

// trustedProxies is --trusted-proxy=ADDR,…: the addresses (IPs or ranges)
// of the proxies in front of the server whose X-Forwarded-Host, -Proto and
// -For it believes. Repeating it adds addresses.
type trustedProxies []string

// String is the addresses given, as flag prints a default.
func (p *trustedProxies) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(*p, ",")
}

// Set takes a comma-separated list of IP addresses and ranges.
func (p *trustedProxies) Set(value string) error {
	for _, addr := range strings.Split(value, ",") {
		addr = strings.TrimSpace(addr)
		if addr == "" {
			return fmt.Errorf("%q holds an empty address; separate the addresses with single commas", value)
		}
		if _, err := handlers.ParseTrustedProxy(addr); err != nil {
			return err
		}
		*p = append(*p, addr)
	}
	return nil
}
