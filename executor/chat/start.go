package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"autoapp/executor/ai"
	"autoapp/executor/planner"
	"autoapp/intent"
	"autoapp/intent/refusal"
)

// Sentences of intent.start.
const (
	// DeclinedStart answers intent.start when the person denied the run.
	DeclinedStart = "The person declined to run it now."
	// StartedNext is what comes after intent.start started a run.
	StartedNext = "The run started: the host builds and checks the tasks one at a time, and the Backlog shows how it goes. " +
		"Tell the person it started, and stop. Do not say that anything is done or works: the host's checks decide that."
)

// intentStart is "go ahead" in the chat: it finds the application's
// intent that can run, asks the person, and on Approve starts it as Run in
// the Backlog does.
func (s *Service) intentStart(appID, runID string) ai.Tool {
	type input struct {
		Intent int64 `json:"intent"`
	}
	return ai.Tool{
		Name: planner.StartTool,
		Description: "Run the application's plan now, as Run in the Backlog does: the host builds and checks its tasks one at a time. " +
			"Call it only when the person says to go ahead. It asks the person again, in the page, before anything runs. " +
			"intent is the intent to run; left out, the application's submitted draft, else its last stopped intent.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {
			"intent": {"type": "integer", "minimum": 1, "description": "the intent's number, as the backlog document gives it; left out for the application's submitted draft, else its last stopped intent"}}}`),
		Example: json.RawMessage(`{}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in input
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &in); err != nil {
					return nil, ai.Refuse(refusal.Problem{Message: "the input does not fit the tool's schema: " + err.Error()})
				}
			}
			list, err := s.d.Backlog.List(ctx, appID)
			if err != nil {
				return nil, fmt.Errorf("chat: intent.start: %w", err)
			}
			target, err := runnable(list, appID, in.Intent)
			if err != nil {
				return nil, err
			}
			tasks := toRun(target)
			q := fmt.Sprintf("Run intent #%d now: %s, one at a time?", target.ID, counted(tasks, "task"))
			if tasks == 1 {
				q = fmt.Sprintf("Run intent #%d now: 1 task?", target.ID)
			}
			approved, err := s.d.Gate.Ask(ctx, appID, runID, q)
			if err != nil {
				return nil, err
			}
			if !approved {
				return nil, ai.Refuse(refusal.Problem{Message: DeclinedStart})
			}
			if err := s.d.Start(ctx, target.ID); err != nil {
				if sentence, ok := startRefusal(err); ok {
					return nil, ai.Refuse(refusal.Problem{Message: sentence})
				}
				return nil, fmt.Errorf("chat: intent.start: %w", err)
			}
			return planner.StartAnswer{Intent: target.ID, Tasks: tasks, Next: StartedNext}, nil
		},
	}
}

// runnable is the intent intent.start runs: the one named by id, or else
// the application's draft, or else its last stopped intent. One that
// cannot run is refused with a sentence the model passes on, before the
// person is asked anything.
func runnable(list []intent.IntentSummary, appID string, id int64) (intent.IntentSummary, error) {
	if id != 0 {
		i := slices.IndexFunc(list, func(in intent.IntentSummary) bool { return in.ID == id })
		if i < 0 {
			return intent.IntentSummary{}, ai.Refuse(refusal.Problem{Field: "intent", Message: fmt.Sprintf("there is no intent #%d of %s", id, appID)})
		}
		return list[i], canStart(list[i])
	}
	var pick, running *intent.IntentSummary
	for i := range list {
		in := &list[i]
		switch {
		case in.Status == intent.IntentDraft:
			pick = in // an application has at most one draft
		case in.Status == intent.IntentStopped && (pick == nil || pick.Status == intent.IntentStopped && in.ID > pick.ID):
			pick = in
		case in.Status == intent.IntentRunning:
			running = in
		}
	}
	switch {
	case pick != nil:
		return *pick, canStart(*pick)
	case running != nil:
		return intent.IntentSummary{}, canStart(*running)
	}
	return intent.IntentSummary{}, ai.Refuse(refusal.Problem{Message: fmt.Sprintf("There is no submitted plan or stopped intent of %s to run.", appID)})
}

// canStart refuses an intent that cannot run, with why.
func canStart(in intent.IntentSummary) error {
	var why string
	switch {
	case in.Status == intent.IntentDraft && in.SubmittedAt.IsZero():
		why = fmt.Sprintf("The plan of intent #%d is still being written: submit it with intent.submit first.", in.ID)
	case in.Status == intent.IntentDraft && len(in.Questions) > 0:
		why = fmt.Sprintf("Intent #%d has open questions: the person answers them before it can run.", in.ID)
	case in.Status == intent.IntentRunning:
		why = fmt.Sprintf("Intent #%d is running already.", in.ID)
	case in.Status != intent.IntentDraft && in.Status != intent.IntentStopped:
		why = fmt.Sprintf("Intent #%d is %s: only a submitted plan or a stopped intent can run.", in.ID, in.Status)
	case in.Counts[intent.TaskNeedsAnswer] > 0:
		why = fmt.Sprintf("A task of intent #%d waits for the person's answer: they answer it in the Backlog first.", in.ID)
	case toRun(in) == 0 && !(in.Status == intent.IntentStopped && intent.Undelivered(in.StopReason, in.ID)):
		// Only the stop an undelivered finish left runs with nothing to build.
		why = fmt.Sprintf("Nothing is left to run in intent #%d.", in.ID)
	default:
		return nil
	}
	return ai.Refuse(refusal.Problem{Message: why})
}

// toRun counts the tasks a run of the intent would do.
func toRun(in intent.IntentSummary) int {
	n := 0
	for _, st := range []intent.TaskStatus{intent.TaskProposed, intent.TaskInQueue, intent.TaskFailed, intent.TaskInterrupted} {
		n += in.Counts[st]
	}
	return n
}

// startRefusal is the sentence of a refusal of Start (the executor's, the
// backlog's or the request's: a guided plan not approved, another run
// going), as the model passes it on; false for a failure of the host.
func startRefusal(err error) (string, bool) {
	if r, ok := refusal.As(err); ok {
		return r.Message, true
	}
	return "", false
}
