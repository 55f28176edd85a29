package mcpserver

import (
	"context"
	"fmt"
	"time"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/knowledge"
)

// tools are the handlers, over the services.
type tools struct{ d Deps }

// The answers the tools give, as JSON.
type (
	applicationView struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Origin         string `json:"origin"`
		CurrentRelease string `json:"currentRelease,omitempty"`
	}
	intentLine struct {
		ID           int64          `json:"id"`
		App          string         `json:"app"`
		Status       string         `json:"status"`
		Mode         string         `json:"mode"`
		BeingWritten bool           `json:"beingWritten"`
		Request      string         `json:"request"`
		Tasks        map[string]int `json:"tasks"`
		CreatedAt    time.Time      `json:"createdAt"`
	}
	intentView struct {
		ID           int64           `json:"id"`
		App          string          `json:"app"`
		Status       string          `json:"status"`
		Mode         string          `json:"mode"`
		BeingWritten bool            `json:"beingWritten"`
		Request      string          `json:"request"`
		StopReason   string          `json:"stopReason,omitempty"`
		Analysis     intent.Analysis `json:"analysis"`
		// Questions are the engineer's questions waiting for the owner:
		// answer one with send_request's question.
		Questions []questionView `json:"questions"`
		Journal   *journalView   `json:"request_journal,omitempty"`
		Tasks     []taskView     `json:"tasks"`
		Delivery  *deliveryView  `json:"delivery,omitempty"`
	}
	questionView struct {
		ID   int    `json:"id"`
		Text string `json:"text"`
	}
	journalView struct {
		Request  int64  `json:"request"`
		Revision int    `json:"revision"`
		Via      string `json:"via,omitempty"`
		// Plan is the hash of the plan now: approve_plan approves it.
		Plan         string `json:"plan,omitempty"`
		Approved     bool   `json:"approved"`
		Approvable   bool   `json:"approvable"`
		Unapprovable string `json:"unapprovable,omitempty"`
		Voided       string `json:"approvalVoided,omitempty"`
		Ran          bool   `json:"ran"`
		Delivered    bool   `json:"delivered"`
	}
	taskView struct {
		ID        int64           `json:"id"`
		Slug      string          `json:"slug"`
		Title     string          `json:"title"`
		Status    string          `json:"status"`
		Priority  string          `json:"priority"`
		Tier      string          `json:"tier"`
		Model     string          `json:"model,omitempty"`
		BlockedBy []string        `json:"blockedBy"`
		Summary   string          `json:"summary"`
		Criteria  []criterionView `json:"criteria"`
		Attempts  int             `json:"attempts"`
		// Runs are the runs that started the task, oldest first: read one
		// with read_run_log.
		Runs []string `json:"runs"`
		// Verdict is why the host failed or interrupted the task.
		Verdict  string `json:"verdict,omitempty"`
		Advice   string `json:"advice,omitempty"`
		Question string `json:"question,omitempty"`
	}
	criterionView struct {
		Text   string `json:"text"`
		Passed bool   `json:"passed"`
	}
	deliveryView struct {
		At        time.Time      `json:"at"`
		Revision  string         `json:"revision"`
		Artifacts []artifactView `json:"artifacts"`
		Problems  []string       `json:"problems,omitempty"`
	}
	artifactView struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	eventView struct {
		At      time.Time      `json:"at"`
		Level   string         `json:"level"`
		Message string         `json:"message"`
		Attrs   map[string]any `json:"attrs,omitempty"`
	}
	// done is a write's answer: a sentence, and what it wrote.
	done[T any] struct {
		Message string `json:"message"`
		Result  T      `json:"result"`
	}
	requestView struct {
		ID       int64  `json:"request"`
		App      string `json:"app"`
		Revision int    `json:"revision"`
		Mode     string `json:"mode"`
		Intent   int64  `json:"intent,omitempty"`
	}
	listed[T any] struct {
		Items []T `json:"items"`
	}
)

type noInput struct{}

func (t tools) listApplications() tool[noInput, listed[applicationView]] {
	return tool[noInput, listed[applicationView]]{name: "list_applications", readOnly: true,
		about: "Lists the applications: each one's id (what the other tools take), name and origin.",
		handle: func(ctx context.Context, _ noInput) (listed[applicationView], error) {
			apps, err := t.d.Apps.List(ctx)
			out := listed[applicationView]{Items: []applicationView{}}
			for _, a := range apps {
				out.Items = append(out.Items, applicationView{ID: a.ID, Name: a.Name, Origin: a.Origin, CurrentRelease: a.CurrentRelease})
			}
			return out, err
		}}
}

type listIntentsIn struct {
	App string `json:"app,omitempty" jsonschema:"The application's id, as list_applications shows it; left out, every application's intents."`
}

func (t tools) listIntents() tool[listIntentsIn, listed[intentLine]] {
	return tool[listIntentsIn, listed[intentLine]]{name: "list_intents", readOnly: true,
		about: "Lists the intents of an application (or of every one), newest first: each one's number, status, mode, request and how many of its tasks are in each status. " +
			"A request sent with send_request becomes an intent once the engineer opens it; beingWritten stays true until it submits the plan.",
		handle: func(ctx context.Context, in listIntentsIn) (listed[intentLine], error) {
			out := listed[intentLine]{Items: []intentLine{}}
			apps := []string{in.App}
			if in.App != "" {
				// An application that is not there is said, not listed as empty.
				if _, err := t.d.Apps.Get(ctx, in.App); err != nil {
					return out, err
				}
			} else {
				all, err := t.d.Apps.List(ctx)
				if err != nil {
					return out, err
				}
				apps = apps[:0]
				for _, a := range all {
					apps = append(apps, a.ID)
				}
			}
			for _, appID := range apps {
				intents, err := t.d.Backlog.List(ctx, appID)
				if err != nil {
					return out, err
				}
				for _, i := range intents {
					l := intentLine{ID: i.ID, App: i.AppID, Status: string(i.Status), Mode: string(i.Mode), BeingWritten: i.BeingWritten(),
						Request: i.Request, Tasks: map[string]int{}, CreatedAt: i.CreatedAt}
					for status, n := range i.Counts {
						l.Tasks[string(status)] = n
					}
					out.Items = append(out.Items, l)
				}
			}
			return out, nil
		}}
}

type showIntentIn struct {
	Intent int64 `json:"intent" jsonschema:"The intent's number, as list_intents shows it."`
}

func (t tools) showIntent() tool[showIntentIn, intentView] {
	return tool[showIntentIn, intentView]{name: "show_intent", readOnly: true, fields: []fields{positive("intent")},
		about: "Shows an intent: the engineer's analysis and open questions, its request's journal (the revision and the plan hash approve_plan takes), " +
			"every task in run order with its criteria, attempts, runs, the host's verdict and the builder's question, and, once done, the delivery with each artifact's size and SHA-256.",
		handle: func(ctx context.Context, in showIntentIn) (intentView, error) {
			d, err := t.d.Backlog.Get(ctx, in.Intent)
			if err != nil {
				return intentView{}, err
			}
			v := intentOut(d)
			st, err := t.d.Requests.ForIntent(ctx, d.ID)
			if re, ok := refusal.As(err); ok && re.Code == refusal.NotFound {
				err = nil // an intent no request opened
			} else if err == nil {
				v.Journal = journalOut(st)
				for _, q := range st.Asking(d.Questions) {
					v.Questions = append(v.Questions, questionView{ID: q.Revision, Text: q.Text})
				}
			}
			if err != nil {
				return intentView{}, err
			}
			if d.Status == intent.IntentDone {
				dv, err := t.d.Deliveries.Get(ctx, d.ID)
				if re, ok := refusal.As(err); ok && re.Code == refusal.NotFound {
					return v, nil // the server delivers it on its next start
				}
				if err != nil {
					return intentView{}, err
				}
				v.Delivery = &deliveryView{At: dv.At, Revision: dv.Revision, Artifacts: []artifactView{}}
				for _, a := range dv.Artifacts {
					v.Delivery.Artifacts = append(v.Delivery.Artifacts, artifactView{Path: a.Path, Size: a.Size, SHA256: a.SHA256})
				}
				for _, p := range dv.Problems {
					v.Delivery.Problems = append(v.Delivery.Problems, p.Path+": "+p.Message)
				}
			}
			return v, nil
		}}
}

func intentOut(d intent.IntentDetail) intentView {
	v := intentView{ID: d.ID, App: d.AppID, Status: string(d.Status), Mode: string(d.Mode), BeingWritten: d.BeingWritten(),
		Request: d.Request, StopReason: d.StopReason, Analysis: d.Analysis, Questions: []questionView{}, Tasks: []taskView{}}
	for _, t := range d.Tasks {
		status := string(t.Status)
		if t.Blocked {
			status = "blocked"
		}
		tv := taskView{ID: t.ID, Slug: t.Slug, Title: t.Title, Status: status, Priority: t.Priority, Tier: t.Tier, Model: t.RunsOn,
			BlockedBy: append([]string{}, t.BlockedBy...), Summary: t.Summary, Criteria: []criterionView{}, Attempts: t.Attempts,
			Runs: append([]string{}, t.RunIDs...), Verdict: t.Reason, Advice: t.Advice, Question: t.Question}
		passed := t.Passed()
		for n, c := range t.Criteria {
			tv.Criteria = append(tv.Criteria, criterionView{Text: c.Text, Passed: passed[n]})
		}
		v.Tasks = append(v.Tasks, tv)
	}
	return v
}

func journalOut(st request.State) *journalView {
	return &journalView{Request: st.ID, Revision: st.Revision, Via: st.Via, Plan: st.Current, Approved: st.Approval.Valid,
		Approvable: st.Approvable, Unapprovable: st.Unapprovable, Voided: st.Approval.Voided, Ran: st.Ran, Delivered: st.Delivered}
}

type readRunLogIn struct {
	Run   string `json:"run" jsonschema:"The run's id, as show_intent lists a task's runs (intent-1-0001-add-tags-a1) or chat-APP-N for a chat turn."`
	Level string `json:"level,omitempty" jsonschema:"The least severe level shown: debug (the default, everything), info, warn or error."`
	Limit int    `json:"limit,omitempty" jsonschema:"How many lines, newest first: 200 when left out, at most 1000."`
}

func (t tools) readRunLog() tool[readRunLogIn, listed[eventView]] {
	return tool[readRunLogIn, listed[eventView]]{name: "read_run_log", readOnly: true,
		fields: []fields{nonEmpty("run"), oneOf("level", knowledge.Levels...), positive("limit"), atMost("limit", 1000)},
		about:  "Reads the knowledge log of one run (a task's attempt or a chat turn), newest first: what the host and the engineer's turn did, with each line's level and details.",
		handle: func(ctx context.Context, in readRunLogIn) (listed[eventView], error) {
			events, err := t.d.Log.Log(ctx, knowledge.LogQuery{RunID: in.Run, Level: in.Level, Limit: in.Limit})
			out := listed[eventView]{Items: []eventView{}}
			for _, e := range events {
				out.Items = append(out.Items, eventView{At: e.At, Level: string(e.Level), Message: e.Message, Attrs: e.Attrs})
			}
			return out, err
		}}
}

type sendRequestIn struct {
	App      string `json:"app" jsonschema:"The application's id, as list_applications shows it."`
	Text     string `json:"text" jsonschema:"What you ask of the engineer, as you would type it on the Request page."`
	Mode     string `json:"mode,omitempty" jsonschema:"For a new request: autonomous (Run starts the plan as submitted) or guided (the plan waits for approve_plan)."`
	Op       string `json:"op" jsonschema:"An id of your choosing for this write: sending it again with the same op is recognised and writes nothing; the same op with other words is refused."`
	Request  int64  `json:"request,omitempty" jsonschema:"To continue an open request rather than start one: its number, as send_request or show_intent answered it."`
	Seen     int    `json:"seen,omitempty" jsonschema:"With request: the request's revision you last saw; a request that changed since is refused."`
	Question int    `json:"question,omitempty" jsonschema:"With request: the id of the engineer's question (show_intent's questions) that text answers."`
}

func (t tools) sendRequest() tool[sendRequestIn, done[requestView]] {
	return tool[sendRequestIn, done[requestView]]{name: "send_request",
		fields: []fields{nonEmpty("app", "text", "op"), oneOf("mode", request.ModeAutonomous, request.ModeGuided), positive("request", "seen", "question")},
		about: "Sends the owner's words to an application's engineer, as the Request page does: a new request (with its mode), a later message, or an answer to the engineer's question. " +
			"The engineer's turn runs in the background on the running server (autoapp serve); it analyses the request into an intent of tasks: follow it with list_intents and show_intent.",
		handle: func(ctx context.Context, in sendRequestIn) (done[requestView], error) {
			w := request.Say{ID: in.Request, Seen: in.Seen, Op: in.Op, Text: in.Text, Mode: in.Mode, Answer: in.Question != 0, Question: in.Question}
			st, err := t.d.Server.Say(ctx, in.App, w)
			if err != nil {
				return done[requestView]{}, err
			}
			v := requestView{ID: st.ID, App: st.AppID, Revision: st.Revision, Mode: st.Mode, Intent: st.IntentID}
			return done[requestView]{Result: v, Message: fmt.Sprintf(
				"Request %d of %s is with the engineer, at revision %d. Its intent appears in list_intents once the engineer opens it; continue it with request %d and seen %d.",
				st.ID, st.AppID, st.Revision, st.ID, st.Revision)}, nil
		}}
}

type answerQuestionIn struct {
	Task   int64  `json:"task" jsonschema:"The task whose builder asked, by its id as show_intent shows it."`
	Answer string `json:"answer" jsonschema:"Your answer to the builder's question."`
}

type answered struct {
	Task int64 `json:"task"`
}

func (t tools) answerQuestion() tool[answerQuestionIn, done[answered]] {
	return tool[answerQuestionIn, done[answered]]{name: "answer_question", fields: []fields{positive("task"), nonEmpty("answer")},
		about: "Answers the question a builder asked about its task (show_intent shows it on the task): the task is queued again with the answer, and Run continues the intent.",
		handle: func(ctx context.Context, in answerQuestionIn) (done[answered], error) {
			if err := t.d.Answers.AnswerTask(ctx, in.Task, in.Answer); err != nil {
				return done[answered]{}, err
			}
			return done[answered]{Result: answered{Task: in.Task},
				Message: fmt.Sprintf("Task %d has your answer and is queued again; Run continues its intent.", in.Task)}, nil
		}}
}

type queueInterventionIn struct {
	Intent int64  `json:"intent" jsonschema:"The intent's number, as list_intents shows it."`
	Kind   string `json:"kind" jsonschema:"feedback (the engineer revises the plan with it) or pause (the run stops at its next safe boundary)."`
	Text   string `json:"text,omitempty" jsonschema:"The feedback; a pause may carry a note."`
	Op     string `json:"op" jsonschema:"An id of your choosing for this write: sending it again with the same op is recognised and writes nothing; the same op with other words is refused."`
}

func (t tools) queueIntervention() tool[queueInterventionIn, done[intent.Receipt]] {
	return tool[queueInterventionIn, done[intent.Receipt]]{name: "queue_intervention",
		fields: []fields{positive("intent"), oneOf("kind", intent.InterventionFeedback, intent.InterventionPause), nonEmpty("op")},
		about:  "Queues feedback or a pause for a running intent, as its page and `autoapp intervention submit` do: a receipt in its inbox, applied at the run's next safe boundary. It never waits for the run.",
		handle: func(ctx context.Context, in queueInterventionIn) (done[intent.Receipt], error) {
			rc, replayed, err := t.d.Inbox.SubmitIntervention(ctx, in.Intent, in.Op, intent.InterventionKind(in.Kind), in.Text)
			if err != nil {
				return done[intent.Receipt]{}, err
			}
			again := ""
			if replayed {
				again = " (a retry: this is the receipt the first submission got)"
			}
			return done[intent.Receipt]{Result: rc, Message: fmt.Sprintf("Receipt %d: %s for intent #%d, accepted%s. It is applied at the run's next safe boundary.",
				rc.Order, rc.Kind, rc.IntentID, again)}, nil
		}}
}

type approvePlanIn struct {
	Intent int64  `json:"intent" jsonschema:"The intent's number, as list_intents shows it."`
	Seen   int    `json:"seen" jsonschema:"The request's revision you read in show_intent (request_journal.revision)."`
	Plan   string `json:"plan" jsonschema:"The hash of the plan you read in show_intent (request_journal.plan): the approval is of that plan only."`
	Op     string `json:"op" jsonschema:"An id of your choosing for this write: sending it again with the same op is recognised and writes nothing; the same op with other words is refused."`
}

func (t tools) approvePlan() tool[approvePlanIn, done[*journalView]] {
	return tool[approvePlanIn, done[*journalView]]{name: "approve_plan", fields: []fields{positive("intent", "seen"), nonEmpty("plan", "op")},
		about: "Approves a guided intent's plan, exactly as show_intent showed it (its revision and plan hash), as the intent's Approve does; any later change to the plan voids the approval.",
		handle: func(ctx context.Context, in approvePlanIn) (done[*journalView], error) {
			st, err := t.d.Requests.ForIntent(ctx, in.Intent)
			if err != nil {
				return done[*journalView]{}, err
			}
			st, err = t.d.Approvals.ApproveShown(ctx, st.ID, in.Seen, in.Op, in.Plan)
			if err != nil {
				return done[*journalView]{}, err
			}
			return done[*journalView]{Result: journalOut(st), Message: fmt.Sprintf("You approved the plan of intent #%d; run_intent starts it.", in.Intent)}, nil
		}}
}

type runIntentIn struct {
	Intent int64 `json:"intent" jsonschema:"The intent's number, as list_intents shows it."`
}

type ran struct {
	Intent int64 `json:"intent"`
}

func (t tools) runIntent() tool[runIntentIn, done[ran]] {
	return tool[runIntentIn, done[ran]]{name: "run_intent", fields: []fields{positive("intent")},
		about: "Runs an intent on the running server, as its Run does: the host builds its tasks one at a time and judges each by what it observed. Follow it with show_intent.",
		handle: func(ctx context.Context, in runIntentIn) (done[ran], error) {
			if err := t.d.Server.Start(ctx, in.Intent); err != nil {
				return done[ran]{}, err
			}
			return done[ran]{Result: ran(in), Message: fmt.Sprintf("Intent #%d is running; show_intent follows its tasks.", in.Intent)}, nil
		}}
}
