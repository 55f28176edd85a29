package spend

import (
	"fmt"
	"math"
	"strconv"
)

// Total is what some turns used and cost, priced when it was read.
type Total struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	// Cost is in dollars, of the priced part; nil when nothing in the
	// total is priced (no cost, which is not a cost of 0).
	Cost *float64 `json:"cost"`
	// AtLeast says the total includes a partial row or a turn still
	// running: the cost and tokens are a floor.
	AtLeast bool `json:"atLeast"`
	// UnpricedTokens are the tokens of models prices.json does not name,
	// left out of Cost.
	UnpricedTokens int64 `json:"unpricedTokens"`
	// Turns counts the usage rows (and the running turn) in the total.
	Turns int `json:"turns"`
}

// Tokens are the input and output tokens together.
func (t Total) Tokens() int64 { return t.Input + t.Output }

// add counts tokens of one model, priced at p.
func (t *Total) add(model string, in, out int64, partial bool, turns int, p Prices) {
	t.Input += in
	t.Output += out
	t.Turns += turns
	if partial {
		t.AtLeast = true
	}
	pr, ok := p.Of(model)
	if !ok {
		t.UnpricedTokens += in + out
		return
	}
	c := pr.Cost(in, out)
	if t.Cost != nil {
		c += *t.Cost
	}
	t.Cost = &c
}

// Plus is both totals together.
func (t Total) Plus(o Total) Total {
	out := Total{Input: t.Input + o.Input, Output: t.Output + o.Output, AtLeast: t.AtLeast || o.AtLeast,
		UnpricedTokens: t.UnpricedTokens + o.UnpricedTokens, Turns: t.Turns + o.Turns}
	switch {
	case t.Cost != nil && o.Cost != nil:
		c := *t.Cost + *o.Cost
		out.Cost = &c
	case t.Cost != nil:
		c := *t.Cost
		out.Cost = &c
	case o.Cost != nil:
		c := *o.Cost
		out.Cost = &c
	}
	return out
}

// CostText is the cost as the pages say it: "—" when nothing is priced
// (never $0.00), "at least $0.42" for a floor, else "$0.42".
func (t Total) CostText() string {
	if t.Cost == nil {
		return "—"
	}
	s := Dollars(*t.Cost)
	if t.AtLeast {
		return "at least " + s
	}
	return s
}

// TokensText says the tokens: "1,200 in, 300 out", a floor said so.
func (t Total) TokensText() string {
	s := Count(t.Input) + " in, " + Count(t.Output) + " out"
	if t.AtLeast {
		return "at least " + s
	}
	return s
}

// UnpricedText says what the cost left out, or "".
func (t Total) UnpricedText() string {
	switch {
	case t.UnpricedTokens == 0:
		return ""
	case t.Cost == nil:
		return "no model here has a price in " + File
	}
	return Count(t.UnpricedTokens) + " tokens of unpriced models not counted"
}

// Dollars writes an amount of US dollars: cents from a cent up, four
// decimals below (a few hundred tokens of a cheap model).
func Dollars(v float64) string {
	switch {
	case v == 0:
		return "$0.00"
	case v < 0.01:
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	cents := int64(math.Round(v * 100))
	return fmt.Sprintf("$%s.%02d", Count(cents/100), cents%100)
}

// Count writes a whole number with thousands separated by commas.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := false
	if n < 0 {
		neg, s = true, s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
