package views

import (
	"math"
	"strconv"
)

// SpendView is a total of turns as the pages say it.
type SpendView struct {
	// Cost is "—" when nothing is priced, "at least $0.42" for a floor,
	// else "$0.42".
	Cost string
	// Tokens is "1,200 in, 300 out".
	Tokens string
	// Unpriced says what the cost left out, or "".
	Unpriced string
	Turns    int
}

// NeedView is one thing waiting for the person.
type NeedView struct {
	// Kind is question, answer, failed, feedback, approval,
	// draft-questions or release.
	Kind, AppID, Text, Advice string
	// Href and Action lead to where it is answered; a question at the gate
	// and a draft's questions are answered on the Request page of its
	// application instead.
	Href   string
	Action string
}

// NeedMoreView counts the needs of a kind beyond the list: "and 12 more
// failed tasks."
type NeedMoreView struct {
	Kind, Text string
}

// InHandView is the task a run is building, with its limits.
type InHandView struct {
	IntentID                            int64
	AppID, Slug, RunID, Stage, LastTool string
	Refusal                             string
	HostBuild                           bool
	Elapsed, Limit                      string
	// Idle is the idle limit in force; Model what the model is doing now.
	Idle, Model                          string
	Turn, MaxTurns, Attempts, MaxCounted int
	Passed, Total                        int
	Task, Run                            SpendView
}

// AppOutlookView is one application in the overview.
type AppOutlookView struct {
	ID, Name, State string
	Running         bool
	Left            int
	// Estimate is the extrapolation, or says why there is none yet.
	Estimate string
}

// OverviewView is the overview: what needs the person, the task in hand,
// today's spend and each application.
type OverviewView struct {
	Needs []NeedView
	// More says, per kind, how many needs the list leaves out.
	More []NeedMoreView
	// InHand are the tasks the runs going build now, one a run.
	InHand []InHandView
	Today  SpendView
	// Budget is the daily budget ("$10.00 a day"), or "".
	Budget     string
	OverBudget bool
	// PricesNote says why nothing is priced, or "".
	PricesNote string
	Apps       []AppOutlookView
	// Polling is set while a run goes: the panel then asks again every
	// two seconds, and stops by itself when it is rendered without it.
	Polling bool
}

// SpendLine is the spend of one model or one kind of turn.
type SpendLine struct {
	Name  string
	Spend SpendView
}

// SpendReport is the spend of the last days.
type SpendReport struct {
	Days    int
	Period  SpendView
	Today   SpendView
	Chart   ChartView
	ByModel []SpendLine
	ByKind  []SpendLine
}

// OverviewPageView is the Overview page: the panel and the spend.
type OverviewPageView struct {
	Overview OverviewView
	Spend    SpendReport
}

// ChartBar is one day's bar; its box is in the chart's own units.
type ChartBar struct {
	X, Y, W, H float64
	// Title is the day and its amount, shown on hover and read aloud.
	Title string
	Today bool
}

// ChartView is a small server-rendered bar chart.
type ChartView struct {
	Width, Height float64
	Bars          []ChartBar
	// Label describes the whole chart for a screen reader.
	Label string
	// Measure says what the bars are: "cost" or "tokens".
	Measure string
	// Top is the tallest bar's amount, as the axis says it.
	Top string
	// First and Last name the first and last day.
	First, Last string
}

// The chart's size in its own units; CSS scales it.
const (
	chartWidth  = 300.0
	chartHeight = 80.0
	chartGap    = 2.0
)

// NewChart lays out one bar per value, oldest first, the last one today;
// titles say each bar's day and amount. A bar of a day with anything at all
// is at least one unit tall, so it shows.
func NewChart(values []float64, titles []string, measure, label, top, first, last string) ChartView {
	c := ChartView{Width: chartWidth, Height: chartHeight, Label: label, Measure: measure, Top: top, First: first, Last: last}
	n := len(values)
	if n == 0 {
		return c
	}
	peak := 0.0
	for _, v := range values {
		peak = math.Max(peak, v)
	}
	w := chartWidth / float64(n)
	for i, v := range values {
		h := 0.0
		if peak > 0 && v > 0 {
			h = math.Max(1, math.Round(v/peak*(chartHeight-2)*10)/10)
		}
		c.Bars = append(c.Bars, ChartBar{X: math.Round(float64(i)*w*10) / 10, Y: chartHeight - h, W: math.Round((w-chartGap)*10) / 10, H: h,
			Title: titles[i], Today: i == n-1})
	}
	return c
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func barClass(b ChartBar) string {
	if b.Today {
		return "bar today"
	}
	return "bar"
}

// turnsText says how many turns: "1 turn", "3 turns".
func turnsText(n int) string { return Count(n, "turn", "turns") }

// needsYouText is what the rail's mark says to a screen reader.
func needsYouText(n int) string {
	if n == 1 {
		return "1 thing needs you"
	}
	return strconv.Itoa(n) + " things need you"
}
