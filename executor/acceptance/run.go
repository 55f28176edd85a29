package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits of a run.
const (
	StepTimeout  = 15 * time.Second // one request, answer and body included
	MaxBody      = 1 << 20          // bytes of an answer that are checked
	MaxRedirects = 10
)

// Result is how one example fared against the preview.
type Result struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Hash   string `json:"hash,omitempty"`
	Passed bool   `json:"passed"`
	// Step is the index of the step that failed; -1 when the example
	// passed or its file has problems.
	Step int `json:"step"`
	// Failure is a sentence for the person saying what went wrong, naming
	// the step ("expected status 200, got 404 on GET /tags").
	Failure string `json:"failure,omitempty"`
	// Steps are the example's steps as they were run, for the record a
	// check case keeps; not written with the result.
	Steps []Step `json:"-"`
}

// Run runs each example's steps in order against the preview at baseURL
// (http://<app>.localhost:PORT, reached at 127.0.0.1) and stops an example at its first failing step.
// Each request has StepTimeout; redirects are followed only within the
// preview's origin, and the answer to one that leaves it is judged as it
// is. Each example gets its own cookies unless client has a jar. A nil
// client means a plain one. Run never changes client.
func Run(ctx context.Context, baseURL string, examples []Example, client *http.Client) []Result {
	results := make([]Result, 0, len(examples))
	base, baseErr := previewOrigin(baseURL)
	for _, ex := range examples {
		r := Result{ID: ex.ID, Title: ex.Title, Hash: ex.Hash, Step: -1, Steps: ex.Steps}
		switch {
		case len(ex.Problems) > 0:
			r.Failure = ex.Problems.Error()
		case baseErr != nil:
			r.Failure = baseErr.Error()
		default:
			c := exampleClient(client, base)
			for i, s := range ex.Steps {
				if msg := runStep(ctx, c, base, s); msg != "" {
					r.Step, r.Failure = i, msg
					break
				}
			}
			r.Passed = r.Failure == ""
		}
		results = append(results, r)
	}
	return results
}

// previewOrigin is the scheme and host of baseURL.
func previewOrigin(baseURL string) (*url.URL, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the preview address %q is not an http address", baseURL)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// exampleClient copies client so redirects stay on the preview's origin and
// the example's cookies stay with the example.
func exampleClient(client *http.Client, base *url.URL) *http.Client {
	var c http.Client
	if client != nil {
		c = *client
	}
	if c.Transport == nil {
		c.Transport = LoopbackTransport()
	}
	if c.Jar == nil {
		// cookiejar.New with nil options never fails.
		c.Jar, _ = cookiejar.New(nil)
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != base.Scheme || req.URL.Host != base.Host {
			return http.ErrUseLastResponse
		}
		if len(via) >= MaxRedirects {
			return fmt.Errorf("it redirected more than %d times", MaxRedirects)
		}
		return nil
	}
	return &c
}

// runStep sends one step and says what is wrong with the answer, or ""
// when the step passed.
func runStep(ctx context.Context, c *http.Client, base *url.URL, s Step) string {
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	on := s.Method + " " + s.Path

	req, err := newRequest(ctx, base, s)
	if err != nil {
		return fmt.Sprintf("%s could not be sent: %v", on, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Sprintf("%s did not answer: %s", on, why(ctx, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return fmt.Sprintf("%s did not answer: %s", on, why(ctx, err))
	}

	e := s.Expect
	switch got := resp.StatusCode; {
	case s.Fails && !is4xx(got):
		return fmt.Sprintf("expected %s to be refused with a 4xx, got %d", on, got)
	case e.Status != 0 && got != e.Status:
		return fmt.Sprintf("expected status %d, got %d on %s", e.Status, got, on)
	case e.Status == 0 && !s.Fails && (got < 200 || got > 299):
		return fmt.Sprintf("expected a 2xx status, got %d on %s", got, on)
	}

	checksBody := len(e.Contains) > 0 || len(e.Absent) > 0 || e.JSON != nil
	if checksBody && len(body) > MaxBody {
		return fmt.Sprintf("the answer to %s is larger than %d MiB, too large to check", on, MaxBody>>20)
	}
	text := string(body)
	for _, want := range e.Contains {
		if !strings.Contains(text, want) {
			return fmt.Sprintf("expected the text %q on %s, it is not there", want, on)
		}
	}
	for _, bad := range e.Absent {
		if strings.Contains(text, bad) {
			return fmt.Sprintf("the text %q must not appear on %s, it does", bad, on)
		}
	}
	if e.JSON != nil {
		got, err := decodeJSON(body)
		if err != nil {
			return fmt.Sprintf("expected a JSON answer on %s, got text that is not JSON", on)
		}
		if msg := matchJSON("$", e.JSON, got); msg != "" {
			return msg + " on " + on
		}
	}
	return ""
}

func newRequest(ctx context.Context, base *url.URL, s Step) (*http.Request, error) {
	if msg := pathProblem(s.Path); msg != "" {
		return nil, errors.New(msg)
	}
	ref, err := url.Parse(s.Path)
	if err != nil {
		return nil, err
	}
	u := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: ref.Path, RawPath: ref.RawPath, RawQuery: ref.RawQuery}

	var body io.Reader
	contentType := ""
	switch v := s.Body.(type) {
	case nil:
	case string:
		body, contentType = strings.NewReader(v), "text/plain; charset=utf-8"
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		body, contentType = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, s.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// why says in a few words why a request got no answer.
func why(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", StepTimeout)
	case errors.Is(err, context.Canceled):
		return "the run was stopped"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before the answer was complete"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// matchJSON says where got differs from the subset want, or "" when it
// matches. at is the JSON path so far ("$.items[0]").
func matchJSON(at string, want, got any) string {
	if s, ok := want.(string); ok && s == Any {
		return ""
	}
	differ := func() string {
		return fmt.Sprintf("JSON at %s: expected %s, got %s", at, describe(want), describe(got))
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("JSON at %s: expected an object, got %s", at, describe(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, present := g[k]
			if !present {
				return fmt.Sprintf("JSON at %s: expected %s, it is missing", member(at, k), describe(w[k]))
			}
			if msg := matchJSON(member(at, k), w[k], v); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("JSON at %s: expected an array, got %s", at, describe(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("JSON at %s: expected %s, got %s", at, items(len(w)), items(len(g)))
		}
		for i := range w {
			if msg := matchJSON(fmt.Sprintf("%s[%d]", at, i), w[i], g[i]); msg != "" {
				return msg
			}
		}
		return ""
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumber(w, g) {
			return ""
		}
		return differ()
	default: // string, bool, nil
		if want == got {
			return ""
		}
		return differ()
	}
}

// member is the path of key k in the object at at.
func member(at, k string) string {
	plain := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return at + "." + k
	}
	q, _ := json.Marshal(k)
	return at + "[" + string(q) + "]"
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// sameNumber compares two JSON numbers: whole numbers exactly, others as
// float64, so 1, 1.0 and 1e0 agree. (big.Rat would be exact, but a huge
// exponent in an answer could make it work for minutes.)
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, errx := strconv.ParseInt(string(a), 10, 64)
	y, erry := strconv.ParseInt(string(b), 10, 64)
	if errx == nil && erry == nil {
		return x == y
	}
	f, errf := strconv.ParseFloat(string(a), 64)
	g, errg := strconv.ParseFloat(string(b), 64)
	return errf == nil && errg == nil && f == g
}

// describe writes v as compact JSON, shortened for a sentence.
func describe(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	const most = 80
	if r := []rune(s); len(r) > most {
		return string(r[:most]) + "…"
	}
	return s
}

// LoopbackTransport reaches every name under localhost at 127.0.0.1, as
// browsers do, so the host asks a preview at its own name
// (<app>.localhost:<port>), through the same guard the browser meets. It
// follows no proxy and keeps no connection alive.
func LoopbackTransport() *http.Transport {
	var d net.Dialer
	return &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err == nil && (strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost")) {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return d.DialContext(ctx, network, addr)
		},
	}
}
