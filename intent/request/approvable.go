package request

import (
	"bytes"
	"errors"

	"autoapp/intent"
	"autoapp/intent/refusal"
)

// approvable is the rule for approving a plan: the owner may approve the
// last plan the engineer submitted when the request is guided, the intent
// is not being written, it is a draft or stopped, its plan (analysis and
// rows) is still the one submitted, and that plan is not approved already. When not, the
// refusal says why. Approve keeps it, and State carries its answer for the
// page's button; d and now are the intent and its plan now (unread while
// no plan was submitted).
func (j journal) approvable(d intent.IntentDetail, now planContent) error {
	last, submitted := j.LastPlan()
	switch {
	case j.Mode != ModeGuided:
		return refuse(refusal.Conflict, "Request %d is %s: its plan runs without an approval.", j.ID, j.Mode)
	case !submitted || j.IntentID == 0:
		return refuse(refusal.Conflict, "There is no submitted plan to approve yet.")
	case d.BeingWritten():
		return refuse(refusal.Conflict, "The engineer is writing the plan again; approve it once it is submitted.")
	case d.Status == intent.IntentRunning:
		return refuse(refusal.Conflict, "Intent #%d is running; approve its plan once it stops.", d.ID)
	case d.Status != intent.IntentDraft && d.Status != intent.IntentStopped:
		return refuse(refusal.Conflict, "Intent #%d is %s; its plan can no longer be approved.", d.ID, d.Status)
	case hashPlan(now) != last.Hash && !ownersOwn(j.snapshots[last.Revision], now):
		what := sentence(changes(j.snapshots[last.Revision], now), "The plan changed.")
		return refuse(refusal.Conflict, "The plan changed after it was submitted: %s Approve it once the engineer submits it again.", what)
	case hashPlan(now) == last.Hash && j.Approved == last.Hash:
		return refuse(refusal.Conflict, "This plan is approved already.")
	}
	return nil
}

// revocable is the rule for withdrawing an approval: the owner may take
// back an approval it gave while the intent is a draft or stopped, before
// Run starts it again; a running intent is stopped first.
func (j journal) revocable(d intent.IntentDetail) error {
	switch {
	case j.Approved == "":
		return refuse(refusal.Conflict, "There is no approval to withdraw on request %d.", j.ID)
	case d.Status == intent.IntentRunning:
		return refuse(refusal.Conflict, "Intent #%d is running; stop it before withdrawing the approval.", d.ID)
	case d.Status != intent.IntentDraft && d.Status != intent.IntentStopped:
		return refuse(refusal.Conflict, "Intent #%d is %s; its approval can no longer be withdrawn.", d.ID, d.Status)
	}
	return nil
}

// withApprovable records the rule's answer on the state.
func withApprovable(st State, err error) State {
	st.Approvable, st.Unapprovable = err == nil, ""
	var re *refusal.Error
	if errors.As(err, &re) {
		st.Unapprovable = re.Message
	}
	return st
}

// ownersOwn says the plan now differs from the version before only by what
// the owner alone can change on the page: a task's model, a task removed.
// The analysis and every remaining task are the engineer's, as submitted;
// nothing was added. Approving it approves the owner's own version.
func ownersOwn(before planSnapshot, now planContent) bool {
	if a := before.Analysis; a != nil && !bytes.Equal(mustJSON(*a), mustJSON(now.Analysis)) {
		return false
	}
	then := make(map[string]planRow, len(before.Tasks))
	for _, r := range before.Tasks {
		then[r.Slug] = r
	}
	for _, r := range now.Tasks {
		b, ok := then[r.Slug]
		if !ok || !bytes.Equal(mustJSON(b.Task), mustJSON(r.Task)) {
			return false
		}
	}
	return true
}
