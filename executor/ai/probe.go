package ai

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"autoapp/intent/refusal"
)

// ProbeTimeout bounds Settings' tool test: a local model may take a while
// to load.
const ProbeTimeout = 2 * time.Minute

// probeSchema is the one small tool the test offers.
var probeSchema = json.RawMessage(`{
	"type": "object",
	"properties": {"word": {"type": "string", "enum": ["ready"], "description": "the word to echo"}},
	"required": ["word"],
	"additionalProperties": false
}`)

// ProbeTools asks the model for one small tool call, as every turn of the
// engineer needs, and says in a sentence whether it made one with valid
// arguments, and how long it took: "qwen3:8b calls tools: yes (1.8 s)."
// A call written as text is read as a turn reads it, and said so: "calls
// tools (written as text; the launcher reads them): yes (2.4 s)."
// ok is false when it did not, or the provider failed.
func ProbeTools(ctx context.Context, ep Endpoint, now func() time.Time) (ok bool, sentence string) {
	p, err := newProvider(ep, "", ProbeTimeout)
	if err != nil {
		return false, ep.Model + ": " + ErrorSentence(err)
	}
	defer p.close()
	compiled, err := compileSchema(probeSchema)
	if err != nil {
		return false, "The tool test could not be prepared: " + err.Error()
	}
	var parameters map[string]any
	_ = json.Unmarshal(probeSchema, &parameters)
	params := openai.ChatCompletionNewParams{
		Model: ep.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are being tested: call the tool you are given, once, and write nothing else."),
			openai.UserMessage(`Call the tool echo with the word "ready".`),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "echo", Description: openai.String("Echo one word back."), Parameters: shared.FunctionParameters(parameters),
		})},
	}
	reqCtx, cancel := context.WithTimeoutCause(ctx, ProbeTimeout, errRequestTimeout)
	defer cancel()
	start := now()
	a, err := p.send(reqCtx, params, now, nil)
	took := now().Sub(start)
	if err != nil {
		return false, ep.Model + ": " + p.reduce(reqCtx, err, nil).Sentence
	}
	calls, written := a.Calls, ""
	if len(calls) == 0 && !ep.NoTextCalls {
		calls, _, _ = recoverCalls(withoutThinking(a.Content), func(name string) (string, bool) { return name, name == "echo" })
		if len(calls) > 0 {
			written = " (written as text; the launcher reads them)"
		}
	}
	for _, c := range calls {
		if c.Name != "echo" {
			continue
		}
		if ps := compiled.validate([]byte(withoutThinking(c.Args))); len(ps) > 0 {
			return false, fmt.Sprintf("%s called the tool, but its arguments do not match the tool's schema (%s): choose a model with better tool support.",
				ep.Model, refusal.Problems(ps).Error())
		}
		return true, fmt.Sprintf("%s calls tools%s: yes (%.1f s).", ep.Model, written, took.Seconds())
	}
	return false, ep.Model + " answered in text instead of calling the tool: choose a model with tool support, or start llama.cpp's server with --jinja."
}
