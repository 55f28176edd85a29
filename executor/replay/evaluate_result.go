package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/knowledge"
)

// Evaluation is an evaluation's runs and the table they make: one cell
// per task and condition. Nothing in it is applied.
type Evaluation struct {
	StartedAt time.Time `json:"startedAt"`
	// Stamp names the evaluation, and Dir, <root>/evaluate/<stamp>, is
	// where its runs are kept.
	Stamp   string     `json:"stamp"`
	Dir     string     `json:"dir"`
	Version string     `json:"version"`
	Model   ModelEntry `json:"model"`
	// RunsEach is how many runs each task makes under each condition.
	RunsEach    int `json:"runsEach"`
	StepCap     int `json:"stepCap"`
	TurnMinutes int `json:"turnMinutes"`
	// Instructions is the hash of the instructions every turn is given.
	Instructions string `json:"instructions"`
	// Lessons are the lessons the learned condition is given: every
	// provisional and confirmed lesson of the launcher's store as the
	// evaluation started.
	Lessons    []int64         `json:"lessons"`
	Tasks      []EvalTaskEntry `json:"tasks"`
	Conditions []string        `json:"conditions"`
	// Cells are the table: every task of one turn under every condition,
	// in order.
	Cells []Cell `json:"cells"`
	// TwoTurnCells are the two-turn table: every task of two turns under
	// every condition and history mode, in order.
	TwoTurnCells []TwoTurnCell `json:"twoTurnCells"`
	// Runs are the finished runs, in the order they ran.
	Runs []EvalRun `json:"runs"`
	// Failures are the failures the runs met, by signature, in the order
	// first met.
	Failures []Failure `json:"failures"`
	// Stopped says the evaluation ended before every run finished.
	Stopped bool `json:"stopped,omitempty"`
}

// EvalTaskEntry is one task as the evaluation ran it.
type EvalTaskEntry struct {
	Key      string `json:"key"`
	Template string `json:"template"`
	Request  string `json:"request"`
	Slug     string `json:"slug"`
	// TwoTurns says the task is two turns; Touch is the file committed
	// between them, "" for none.
	TwoTurns bool   `json:"twoTurns,omitempty"`
	Touch    string `json:"touch,omitempty"`
	// Example is the evaluation's own copy of the task's example, by its
	// content hash, as every run is judged with it.
	Example ExampleEntry `json:"example"`
}

// EvalRun is one finished run and what it is judged and measured by.
type EvalRun struct {
	Task      string `json:"task"`
	Condition string `json:"condition"`
	// Mode is a two-turn task's history mode, "" for a task of one turn;
	// Second is its second turn measured against its first.
	Mode   string   `json:"mode,omitempty"`
	Second *TurnTwo `json:"second,omitempty"`
	N      int      `json:"n"`
	RunID  string   `json:"runId"`
	Dir    string   `json:"dir"`
	// Ended is how the turn ended (ai.Ending); Calls how many tool calls
	// it made.
	Ended string `json:"ended"`
	Calls int    `json:"calls"`
	// WorkingCode: the evaluation built and previewed what the turn left,
	// and the task's example, the evaluation's copy, passed; Judgement
	// says why or why not.
	WorkingCode bool   `json:"workingCode"`
	Judgement   string `json:"judgement"`
	// Workflow: the engineer itself checked the release it last built,
	// with the example intact, and every example passed.
	Workflow bool `json:"workflowCompleted"`
	// FirstEdit is the number of calls up to and with the first edit that
	// landed (a source.edit or source.change that succeeded, or a cycle
	// whose change applied); Tried up to the first attempted one, refused
	// or not. 0 for none.
	FirstEdit int `json:"firstEdit"`
	Tried     int `json:"tried"`
	// FirstBuild is the number of calls up to and with the first that
	// built (a candidate.build, or a cycle that reached its build); 0 for
	// none.
	FirstBuild int `json:"firstBuild"`
	// ReachedBuild says a build ran in the turn; FailedBuilds counts the
	// turn's builds that failed.
	ReachedBuild bool `json:"reachedBuild"`
	FailedBuilds int  `json:"failedBuilds"`
	// HostBuilt says the host built what the turn left unbuilt.
	HostBuilt bool `json:"hostBuilt,omitempty"`
	// ModelMS is the time the turn waited on the model, ToolMS the time
	// its tools took, in milliseconds.
	ModelMS int64 `json:"modelMs"`
	ToolMS  int64 `json:"toolMs"`
	// The tokens the turn's steps reported; TokensReported says every
	// step reported and the turn finished, so they are its whole use.
	InputTokens    int  `json:"inputTokens"`
	OutputTokens   int  `json:"outputTokens"`
	TokensReported bool `json:"tokensReported"`
	// Approvals counts the calls that would have waited on the person:
	// each intent.ask, answered in an evaluation with the standing answer.
	Approvals int `json:"approvals"`
	// Named are the workspace's files the turn's delivered documents
	// named; NamedUsed those of them it read or edited (the rest it
	// ignored); ReadUnnamed the files it read that no document named.
	Named       []string `json:"named"`
	NamedUsed   []string `json:"namedUsed"`
	ReadUnnamed []string `json:"readUnnamed"`
	// HintsCredited counts the hints served beside its failed builds that
	// were credited with resolving them; UnrelatedCredit those of them
	// whose lesson named no stage, or one no failure of the run was at.
	HintsCredited   int `json:"hintsCredited"`
	UnrelatedCredit int `json:"unrelatedCredit"`
	// Failures are the signatures of the failures the run met, the
	// evaluation's own judging included; Recurring those an earlier run
	// of the evaluation had met.
	Failures   []string  `json:"failures"`
	Recurring  []string  `json:"recurring"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
}

// Tokens is what the run is known to have used.
func (r EvalRun) Tokens() int { return r.InputTokens + r.OutputTokens }

// Cell is one task under one condition: its finished runs' figures.
type Cell struct {
	Task      string `json:"task"`
	Condition string `json:"condition"`
	Runs      int    `json:"runs"`
	// WorkingCode and Workflow count the runs that scored.
	WorkingCode int `json:"workingCode"`
	Workflow    int `json:"workflowCompleted"`
	// FirstEdit and Tried are means over the FirstEditRuns and TriedRuns
	// that made one; nil for none.
	FirstEdit     *float64 `json:"firstEdit"`
	FirstEditRuns int      `json:"firstEditRuns"`
	// FirstBuild is the mean over the FirstBuildRuns that built.
	FirstBuild     *float64 `json:"firstBuild"`
	FirstBuildRuns int      `json:"firstBuildRuns"`
	Tried          *float64 `json:"tried"`
	TriedRuns      int      `json:"triedRuns"`
	ReachedBuild   int      `json:"reachedBuild"`
	// FailedBuilds is every run's failed builds together.
	FailedBuilds int `json:"failedBuilds"`
	// ModelMS and ToolMS are means over the runs.
	ModelMS int64 `json:"modelMs"`
	ToolMS  int64 `json:"toolMs"`
	// MeanTokens is the mean over the Reported runs, whose turn reported
	// every step; nil when none did. KnownTokens is the mean of what every
	// run is known to have used: a floor.
	MeanTokens  *int `json:"meanTokens"`
	Reported    int  `json:"reported"`
	KnownTokens int  `json:"knownTokens"`
	// Recurring are the signatures its runs met that an earlier run of
	// the evaluation had met.
	Recurring []string `json:"recurring"`
	// Approvals and the hint credit are every run's together; the named
	// files' counts are means over the runs.
	Approvals       int     `json:"approvals"`
	NamedUsed       float64 `json:"namedUsed"`
	NamedIgnored    float64 `json:"namedIgnored"`
	ReadUnnamed     float64 `json:"readUnnamed"`
	HintsCredited   int     `json:"hintsCredited"`
	UnrelatedCredit int     `json:"unrelatedCredit"`
}

// Failure is one failure the evaluation's runs met: a case their stores
// opened, by signature.
type Failure struct {
	Signature string `json:"signature"`
	Kind      string `json:"kind"`
	Stage     string `json:"stage,omitempty"`
	Example   string `json:"example,omitempty"`
	// Message is the problem as first met.
	Message string `json:"message"`
	// Runs are the runs that met it, in order.
	Runs []string `json:"runs"`
}

// Recurred says more than one run met it.
func (f Failure) Recurred() bool { return len(f.Runs) > 1 }

// Label names the failure in a line: its stage (or the example) and the
// start of its signature.
func (f Failure) Label() string {
	if f.Kind == knowledge.CaseCheck {
		return "check " + f.Example
	}
	stage := f.Stage
	if stage == "" {
		stage = "build"
	}
	return stage + " " + short8(f.Signature)
}

func short8(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// meet records that runID met case c's failure.
func (ev *Evaluation) meet(c knowledge.Case, runID string) {
	for i := range ev.Failures {
		if ev.Failures[i].Signature == c.Signature {
			if !slices.Contains(ev.Failures[i].Runs, runID) {
				ev.Failures[i].Runs = append(ev.Failures[i].Runs, runID)
			}
			return
		}
	}
	ev.Failures = append(ev.Failures, Failure{Signature: c.Signature, Kind: c.Kind, Stage: c.Stage, Example: c.ExampleID,
		Message: c.Message, Runs: []string{runID}})
}

// tally works out each run's recurring failures and every cell.
func (ev Evaluation) tally() Evaluation {
	if ev.Failures == nil {
		ev.Failures = []Failure{}
	}
	first := map[string]string{}
	for _, f := range ev.Failures {
		if len(f.Runs) > 0 {
			first[f.Signature] = f.Runs[0]
		}
	}
	for i := range ev.Runs {
		r := &ev.Runs[i]
		r.Recurring = []string{}
		for _, sig := range r.Failures {
			if at, ok := first[sig]; ok && at != r.RunID {
				r.Recurring = append(r.Recurring, sig)
			}
		}
	}
	ev.Cells, ev.TwoTurnCells = nil, []TwoTurnCell{}
	for _, t := range ev.Tasks {
		for _, c := range ev.Conditions {
			if !t.TwoTurns {
				ev.Cells = append(ev.Cells, cellOf(t.Key, c, ev.Runs))
				continue
			}
			for _, mode := range modesOf(true, c) {
				ev.TwoTurnCells = append(ev.TwoTurnCells, twoTurnCellOf(t.Key, c, mode, t.Touch, ev.Runs))
			}
		}
	}
	return ev
}

// TwoTurnCell is one task of two turns under one condition and history
// mode: its finished runs' figures, the second turn's measured against
// the first's.
type TwoTurnCell struct {
	Task      string `json:"task"`
	Condition string `json:"condition"`
	Mode      string `json:"mode"`
	Runs      int    `json:"runs"`
	// WorkingCode and Workflow count the runs that scored, judged on what
	// the second turn left.
	WorkingCode int `json:"workingCode"`
	Workflow    int `json:"workflowCompleted"`
	// The means over the runs of the second turn's reads before its first
	// edit, its repeated reads and repeated actions, and of turn one's
	// calls.
	ReadsBeforeEdit float64 `json:"readsBeforeEdit"`
	RepeatedReads   float64 `json:"repeatedReads"`
	RepeatedActions float64 `json:"repeatedActions"`
	TurnOneCalls    float64 `json:"turnOneCalls"`
	// MeanTokens is the second turn's mean over the Reported runs whose
	// second turn reported every step, nil for none; KnownTokens the mean
	// of what every second turn is known to have used.
	MeanTokens  *int `json:"meanTokens"`
	Reported    int  `json:"reported"`
	KnownTokens int  `json:"knownTokens"`
	// Touched is the file committed between the turns, "" for none, and
	// ReadTouchedFirst counts the runs whose second turn read it before
	// editing it.
	Touched          string `json:"touched,omitempty"`
	ReadTouchedFirst int    `json:"readTouchedFirst"`
}

// twoTurnCellOf is task under condition and mode's figures over its runs
// among runs.
func twoTurnCellOf(task, condition, mode, touched string, runs []EvalRun) TwoTurnCell {
	cell := TwoTurnCell{Task: task, Condition: condition, Mode: mode, Touched: touched}
	var reads, rereads, repeats, first, known, reported int
	for _, r := range runs {
		if r.Task != task || r.Condition != condition || r.Mode != mode || r.Second == nil {
			continue
		}
		s := r.Second
		cell.Runs++
		if r.WorkingCode {
			cell.WorkingCode++
		}
		if r.Workflow {
			cell.Workflow++
		}
		if s.ReadTouchedFirst {
			cell.ReadTouchedFirst++
		}
		reads += s.ReadsBeforeEdit
		rereads += s.RepeatedReads
		repeats += s.RepeatedActions
		first += s.FirstCalls
		known += s.Tokens()
		if s.TokensReported {
			cell.Reported++
			reported += s.Tokens()
		}
	}
	if cell.Runs == 0 {
		return cell
	}
	n := float64(cell.Runs)
	cell.ReadsBeforeEdit, cell.RepeatedReads, cell.RepeatedActions, cell.TurnOneCalls = float64(reads)/n, float64(rereads)/n, float64(repeats)/n, float64(first)/n
	cell.KnownTokens = (known + cell.Runs/2) / cell.Runs
	if cell.Reported > 0 {
		m := (reported + cell.Reported/2) / cell.Reported
		cell.MeanTokens = &m
	}
	return cell
}

// cellOf is task under condition's figures over its runs among runs.
func cellOf(task, condition string, runs []EvalRun) Cell {
	cell := Cell{Task: task, Condition: condition, Recurring: []string{}}
	var firstEdit, firstBuild, tried, model, tool, reported, known int64
	var used, ignored, unnamed int
	for _, r := range runs {
		if r.Task != task || r.Condition != condition {
			continue
		}
		cell.Runs++
		cell.Approvals += r.Approvals
		cell.HintsCredited += r.HintsCredited
		cell.UnrelatedCredit += r.UnrelatedCredit
		used += len(r.NamedUsed)
		ignored += len(r.Named) - len(r.NamedUsed)
		unnamed += len(r.ReadUnnamed)
		if r.WorkingCode {
			cell.WorkingCode++
		}
		if r.Workflow {
			cell.Workflow++
		}
		if r.FirstEdit > 0 {
			cell.FirstEditRuns++
			firstEdit += int64(r.FirstEdit)
		}
		if r.Tried > 0 {
			cell.TriedRuns++
			tried += int64(r.Tried)
		}
		if r.FirstBuild > 0 {
			cell.FirstBuildRuns++
			firstBuild += int64(r.FirstBuild)
		}
		if r.ReachedBuild {
			cell.ReachedBuild++
		}
		cell.FailedBuilds += r.FailedBuilds
		model += r.ModelMS
		tool += r.ToolMS
		known += int64(r.Tokens())
		if r.TokensReported {
			cell.Reported++
			reported += int64(r.Tokens())
		}
		for _, sig := range r.Recurring {
			cell.Recurring = appendNew(cell.Recurring, sig)
		}
	}
	mean := func(sum int64, n int) *float64 {
		if n == 0 {
			return nil
		}
		m := float64(sum) / float64(n)
		return &m
	}
	cell.FirstEdit, cell.Tried = mean(firstEdit, cell.FirstEditRuns), mean(tried, cell.TriedRuns)
	cell.FirstBuild = mean(firstBuild, cell.FirstBuildRuns)
	if cell.Runs > 0 {
		n := int64(cell.Runs)
		cell.ModelMS, cell.ToolMS = model/n, tool/n
		cell.KnownTokens = int((known + n/2) / n)
		cell.NamedUsed, cell.NamedIgnored, cell.ReadUnnamed = float64(used)/float64(n), float64(ignored)/float64(n), float64(unnamed)/float64(n)
	}
	if cell.Reported > 0 {
		n := int64(cell.Reported)
		m := int((reported + n/2) / n)
		cell.MeanTokens = &m
	}
	return cell
}

// figures are what a turn's calls say: the calls to its first edit and
// to its first attempt at one, its failed builds, and its tools' time.
func figures(calls []ai.Call) EvalRun {
	var r EvalRun
	var tool time.Duration
	for i, c := range calls {
		tool += c.Took
		if attempted(c) && r.Tried == 0 {
			r.Tried = i + 1
		}
		if attempted(c) && c.OK && r.FirstEdit == 0 {
			r.FirstEdit = i + 1
		}
		if (c.Name == "candidate.build" || c.Name == "candidate.cycle") && c.OK && stepOf(c) == candidate.StepBuildFailed {
			r.FailedBuilds++
		}
		if r.FirstBuild == 0 && built(c) {
			r.FirstBuild = i + 1
		}
	}
	r.ToolMS = tool.Milliseconds()
	return r
}

// built says c ran a build: a candidate.build that answered, or a cycle
// that got as far as its build.
func built(c ai.Call) bool {
	switch {
	case !c.OK:
		return false
	case c.Name == "candidate.build":
		return true
	case c.Name == "candidate.cycle":
		switch stepOf(c) {
		case candidate.StepBuilt, candidate.StepBuildFailed, candidate.StepPreviewed, candidate.StepPreviewFailed, candidate.StepChecked:
			return true
		}
	}
	return false
}

// attempted says c tried to edit: source.edit or source.change, or a
// cycle given a change.
func attempted(c ai.Call) bool {
	switch c.Name {
	case "source.edit", "source.change":
		return true
	case "candidate.cycle":
		var in struct {
			Hunks []json.RawMessage `json:"hunks"`
			Files []json.RawMessage `json:"files"`
		}
		return json.Unmarshal(c.Input, &in) == nil && len(in.Hunks)+len(in.Files) > 0
	}
	return false
}

// stepOf is where a build or cycle the model read back stopped.
func stepOf(c ai.Call) string {
	var answer struct {
		Result struct {
			Step string `json:"step"`
		} `json:"result"`
	}
	if json.Unmarshal(bytes.TrimSpace(c.Result), &answer) != nil {
		return ""
	}
	return answer.Result.Step
}

// appendNew appends s to list unless it holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
