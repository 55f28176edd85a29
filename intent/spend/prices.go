// Package spend prices what the turns used. The person's prices live in
// <root>/launcher/prices.json (US dollars per million tokens, and
// optionally a daily budget); nothing ships with a price and nothing
// fetches one. Cost is worked out when the usage rows are read, so
// correcting a price corrects every earlier day too. It knows nothing of
// HTTP.
package spend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"autoapp/intent"
	"autoapp/intent/atomicfile"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// File is the prices file's name in the launcher's folder, beside
// intent-models.json.
const File = "prices.json"

// budgetKey is the one key of prices.json that is not a model.
const budgetKey = "budget"

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices is prices.json: model reference → price, and the caps under its
// "budget" key: the day's, in dollars and in tokens, and the default cap
// of each intent.
type Prices struct {
	Models map[string]Price
	// DayBudget is the cap of one day in dollars; nil when none is set.
	// It is shown against today's spend and enforced (see Guard).
	DayBudget *float64
	// DayTokens is the cap of one day in tokens; nil when none is set.
	DayTokens *int64
	// IntentCap is the cap of an intent the owner set none on.
	IntentCap intent.Cap
}

// Of is the price of a model as a usage row names it (provider:model, or a
// bare id): the file's entry for exactly that reference, else its entry
// for the model id after the first colon, so "z-ai/glm-5.3" prices
// "openrouter:z-ai/glm-5.3".
func (p Prices) Of(model string) (Price, bool) {
	if pr, ok := p.Models[model]; ok {
		return pr, true
	}
	if _, bare, found := strings.Cut(model, ":"); found {
		pr, ok := p.Models[bare]
		return pr, ok
	}
	return Price{}, false
}

// Cost is what in and out tokens cost at this price, in dollars.
func (pr Price) Cost(in, out int64) float64 {
	return (float64(in)*pr.Input + float64(out)*pr.Output) / 1e6
}

// Loaded is prices.json as read: the prices, and why it prices nothing
// when it could not be read.
type Loaded struct {
	Prices
	// Missing says there is no prices.json: nothing is priced.
	Missing bool
	// Problem says why the file could not be read, in a sentence; the
	// file then prices nothing.
	Problem string
}

// loaded is the prices file as read: its bytes, or the error reading
// them. A missing file, or one that cannot be read or holds something
// other than prices, prices nothing; Problem says why for the page.
func loaded(b []byte, err error) Loaded {
	if errors.Is(err, fs.ErrNotExist) {
		return Loaded{Missing: true}
	}
	if err != nil {
		return Loaded{Problem: File + " could not be read: " + reason(err) + ". Nothing is priced until it can be."}
	}
	p, err := parseFile(b)
	if err != nil {
		return Loaded{Problem: File + " could not be read: " + err.Error() + " Nothing is priced until it is corrected."}
	}
	return Loaded{Prices: p}
}

func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parseFile reads the file's JSON; its error is a sentence that names the
// entry at fault.
func parseFile(b []byte) (Prices, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(b, se.Offset)
			return Prices{}, fmt.Errorf("it is not valid JSON (line %d, column %d: %s).", line, col, se.Error())
		}
		return Prices{}, errors.New("it is not a JSON object of model → {\"input\", \"output\"}.")
	}
	p := Prices{Models: map[string]Price{}}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		if k == budgetKey {
			if err := parseBudget(v, &p); err != nil {
				return Prices{}, err
			}
			continue
		}
		if _, _, err := plan.ParseModelRef(k); err != nil {
			return Prices{}, fmt.Errorf("%q: %s", k, err.Error())
		}
		var pr struct {
			Input  *float64 `json:"input"`
			Output *float64 `json:"output"`
		}
		if err := strictDecode(v, &pr); err != nil || pr.Input == nil || pr.Output == nil {
			return Prices{}, fmt.Errorf(`%q must be {"input": dollars, "output": dollars} per million tokens.`, k)
		}
		if *pr.Input < 0 || *pr.Output < 0 {
			return Prices{}, fmt.Errorf("%q: a price cannot be below 0.", k)
		}
		p.Models[k] = Price{Input: *pr.Input, Output: *pr.Output}
	}
	return p, nil
}

// budgetJSON is the "budget" key of prices.json.
type budgetJSON struct {
	Day       *float64    `json:"day,omitempty"`
	DayTokens *int64      `json:"dayTokens,omitempty"`
	Intent    *intent.Cap `json:"intent,omitempty"`
}

// parseBudget reads the "budget" key into p: each cap above 0.
func parseBudget(v json.RawMessage, p *Prices) error {
	var bud budgetJSON
	if err := strictDecode(v, &bud); err != nil {
		return errors.New(`"budget" must be {"day": dollars, "dayTokens": tokens, "intent": {"dollars", "tokens", "minutes"}}.`)
	}
	if bud.Day != nil {
		if *bud.Day <= 0 || math.IsInf(*bud.Day, 0) {
			return errors.New(`"budget": "day" must be a number of dollars above 0.`)
		}
		d := *bud.Day
		p.DayBudget = &d
	}
	if bud.DayTokens != nil {
		if *bud.DayTokens <= 0 {
			return errors.New(`"budget": "dayTokens" must be a number of tokens above 0.`)
		}
		n := *bud.DayTokens
		p.DayTokens = &n
	}
	if c := bud.Intent; c != nil {
		if _, ps := intent.ParseCap(c.Form(), ""); len(ps) > 0 || (c.Dollars != nil && *c.Dollars <= 0) ||
			(c.Tokens != nil && *c.Tokens <= 0) || (c.Minutes != nil && *c.Minutes <= 0) {
			return errors.New(`"budget": "intent" must be {"dollars", "tokens", "minutes"}, each above 0.`)
		}
		p.IntentCap = *c
	}
	return nil
}

func strictDecode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func position(b []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset-1 && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// MarshalJSON writes the prices as prices.json holds them.
func (p Prices) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for k, v := range p.Models {
		out[k] = v
	}
	if bud := (budgetJSON{Day: p.DayBudget, DayTokens: p.DayTokens}); bud.Day != nil || bud.DayTokens != nil || !p.IntentCap.None() {
		if !p.IntentCap.None() {
			c := p.IntentCap
			bud.Intent = &c
		}
		out[budgetKey] = bud
	}
	return json.Marshal(out)
}

// Row is one line of the prices form as the person typed it.
type Row struct {
	Model, Input, Output string
}

// CapsForm is the caps of the prices form as typed: the day's in dollars
// (Day) and in tokens, and each intent's default.
type CapsForm struct {
	Day, DayTokens string
	Intent         intent.CapForm
}

// Parse checks the prices form: each row with a model needs an input and
// an output price of at least 0 dollars per million tokens; a row with no
// model and no prices is left out; each cap, when given, is above 0.
// Every problem is named.
func Parse(rows []Row, caps CapsForm) (Prices, refusal.Problems) {
	p := Prices{Models: map[string]Price{}}
	var problems refusal.Problems
	seen := map[string]int{}
	for i, r := range rows {
		n := i + 1
		model := strings.TrimSpace(r.Model)
		in, out := strings.TrimSpace(r.Input), strings.TrimSpace(r.Output)
		if model == "" {
			if in != "" || out != "" {
				problems = append(problems, refusal.Problem{Field: fmt.Sprintf("row %d", n), Message: "name the model these prices are for"})
			}
			continue
		}
		field := fmt.Sprintf("row %d (%s)", n, model)
		if model == budgetKey {
			problems = append(problems, refusal.Problem{Field: field, Message: `"budget" holds the caps, not a model`})
			continue
		}
		if _, _, err := plan.ParseModelRef(model); err != nil {
			problems = append(problems, refusal.Problem{Field: field, Message: strings.TrimSuffix(err.Error(), ".")})
			continue
		}
		if first, dup := seen[model]; dup {
			problems = append(problems, refusal.Problem{Field: field, Message: fmt.Sprintf("row %d prices it already", first)})
			continue
		}
		seen[model] = n
		inPrice, inProblem := dollars(in, "input", true)
		outPrice, outProblem := dollars(out, "output", true)
		for _, m := range []string{inProblem, outProblem} {
			if m != "" {
				problems = append(problems, refusal.Problem{Field: field, Message: m})
			}
		}
		if inProblem == "" && outProblem == "" {
			p.Models[model] = Price{Input: inPrice, Output: outPrice}
		}
	}
	if b := strings.TrimSpace(caps.Day); b != "" {
		v, m := dollars(b, "the day's cap", false)
		if m != "" {
			problems = append(problems, refusal.Problem{Field: "the day's US dollars", Message: m})
		} else {
			p.DayBudget = &v
		}
	}
	day, ps := intent.ParseCap(intent.CapForm{Tokens: caps.DayTokens}, "the day's ")
	problems = append(problems, ps...)
	p.DayTokens = day.Tokens
	p.IntentCap, ps = intent.ParseCap(caps.Intent, "each intent's ")
	problems = append(problems, ps...)
	if len(problems) > 0 {
		return Prices{}, problems
	}
	return p, nil
}

// dollars reads a price or the budget; zero is allowed for a price (a
// model that costs nothing), never for the budget.
func dollars(s, what string, zeroOK bool) (float64, string) {
	if s == "" {
		return 0, what + " is missing: write dollars per million tokens, such as 0.6"
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Sprintf("%s %q is not a number of dollars", what, s)
	case v < 0:
		return 0, fmt.Sprintf("%s cannot be below 0", what)
	case v == 0 && !zeroOK:
		return 0, what + " must be above 0, or left empty for none"
	case v > 1e6:
		return 0, fmt.Sprintf("%s %q is more than a million dollars", what, s)
	}
	return v, ""
}

// Save writes the prices to path whole (atomicfile.Write), so a reader
// sees the old prices or the new ones and never half of either.
func Save(path string, p Prices) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("spend: save prices: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("spend: save prices: %w", err)
	}
	return nil
}
