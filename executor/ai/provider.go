package ai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Endpoint is where a turn's requests go: a provider's base URL (without
// /v1), its key (empty for a local server without one) and the model. The
// caller has already resolved a model reference into one.
type Endpoint struct {
	Provider string
	BaseURL  string
	APIKey   string
	Model    string
	// ContextTokens is the model's context window, when known; 0 when not.
	ContextTokens int
	// NoTextCalls turns off reading tool calls a model wrote as text
	// (recoverCalls): the provider's setting.
	NoTextCalls bool
}

// RunHeader names the run a request belongs to, so that a log or a
// scripted model can tell the turns of one run from the others.
const RunHeader = "X-Autoapp-Run"

// DefaultRequestTimeout is how long a structured question (Ask) or a list
// of models may take when the caller does not say. A turn's requests have
// no such limit: its own limits (idle, wall) bound them, since a local
// model may take minutes to answer.
const DefaultRequestTimeout = 60 * time.Second

// ProviderErrorKind says what kind of failure of the provider an error is.
type ProviderErrorKind string

// The kinds of provider failure.
const (
	// ProviderUnreachable: the connection could not be made.
	ProviderUnreachable ProviderErrorKind = "unreachable"
	// ProviderDropped: the connection closed before an answer.
	ProviderDropped ProviderErrorKind = "dropped"
	// ProviderTimeout: no answer within the request's time limit.
	ProviderTimeout ProviderErrorKind = "timeout"
	// ProviderKey: HTTP 401 or 403.
	ProviderKey ProviderErrorKind = "key"
	// ProviderModel: HTTP 404, the model is not offered.
	ProviderModel ProviderErrorKind = "model"
	// ProviderRateLimit: HTTP 429.
	ProviderRateLimit ProviderErrorKind = "rate_limit"
	// ProviderFailed: HTTP 5xx.
	ProviderFailed ProviderErrorKind = "failed"
	// ProviderRefused: any other HTTP error status.
	ProviderRefused ProviderErrorKind = "refused"
	// ProviderMalformed: an answer that is not a chat completion.
	ProviderMalformed ProviderErrorKind = "malformed"
	// ProviderUnusable: a completion whose content is not the JSON object
	// Ask asked for.
	ProviderUnusable ProviderErrorKind = "unusable"
	// ProviderContext: HTTP 400, the prompt does not fit the model's
	// context window.
	ProviderContext ProviderErrorKind = "context"
)

// ProviderError is a failure of the provider reduced to one sentence of
// ours. Error returns the sentence; the provider's raw text is kept apart
// in Detail for the log, so it never reaches the person or the model.
type ProviderError struct {
	Kind     ProviderErrorKind
	Sentence string
	// Status is the HTTP status, when the provider answered with one.
	Status int
	detail string
}

func (e *ProviderError) Error() string { return e.Sentence }

// Detail is the raw detail of the failure for the log, with the key taken
// out. It is never for the person or the model.
func (e *ProviderError) Detail() string { return e.detail }

// ErrorSentence is the sentence for the person that err stands for.
func ErrorSentence(err error) string {
	var pe *ProviderError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return pe.Sentence
	case errors.Is(err, context.Canceled):
		return StoppedSentence
	}
	return "The AI provider failed."
}

// UnreachableSentence is the sentence for a provider that could not be
// reached at host.
func UnreachableSentence(host string) string {
	return fmt.Sprintf("The AI provider at %s could not be reached.", host)
}

// DroppedSentence is the sentence for a provider that closed the connection
// without answering.
func DroppedSentence(host string) string {
	return fmt.Sprintf("The AI provider at %s closed the connection without answering.", host)
}

// TimeoutSentence is the sentence for a provider that did not answer
// within d.
func TimeoutSentence(d time.Duration) string {
	return fmt.Sprintf("The AI provider did not answer within %s.", spell(d))
}

// KeySentence is the sentence for a refused key (HTTP 401 or 403).
const KeySentence = "The AI provider refused the key."

// ModelSentence is the sentence for a model the provider does not offer.
func ModelSentence(model string) string {
	return fmt.Sprintf("The AI provider does not offer the model %s.", model)
}

// RateLimitSentence is the sentence for HTTP 429.
const RateLimitSentence = "The AI provider is rate-limiting requests; try again later."

// FailedSentence is the sentence for an HTTP 5xx.
func FailedSentence(status int) string {
	return fmt.Sprintf("The AI provider failed (HTTP %d).", status)
}

// RefusedSentence is the sentence for another HTTP error status.
func RefusedSentence(status int) string {
	return fmt.Sprintf("The AI provider refused the request (HTTP %d).", status)
}

// MalformedSentence is the sentence for an answer that is not a chat
// completion.
const MalformedSentence = "The AI provider answered with something that is not a chat completion."

// UnusableSentence is the sentence for an Ask whose answer is not the JSON
// object asked for.
const UnusableSentence = "The model's answer was not the JSON object asked for."

// spell writes a duration the way a sentence says it: "60 seconds",
// "8 minutes".
func spell(d time.Duration) string {
	switch {
	case d >= 2*time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return fmt.Sprintf("%g seconds", d.Seconds())
}

// errRequestTimeout is the cause of a request's context when the request
// took longer than its own limit.
var errRequestTimeout = errors.New("ai: request timed out")

// provider is one endpoint's client. The API key is given to this client
// only, whose base URL is the endpoint's; the SDK refuses to send a request
// to another origin, and the HTTP client follows no redirect.
type provider struct {
	ep      Endpoint
	host    string
	chat    openai.ChatCompletionService
	models  openai.ModelService
	http    *http.Client
	timeout time.Duration
}

// newProvider builds the endpoint's client from explicit options only:
// openai.NewClient would read OPENAI_BASE_URL, OPENAI_API_KEY and
// OPENAI_ORG_ID from the environment, and the environment must never decide
// where a request goes or what it carries. timeout is the limit the
// caller puts on one request, for its sentence; 0 for a turn, whose
// requests its own limits bound.
func newProvider(ep Endpoint, runID string, timeout time.Duration) (*provider, error) {
	base := strings.TrimRight(strings.TrimSpace(ep.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ProviderError{Kind: ProviderUnreachable, Sentence: UnreachableSentence(ep.BaseURL),
			detail: "the base URL is not an http(s) URL"}
	}
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{
		Transport: transport,
		// A redirect could carry the key elsewhere; a provider answers
		// where it is configured or not at all.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(client),
		// The turn's limits are ours; the SDK does not resend a request
		// (and its cost) behind them.
		option.WithMaxRetries(0),
		// A server that answers a streamed request with one plain JSON
		// completion is read as that answer.
		option.WithMiddleware(plainAnswerAsStream),
	}
	if ep.APIKey != "" {
		opts = append(opts, option.WithAPIKey(ep.APIKey))
	}
	if runID != "" {
		opts = append(opts, option.WithHeader(RunHeader, runID))
	}
	return &provider{
		ep:      ep,
		host:    u.Host,
		chat:    openai.NewChatCompletionService(opts...),
		models:  openai.NewModelService(opts...),
		http:    client,
		timeout: timeout,
	}, nil
}

func (p *provider) close() { p.http.CloseIdleConnections() }

// reduce turns a failed request into a ProviderError. reqCtx is the
// request's context: its cause tells our request timeout from other ends.
func (p *provider) reduce(reqCtx context.Context, err error, resp *http.Response) *ProviderError {
	pe := p.classify(reqCtx, err, resp)
	detail := err.Error()
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		detail = fmt.Sprintf("HTTP %d: %s", apiErr.StatusCode, apiErr.RawJSON())
	}
	pe.detail = p.redact(detail)
	return pe
}

func (p *provider) classify(reqCtx context.Context, err error, resp *http.Response) *ProviderError {
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		status = apiErr.StatusCode
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &ProviderError{Kind: ProviderKey, Sentence: KeySentence, Status: status}
	case status == http.StatusNotFound:
		return &ProviderError{Kind: ProviderModel, Sentence: ModelSentence(p.ep.Model), Status: status}
	case status == http.StatusTooManyRequests:
		return &ProviderError{Kind: ProviderRateLimit, Sentence: RateLimitSentence, Status: status}
	case status == http.StatusBadRequest && isContextError(err):
		tokens, _ := contextTooSmall(err)
		if tokens == 0 {
			tokens = p.ep.ContextTokens
		}
		return &ProviderError{Kind: ProviderContext, Sentence: ContextSentence(tokens), Status: status}
	case status >= 500:
		return &ProviderError{Kind: ProviderFailed, Sentence: FailedSentence(status), Status: status}
	case status >= 300:
		return &ProviderError{Kind: ProviderRefused, Sentence: RefusedSentence(status), Status: status}
	case errors.Is(context.Cause(reqCtx), errRequestTimeout):
		return &ProviderError{Kind: ProviderTimeout, Sentence: TimeoutSentence(p.timeout)}
	case status != 0:
		return &ProviderError{Kind: ProviderMalformed, Sentence: MalformedSentence, Status: status}
	}
	var transport *url.Error
	if errors.Is(err, errStreamCut) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ProviderError{Kind: ProviderDropped, Sentence: DroppedSentence(p.host)}
	}
	if !errors.As(err, &transport) {
		// Not a failure of the connection: what came back could not be read.
		return &ProviderError{Kind: ProviderMalformed, Sentence: MalformedSentence}
	}
	var netErr net.Error
	switch {
	case errors.Is(err, errStreamCut):
		return &ProviderError{Kind: ProviderDropped, Sentence: DroppedSentence(p.host)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &ProviderError{Kind: ProviderDropped, Sentence: DroppedSentence(p.host)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &ProviderError{Kind: ProviderTimeout, Sentence: TimeoutSentence(p.timeout)}
	}
	return &ProviderError{Kind: ProviderUnreachable, Sentence: UnreachableSentence(p.host)}
}

// redact takes the key out of text meant for the log.
func (p *provider) redact(s string) string {
	if p.ep.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.ep.APIKey, "[key]")
}

// isContextError says the 400 is about the context window.
func isContextError(err error) bool {
	_, ok := contextTooSmall(err)
	return ok
}
