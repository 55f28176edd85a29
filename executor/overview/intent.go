package overview

import (
	"context"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// Requests reads the request an intent answers (*request.Service).
type Requests interface {
	ForIntent(ctx context.Context, intentID int64) (request.State, error)
}

// Deliveries reads what a done intent handed over (*delivery.Service).
type Deliveries interface {
	Get(ctx context.Context, intentID int64) (delivery.Delivery, error)
}

// Chats says whether a chat turn about an application runs (*chat.Service).
type Chats interface {
	Running(appID string) bool
}

// IntentPage is what an intent's page and its live part show, read at
// once: the intent and its application, the model each task runs on, the
// run's task in hand, what its turns cost, the request it answers with
// whether its plan can be approved now, the feedback and pauses sent to
// it, and its delivery.
type IntentPage struct {
	At time.Time
	// Intent has its tasks in run order, each with RunsOn settled: a task
	// with no model of its own or of its tier runs on the Settings model
	// (RunsOnFrom "settings"), as the executor will run it.
	Intent intent.IntentDetail
	App    app.App
	// Progress is the task in hand while the run builds one; nil otherwise.
	Progress *executor.Progress
	// Limits are the turn limits in force.
	Limits ai.Limits
	// Spend is what its turns used and cost, the running turn included.
	Spend IntentSpend
	// Cap is its cap in force and what was spent of it.
	Cap CapState
	// Request is the request it answers, with its approval and whether the
	// plan can be approved now (Approvable); nil when it answers none.
	Request *request.State
	// Interventions are the feedback and pauses sent to it: pending first,
	// then applied, each in order.
	Interventions []intent.Receipt
	// Delivery is what a done intent handed over; nil until it did.
	Delivery *delivery.Delivery
	// Live says something may change it now: the engineer writing its
	// plan, its run, or a chat turn about its application.
	Live bool
	// PreviewLink is where a done intent's application's preview runs,
	// when it runs.
	PreviewLink string
}

// Guided says the intent answers a guided request: Run waits for the
// owner's approval of the exact plan.
func (p IntentPage) Guided() bool {
	return p.Request != nil && p.Request.Mode == request.ModeGuided
}

// IntentPage reads everything the page of intent id and its live part
// show, in one call that writes nothing.
func (s *Service) IntentPage(ctx context.Context, id int64) (IntentPage, error) {
	p := IntentPage{At: s.d.Now(), Limits: s.d.Limits().WithDefaults()}
	d, pending, applied, err := s.d.Backlog.GetWithInterventions(ctx, id)
	if err != nil {
		return p, err
	}
	p.Interventions = append(pending, applied...)
	if p.App, err = s.d.Apps.Get(ctx, d.AppID); err != nil {
		return p, err
	}
	if d.Status == intent.IntentDone && s.d.Candidates != nil {
		if st, err := s.d.Candidates.State(d.AppID); err == nil && st.Preview != nil && st.Preview.Running {
			p.PreviewLink = st.Preview.Link
		}
	}
	settings := ""
	if s.d.Models != nil {
		settings = s.d.Models.DefaultModel()
	}
	for i, t := range d.Tasks {
		d.Tasks[i].RunsOn, d.Tasks[i].RunsOnFrom = t.RunsOnWith(settings)
	}
	p.Intent = d
	if pr, ok := s.d.Runs.Progress(d.ID); ok && pr.Slug != "" {
		p.Progress = &pr
	}
	if p.Spend, err = s.Intent(ctx, d); err != nil {
		return p, err
	}
	if p.Cap, err = s.CapState(ctx, d.ID); err != nil {
		return p, err
	}
	if s.d.Requests != nil {
		st, err := s.d.Requests.ForIntent(ctx, d.ID)
		switch re, ok := refusal.As(err); {
		case err == nil:
			p.Request = &st
		case !ok || re.Code != refusal.NotFound:
			return p, err
		}
	}
	if d.Status == intent.IntentDone && s.d.Deliveries != nil {
		dv, err := s.d.Deliveries.Get(ctx, d.ID)
		switch re, ok := refusal.As(err); {
		case err == nil:
			p.Delivery = &dv
		case !ok || re.Code != refusal.NotFound:
			return p, err
		}
	}
	p.Live = d.BeingWritten() || d.Status == intent.IntentRunning || (s.d.Chats != nil && s.d.Chats.Running(d.AppID))
	return p, nil
}
