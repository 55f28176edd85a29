package ai_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
)

// fixtureServer answers each chat completion with the next of its bodies,
// written as a real server writes it: the content type given, each line
// flushed on its own.
type fixtureServer struct {
	mu          sync.Mutex
	contentType string
	bodies      []string
	asked       int
}

func (f *fixtureServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	body := "data: [DONE]\n\n"
	if f.asked < len(f.bodies) {
		body = f.bodies[f.asked]
	}
	f.asked++
	f.mu.Unlock()
	w.Header().Set("Content-Type", f.contentType)
	w.WriteHeader(http.StatusOK)
	for _, line := range strings.SplitAfter(body, "\n") {
		fmt.Fprint(w, line)
		w.(http.Flusher).Flush()
	}
}

// fixtureTurn runs a turn with the read tool against bodies, the second
// answering "Done." when only one is given.
func fixtureTurn(t *testing.T, contentType string, bodies ...string) ai.Result {
	t.Helper()
	if len(bodies) == 1 {
		bodies = append(bodies, sse(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]}`,
			`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	}
	f := &fixtureServer{contentType: contentType, bodies: bodies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	tr := ai.Turn{
		Endpoint: ai.Endpoint{Provider: "local", BaseURL: srv.URL, Model: "qwen2.5-coder:7b"}, Kind: ai.KindBuilder, RunID: "run-1",
		Instructions: "You build the task.", Message: "Read main.go.", Tools: []ai.Tool{readTool(nil)}, Now: time.Now,
		Log: slog.New(slog.DiscardHandler),
	}
	return ai.Run(context.Background(), tr)
}

// sse writes chunks as server-sent events, ending with [DONE].
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// wantRead checks the turn made the one read of main.go and answered.
func wantRead(t *testing.T, res ai.Result) {
	t.Helper()
	if res.Ended != ai.EndAnswered || res.Text != "Done." {
		t.Fatalf("ended %s (%s) with %q", res.Ended, res.Sentence, res.Text)
	}
	if len(res.Calls) != 1 || res.Calls[0].Name != "source.read" || !res.Calls[0].OK {
		t.Fatalf("calls %+v, want one read", res.Calls)
	}
	if in := strings.ReplaceAll(string(res.Calls[0].Input), " ", ""); in != `{"path":"main.go"}` {
		t.Fatalf("the read's input %s", res.Calls[0].Input)
	}
}

// Ollama's /v1 sends each tool call whole in one chunk, finishes with
// "tool_calls", and sends the usage alone in a last chunk whose choices
// are empty.
func TestOllamasStream(t *testing.T) {
	res := fixtureTurn(t, "text/event-stream", sse(
		`{"id":"chatcmpl-212","object":"chat.completion.chunk","created":1730000000,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x8k2m1","index":0,"type":"function","function":{"name":"source_read","arguments":"{\"path\":\"main.go\"}"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-212","object":"chat.completion.chunk","created":1730000000,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}`,
		`{"id":"chatcmpl-212","object":"chat.completion.chunk","created":1730000000,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":812,"completion_tokens":24,"total_tokens":836}}`))
	wantRead(t, res)
	if res.Usage.Input < 812 || res.Usage.Output < 24 {
		t.Errorf("usage %+v, want Ollama's last chunk counted", res.Usage)
	}
}

// llama.cpp's server names the call and its id in the first delta, then
// streams the arguments a few characters at a time under the index alone,
// and puts the usage (with its timings) in the chunk that finishes.
func TestLlamaCppServersStream(t *testing.T) {
	res := fixtureTurn(t, "text/event-stream", sse(
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","system_fingerprint":"b4600-a4417ddd","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"Yk3GfNdp","type":"function","function":{"name":"source_read","arguments":""}}]}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"main"}}]}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":".go\"}"}}]}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"created":1730000001,"id":"chatcmpl-Qx1","model":"gpt-3.5-turbo","object":"chat.completion.chunk","usage":{"completion_tokens":19,"prompt_tokens":640,"total_tokens":659},"timings":{"prompt_n":640,"predicted_n":19}}`))
	wantRead(t, res)
	if res.Usage.Input < 640 {
		t.Errorf("usage %+v, want the finishing chunk's usage counted", res.Usage)
	}
}

// vLLM streams its reasoning parser's reasoning_content first, then the
// call: a first delta with id and name, the arguments under the index
// alone, the finish, and the usage in a chunk of its own with no choices.
func TestVLLMsStream(t *testing.T) {
	res := fixtureTurn(t, "text/event-stream", sse(
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning_content":"The user wants main.go read."},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-4c1e","type":"function","index":0,"function":{"name":"source_read"}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": "}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"main.go\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`,
		`{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1730000002,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":700,"total_tokens":760,"completion_tokens":60}}`))
	wantRead(t, res)
	if strings.Contains(res.Words, "The user wants") {
		t.Errorf("the reasoning became the answer's words: %q", res.Words)
	}
}

// LM Studio repeats the call's id on every chunk, and a server may send
// no usage at all: the turn's usage is then a floor.
func TestLMStudiosStreamWithoutUsage(t *testing.T) {
	res := fixtureTurn(t, "text/event-stream", sse(
		`{"id":"chatcmpl-lms1","object":"chat.completion.chunk","created":1730000003,"model":"qwen2.5-7b-instruct","system_fingerprint":"qwen2.5-7b-instruct","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"365174485","type":"function","function":{"name":"source_read","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-lms1","object":"chat.completion.chunk","created":1730000003,"model":"qwen2.5-7b-instruct","system_fingerprint":"qwen2.5-7b-instruct","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"365174485","type":"function","function":{"arguments":"{\"path\":\"main.go\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-lms1","object":"chat.completion.chunk","created":1730000003,"model":"qwen2.5-7b-instruct","system_fingerprint":"qwen2.5-7b-instruct","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`))
	wantRead(t, res)
	if !res.Usage.Partial {
		t.Errorf("usage %+v: a stream that reports none is a floor", res.Usage)
	}
}

// A server that answers "stream": true with one plain JSON completion is
// read as that one answer.
func TestAPlainJSONAnswerToAStreamedRequestIsReadAsOneAnswer(t *testing.T) {
	res := fixtureTurn(t, "application/json",
		`{"id":"chatcmpl-1","object":"chat.completion","created":1730000004,"model":"qwen2.5-coder:7b","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"source_read","arguments":"{\"path\":\"main.go\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":500,"completion_tokens":20,"total_tokens":520}}`,
		`{"id":"chatcmpl-2","object":"chat.completion","created":1730000005,"model":"qwen2.5-coder:7b","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":540,"completion_tokens":2,"total_tokens":542}}`)
	wantRead(t, res)
	if res.Usage.Input != 1040 || res.Usage.Partial {
		t.Errorf("usage %+v, want both answers' usage, whole", res.Usage)
	}
}

// Tool arguments sent as a JSON object rather than a string (as some
// Ollama and LocalAI builds do) are taken as the arguments.
func TestToolArgumentsSentAsAnObjectAreAccepted(t *testing.T) {
	res := fixtureTurn(t, "text/event-stream", sse(
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1730000006,"model":"llama3.1:8b","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"call_o1","index":0,"type":"function","function":{"name":"source_read","arguments":{"path":"main.go"}}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1730000006,"model":"llama3.1:8b","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`))
	wantRead(t, res)
}
