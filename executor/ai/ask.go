package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"autoapp/intent/refusal"
)

// Ask asks the model one structured question: a JSON object matching
// schema, within timeout (0: DefaultRequestTimeout). The answer is
// validated against the schema here whatever the provider promised; only a
// valid answer is decoded into out, which must be a non-nil pointer. An
// answer that does not arrive, does not parse or does not match returns a
// *ProviderError and leaves out as it was. Usage is what the question used,
// as far as the provider reported it.
func Ask(ctx context.Context, now func() time.Time, ep Endpoint, instructions, message string, schema json.RawMessage, timeout time.Duration, out any) (Usage, error) {
	if now == nil {
		return Usage{}, errors.New("ai: Ask needs a clock")
	}
	target := reflect.ValueOf(out)
	if target.Kind() != reflect.Pointer || target.IsNil() {
		return Usage{}, errors.New("ai: Ask needs a non-nil pointer to decode into")
	}
	compiled, err := compileSchema(schema)
	if err != nil {
		return Usage{}, fmt.Errorf("ai: the question's schema: %w", err)
	}
	var format map[string]any
	if err := json.Unmarshal(schema, &format); err != nil {
		return Usage{}, fmt.Errorf("ai: the question's schema: %w", err)
	}
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	p, err := newProvider(ep, "", timeout)
	if err != nil {
		return Usage{}, err
	}
	defer p.close()

	system := strings.TrimSpace(instructions + "\n\nAnswer with one JSON object and nothing else. It must match this JSON Schema:\n" + string(schema))
	params := openai.ChatCompletionNewParams{
		Model:    ep.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(message)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: format},
			},
		},
	}
	reqCtx, cancel := context.WithTimeoutCause(ctx, p.timeout, errRequestTimeout)
	defer cancel()
	a, err := p.send(reqCtx, params, now, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Usage{Partial: true}, ctx.Err()
		}
		return Usage{Partial: true}, p.reduce(reqCtx, err, nil)
	}
	usage := Usage{Input: a.Usage.Input, Output: a.Usage.Output, Partial: !a.Counted}

	content := stripFence(withoutThinking(a.Content))
	if ps := compiled.validate([]byte(content)); len(ps) > 0 {
		return usage, &ProviderError{Kind: ProviderUnusable, Sentence: UnusableSentence,
			detail: p.redact(fmt.Sprintf("%s (answer: %.500q)", refusal.Problems(ps).Error(), content))}
	}
	fresh := reflect.New(target.Elem().Type())
	if err := json.Unmarshal([]byte(content), fresh.Interface()); err != nil {
		return usage, &ProviderError{Kind: ProviderUnusable, Sentence: UnusableSentence, detail: p.redact(err.Error())}
	}
	target.Elem().Set(fresh.Elem())
	return usage, nil
}

// stripFence takes away a markdown code fence some models put around JSON
// even when asked not to.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimPrefix(s, "json")
	s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	return strings.TrimSpace(s)
}

// Models lists the ids of the models the endpoint's provider offers
// (GET /v1/models), sorted, within timeout (0: DefaultRequestTimeout).
// Endpoint.Model is not used.
func Models(ctx context.Context, ep Endpoint, timeout time.Duration) ([]string, error) {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	p, err := newProvider(ep, "", timeout)
	if err != nil {
		return nil, err
	}
	defer p.close()
	reqCtx, cancel := context.WithTimeoutCause(ctx, p.timeout, errRequestTimeout)
	defer cancel()
	page, err := p.models.List(reqCtx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		pe := p.reduce(reqCtx, err, nil)
		if pe.Kind == ProviderModel {
			// 404 here is the list itself, not a model.
			pe.Kind, pe.Sentence = ProviderRefused, RefusedSentence(pe.Status)
		}
		return nil, pe
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids, nil
}
