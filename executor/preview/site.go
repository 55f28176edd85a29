package preview

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
)

// ConsoleCookiePrefix begins the name of every cookie the console sets.
// A preview's site never receives one and can never set one, whatever URL
// its pages send the browser to: the console's cookies belong to its host,
// and a browser sends them to any port of that host.
const ConsoleCookiePrefix = "autoapp_"

// site guards a preview's own listener: it answers only for the preview's
// own name, <app>.localhost:<port> (421 for any other Host, such as
// 127.0.0.1:<port>, where the browser would send the console's cookies),
// and strips the console's cookies from every request and from every
// answer.
func site(appID string, port int, next http.Handler) http.Handler {
	want := fmt.Sprintf("%s.localhost:%d", appID, port)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Host, want) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusMisdirectedRequest)
			fmt.Fprintf(w, "This preview answers only at http://%s/.\n", want)
			return
		}
		stripConsoleCookies(r.Header)
		next.ServeHTTP(w, r)
	})
}

// stripConsoleCookies drops the console's cookies from a request's Cookie
// headers, keeping the preview's own.
func stripConsoleCookies(h http.Header) {
	lines := h.Values("Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
			if name != "" && !strings.HasPrefix(strings.ToLower(name), ConsoleCookiePrefix) {
				kept = append(kept, strings.TrimSpace(part))
			}
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// dropConsoleSetCookies removes any Set-Cookie of an answer that names one
// of the console's cookies.
func dropConsoleSetCookies(h http.Header) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	h.Del("Set-Cookie")
	for _, line := range lines {
		name, _, _ := strings.Cut(strings.TrimSpace(line), "=")
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), ConsoleCookiePrefix) {
			h.Add("Set-Cookie", line)
		}
	}
}

// noAnswerHeader marks the host's own answer when the preview did not
// answer, so the wait for a first answer does not take it for one.
const noAnswerHeader = "Autoapp-Preview-No-Answer"

// forwarder passes a request on to a preview command through dial, the
// only way to reach it: it listens in a network of its own.
func forwarder(dial func(ctx context.Context) (net.Conn, error), port int) http.Handler {
	target := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The preview sees the name it is opened at.
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{
			DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
			MaxIdleConnsPerHost: 8,
			Proxy:               nil,
		},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			dropConsoleSetCookies(resp.Header)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set(noAnswerHeader, "1")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintln(w, "The preview did not answer.")
		},
	}
}
