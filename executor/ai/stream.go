package ai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Limits of waiting for a provider that asks to wait (HTTP 429 or 503).
const (
	// MaxRetries is how often one request is sent again after a wait.
	MaxRetries = 3
	// MaxRetryWait is the most waiting one request does in all.
	MaxRetryWait = 2 * time.Minute
	// defaultRetryWait is the first wait when the provider names none; it
	// doubles with each retry.
	defaultRetryWait = 5 * time.Second
)

// Progress is what a turn's model is doing now, for the page: waiting for
// its first token, writing (and how much), or waiting because the provider
// asked to.
type Progress struct {
	// Asked is when the request in flight was sent.
	Asked time.Time `json:"asked"`
	// Tokens are the pieces the model has streamed so far in this step;
	// 0 while it reads the prompt.
	Tokens int `json:"tokens"`
	// Wait is how long the provider asked to wait before the request is
	// sent again, with Why ("rate limit", "overloaded"); zero otherwise.
	Wait time.Duration `json:"wait"`
	Why  string        `json:"why,omitempty"`
}

// answer is one streamed completion, put together.
type answer struct {
	Content string
	Refusal string
	Calls   []toolCall
	Finish  string
	Usage   Usage
	// Counted says the provider reported the step's usage.
	Counted bool
}

// toolCall is one call of an answer; FromText names the form it was
// written in when it was read from the answer's text (recoverCalls).
type toolCall struct{ ID, Name, Args, FromText string }

// errStreamCut is a stream that ended without saying it was done;
// errNotAStream is an answer that held no completion chunk at all.
var (
	errStreamCut  = errors.New("ai: the stream ended before the completion was finished")
	errNotAStream = errors.New("ai: the answer held no completion chunk")
)

// stream sends one chat completion request and reads its answer as the
// model writes it, telling tokens how many pieces have come so far.
func (p *provider) stream(ctx context.Context, params openai.ChatCompletionNewParams, tokens func(n int)) (answer, error) {
	ctx = context.WithValue(ctx, streamedKey{}, true)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := p.chat.NewStreaming(ctx, params)
	defer s.Close()
	var a answer
	var content strings.Builder
	calls := map[int64]*toolCall{}
	var order []int64
	n, read := 0, 0
	for s.Next() {
		chunk := s.Current()
		read++
		if chunk.JSON.Usage.Valid() && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
			a.Usage = Usage{Input: int(chunk.Usage.PromptTokens), Output: int(chunk.Usage.CompletionTokens)}
			a.Counted = true
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			d := c.Delta
			piece := d.Content != "" || d.Refusal != ""
			content.WriteString(d.Content)
			a.Refusal += d.Refusal
			for _, tc := range d.ToolCalls {
				call := calls[tc.Index]
				if call == nil {
					call = &toolCall{}
					calls[tc.Index] = call
					order = append(order, tc.Index)
				}
				if call.ID == "" {
					call.ID = tc.ID
				}
				if call.Name == "" {
					call.Name = tc.Function.Name
				}
				call.Args += tc.Function.Arguments
				piece = true
			}
			if c.FinishReason != "" {
				a.Finish = c.FinishReason
			}
			if piece {
				n++
				tokens(n)
			}
		}
	}
	if err := s.Err(); err != nil {
		return a, err
	}
	a.Content = content.String()
	for _, i := range order {
		a.Calls = append(a.Calls, *calls[i])
	}
	switch {
	case a.Finish == "" && read == 0:
		return a, errNotAStream
	case a.Finish == "":
		return a, errStreamCut
	}
	return a, nil
}

// send streams one request, and sends it again when the provider asks to
// wait (HTTP 429 or 503), at most MaxRetries times and MaxRetryWait of
// waiting in all; progress hears of the request, each piece streamed and
// each wait. Nothing falls back to another provider.
func (p *provider) send(ctx context.Context, params openai.ChatCompletionNewParams, now func() time.Time, progress func(Progress)) (answer, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	var waited time.Duration
	for try := 0; ; try++ {
		asked := now()
		progress(Progress{Asked: asked})
		a, err := p.stream(ctx, params, func(n int) { progress(Progress{Asked: asked, Tokens: n}) })
		if err == nil || ctx.Err() != nil {
			return a, err
		}
		wait, why, ok := retryWait(err, try, now())
		if !ok || try >= MaxRetries || waited+wait > MaxRetryWait {
			return a, err
		}
		progress(Progress{Asked: asked, Wait: wait, Why: why})
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return a, err
		case <-timer.C:
		}
		waited += wait
	}
}

// retryWait says whether a failed request may be sent again after a wait:
// the provider answered 429 or 503. The wait is its Retry-After (seconds or
// a date), or doubles from defaultRetryWait when it names none.
func retryWait(err error, try int, now time.Time) (time.Duration, string, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return 0, "", false
	}
	why := ""
	switch apiErr.StatusCode {
	case http.StatusTooManyRequests:
		why = "rate limit"
	case http.StatusServiceUnavailable:
		why = "overloaded"
	default:
		return 0, "", false
	}
	wait := defaultRetryWait << try
	if apiErr.Response != nil {
		if d, ok := parseRetryAfter(apiErr.Response.Header.Get("Retry-After"), now); ok {
			wait = d
		}
	}
	return wait, why, true
}

// parseRetryAfter reads a Retry-After header: a number of seconds or an
// HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// WaitSentence says why the turn waits: "The provider asked to wait 20 s
// (rate limit)."
func WaitSentence(d time.Duration, why string) string {
	return "The provider asked to wait " + shortDuration(d) + " (" + why + ")."
}

// shortDuration writes a wait as the page shows it: "20 s", "1 min 20 s".
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + " s"
	}
	m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
	if s == 0 {
		return strconv.Itoa(m) + " min"
	}
	return strconv.Itoa(m) + " min " + strconv.Itoa(s) + " s"
}

// thinking is the reasoning some models write before their answer.
var thinking = regexp.MustCompile(`(?s)<think>.*?(</think>|$)`)

// withoutThinking takes a model's <think>…</think> reasoning out of what it
// says, so the person reads only its answer and a tool only its input.
func withoutThinking(s string) string {
	if !strings.Contains(s, "<think>") {
		return s
	}
	return strings.TrimSpace(thinking.ReplaceAllString(s, ""))
}

// contextTooSmall says the provider refused the request because the
// prompt is longer than the model's context window, and how many tokens
// that window holds when it said so.
func contextTooSmall(err error) (tokens int, ok bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return 0, false
	}
	raw := strings.ToLower(apiErr.RawJSON() + " " + apiErr.Message + " " + apiErr.Code)
	if !strings.Contains(raw, "context_length_exceeded") && !strings.Contains(raw, "maximum context length") &&
		!strings.Contains(raw, "exceed_context_size") && !strings.Contains(raw, "context size") {
		return 0, false
	}
	if m := contextNumber.FindStringSubmatch(raw); m != nil {
		tokens, _ = strconv.Atoi(m[1])
	}
	return tokens, true
}

var contextNumber = regexp.MustCompile(`(?:maximum context length is|n_ctx"?:?\s*|context size (?:of|is)\s*)\s*(\d+)`)

// ContextSentence is the sentence for a turn whose documents do not fit the
// model's context window of tokens (0: its size is unknown).
func ContextSentence(tokens int) string {
	if tokens <= 0 {
		return "The model's context window is too small for this turn's documents."
	}
	return "The model's context window (" + groupDigits(tokens) + " tokens) is too small for this turn's documents."
}

func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Sentence says what the model is doing, as the pages show it at now: ""
// when nothing is asked of it (a tool runs, or the turn has not begun).
func (p Progress) Sentence(now time.Time) string {
	switch {
	case p.Asked.IsZero():
		return ""
	case p.Wait > 0:
		return WaitSentence(p.Wait, p.Why)
	case p.Tokens == 0:
		return "Waiting for the model's first token (" + shortDuration(max(now.Sub(p.Asked), 0)) + ")."
	case p.Tokens == 1:
		return "The model is writing: 1 token so far in this step."
	}
	return "The model is writing: " + groupDigits(p.Tokens) + " tokens so far in this step."
}

// streamedKey marks the context of a request sent to be streamed.
type streamedKey struct{}

// plainAnswerAsStream is the providers' middleware that reads a plain JSON
// completion, answered to a request sent to be streamed (some servers, and
// proxies in front of them, do not stream), as the one chunk a stream of
// it would be: each choice's message its delta, each tool call with its
// index, the usage as it was.
func plainAnswerAsStream(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode != http.StatusOK || req.Context().Value(streamedKey{}) == nil {
		return res, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	chunk, ok := completionAsChunk(body)
	if !ok {
		// Not a completion: the stream reader says so as it always did.
		chunk = body
	}
	res.Body = io.NopCloser(strings.NewReader("data: " + string(chunk) + "\n\ndata: [DONE]\n\n"))
	res.Header.Set("Content-Type", "text/event-stream")
	res.ContentLength = -1
	res.Header.Del("Content-Length")
	return res, nil
}

// completionAsChunk writes a chat completion as the chunk that streams it.
func completionAsChunk(body []byte) ([]byte, bool) {
	var c map[string]any
	if json.Unmarshal(body, &c) != nil {
		return nil, false
	}
	choices, ok := c["choices"].([]any)
	if !ok || c["object"] == "chat.completion.chunk" {
		return nil, false
	}
	for _, ch := range choices {
		choice, ok := ch.(map[string]any)
		if !ok {
			return nil, false
		}
		msg, _ := choice["message"].(map[string]any)
		if msg == nil {
			msg = map[string]any{}
		}
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, tc := range calls {
				if m, ok := tc.(map[string]any); ok {
					m["index"] = i
				}
			}
		}
		delete(choice, "message")
		choice["delta"] = msg
	}
	c["object"] = "chat.completion.chunk"
	out, err := json.Marshal(c)
	return out, err == nil
}
