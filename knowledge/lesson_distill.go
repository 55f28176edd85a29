package knowledge

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
)

// The numbers of distillation (DESIGN.md, "Numbers the seeds lost").
const (
	// DistillTimeout is how long the distillation question may take.
	DistillTimeout = 60 * time.Second
	// DistillMaxTries is how many times a case's question is asked
	// before the case is marked failed.
	DistillMaxTries = 3
)

// What the distiller can answer about whether the engineer could have
// known: a lesson, the same cause as an existing lesson, or one of four
// reasons there is nothing to learn.
const (
	KnowableLesson        = "lesson"
	KnowableSameAs        = "same_as"
	KnowableSpecific      = "specific"
	KnowableNotKnowable   = "not_knowable"
	KnowableEnvironment   = "environment"
	KnowableMethodUnclear = "method_unclear"
)

// Ask asks the model one structured question and decodes the answer,
// valid against schema, into out. The caller closes over ai.Ask with its
// endpoint and DistillTimeout.
type Ask func(ctx context.Context, instructions, message string, schema json.RawMessage, out any) error

// DistillSchema is the JSON Schema of the answer to the distillation
// question. Every field is required, lesson "" and same_as 0 when they do
// not apply, so strict structured output can hold it.
var DistillSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "explanation": {"type": "string", "minLength": 1, "maxLength": 2000,
      "description": "What explains the failure, in two or three sentences, from the facts given."},
    "knowable": {"type": "string", "enum": ["lesson", "same_as", "specific", "not_knowable", "environment", "method_unclear"],
      "description": "lesson: a rule the engineer could have known in advance; same_as: the same cause as the existing lesson named in same_as; specific: true only of this case; not_knowable: nothing before the failure could have told; environment: the machine or a tool was at fault, not the change; method_unclear: the failure shows the way of working was unclear."},
    "lesson": {"type": "string", "maxLength": 1000,
      "description": "When knowable is lesson: one sentence the engineer should know next time; when knowable is same_as: that lesson restated as this case teaches it, which supersedes it; when knowable is method_unclear: one sentence saying what about the way of working was unclear, for a person to read. It names no path on this machine, no address and no secret. Otherwise empty."},
    "same_as": {"type": "integer", "minimum": 0,
      "description": "When knowable is same_as: the id of the existing lesson with the same cause. Otherwise 0."}
  },
  "required": ["explanation", "knowable", "lesson", "same_as"],
  "additionalProperties": false
}`)

// DistillInstructions are the instructions of the distillation question.
const DistillInstructions = `You are the distiller of Autoapp, a launcher in which an engineer model changes an application and the host builds and checks what it changed.
A failure the host saw has been resolved. You are told the failure (its kind, stage and message), the person's request, for a check failure the acceptance example's steps, the edits made while it was open with how each hunk matched, the source revisions and releases before and after the repair, the instructions and every document the turn that met the failure was given, exactly as delivered, the application's last events while it was open, and the existing lessons about the same failure, with their ids, whether each was in the index when that turn was served and whether that turn was given it.
Answer what explains the failure, and whether the engineer could have known:
- lesson: a rule, true beyond this case, that would have avoided it. Write it as one sentence in the lesson field.
- same_as: the cause is the one an existing lesson already states. Give its id in same_as, and in the lesson field that lesson restated as this case teaches it: it supersedes the existing one.
- specific: what went wrong is true only of this case.
- not_knowable: nothing available before the failure could have told.
- environment: the machine, a tool or the network was at fault, not the change.
- method_unclear: the failure shows the way of working itself was unclear. Say in the lesson field, in one sentence, what was unclear: a person reads it; it is not given to the engineer.
A lesson names no path on this machine, no address with a port and nothing like a secret. Use only the facts given.`

// distillAnswer is the model's answer to the distillation question.
type distillAnswer struct {
	Explanation string `json:"explanation"`
	Knowable    string `json:"knowable"`
	Lesson      string `json:"lesson"`
	SameAs      int64  `json:"same_as"`
}

// Outcome is what distilling one case came to. It is also what is written
// to the case as its diagnosis, as JSON.
type Outcome struct {
	CaseID      int64  `json:"-"`
	Explanation string `json:"explanation"`
	Knowable    string `json:"knowable"`
	// LessonID is the provisional lesson a lesson, same_as or
	// method_unclear answer added; 0 when it added none.
	LessonID int64 `json:"lessonId,omitempty"`
	// SameAs is the existing lesson a same_as answer named. The answer's
	// restated lesson (LessonID) supersedes it; an answer whose text was
	// empty or dropped flags it recurring instead.
	SameAs int64 `json:"sameAs,omitempty"`
	// Dropped is why a lesson the model wrote was not kept (its text named
	// a path, an address or a secret); the diagnosis is kept all the same.
	Dropped string `json:"dropped,omitempty"`
	// Skipped is true when the case had a diagnosis already, so nothing
	// was asked or written.
	Skipped bool `json:"-"`
}

// Distill asks ask the distillation question about the resolved case c and
// writes what it answered, in one transaction: the diagnosis (always, as
// the Outcome's JSON) with the case's distillation done, and a provisional
// lesson for a lesson answer, unless its text is refused. A method_unclear
// answer keeps a lesson too, marked so, of the sentence it gave or else its
// explanation: a person reads and retires it, and it is never served. A same_as answer
// supersedes the lesson it names (Supersede) with a provisional lesson of
// its restated text; when it gives no usable text, the named lesson is
// flagged recurring instead: its failure came back. A case with a diagnosis
// already is skipped. A question that fails, or an answer that does not
// hold together, is an error and writes nothing, so the case can be asked
// again.
func (s *Lessons) Distill(ctx context.Context, c Case, ask Ask) (Outcome, error) {
	out := Outcome{CaseID: c.ID}
	if c.Diagnosis != "" {
		out.Skipped = true
		return out, nil
	}
	if !c.Resolved() {
		return out, refuse(refusal.Invalid, "Case %d is still open; only a resolved case is distilled.", c.ID)
	}
	var known []lessonRow
	if err := s.db.Read.SelectContext(ctx, &known,
		`SELECT `+lessonColumns+` FROM lessons
		 WHERE applies_signature = ? AND status IN ('provisional', 'confirmed') AND method_unclear = 0
		 ORDER BY id DESC LIMIT 5`,
		c.Signature); err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	knownLessons, err := toLessons(known)
	if err != nil {
		return out, err
	}

	ev, err := s.readEvidence(ctx, c, knownLessons)
	if err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	message, cut := ev.message()
	if len(cut) > 0 {
		if err := s.logCut(ctx, c, cut); err != nil {
			return out, err
		}
	}

	qctx, cancel := context.WithTimeout(ctx, DistillTimeout)
	defer cancel()
	var a distillAnswer
	if err := ask(qctx, DistillInstructions, message, DistillSchema, &a); err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: the question failed: %w", c.ID, err)
	}
	a.Explanation, a.Lesson = strings.TrimSpace(a.Explanation), strings.TrimSpace(a.Lesson)
	switch {
	case a.Explanation == "":
		return out, fmt.Errorf("knowledge: distill case %d: the answer has no explanation", c.ID)
	case a.Knowable == KnowableLesson && a.Lesson == "":
		return out, fmt.Errorf("knowledge: distill case %d: the answer is a lesson without its text", c.ID)
	case a.Knowable == KnowableSameAs && a.SameAs <= 0:
		return out, fmt.Errorf("knowledge: distill case %d: the answer is same_as without a lesson", c.ID)
	}
	switch a.Knowable {
	case KnowableLesson, KnowableSameAs, KnowableSpecific, KnowableNotKnowable, KnowableEnvironment, KnowableMethodUnclear:
	default:
		return out, fmt.Errorf("knowledge: distill case %d: %q is not an answer to whether it was knowable", c.ID, a.Knowable)
	}
	out.Explanation, out.Knowable = a.Explanation, a.Knowable

	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	defer tx.Rollback()
	var diagnosed bool
	err = tx.GetContext(ctx, &diagnosed, `SELECT diagnosis IS NOT NULL FROM cases WHERE id = ?`, c.ID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return out, refuse(refusal.NotFound, "There is no case %d.", c.ID)
	case err != nil:
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	case diagnosed:
		// Another distillation wrote it first: a second question is a no-op.
		return Outcome{CaseID: c.ID, Skipped: true}, nil
	}
	switch a.Knowable {
	case KnowableLesson:
		if err := CheckLessonText(a.Lesson); err != nil {
			out.Dropped = err.Error()
			break
		}
		if out.LessonID, err = s.distilledLesson(ctx, tx, c, a.Lesson, Lesson{}, false); err != nil {
			return out, err
		}
	case KnowableMethodUnclear:
		text := a.Lesson
		if text == "" {
			text = a.Explanation
		}
		if err := CheckLessonText(text); err != nil {
			out.Dropped = err.Error()
			break
		}
		if out.LessonID, err = s.distilledLesson(ctx, tx, c, text, Lesson{}, true); err != nil {
			return out, err
		}
	case KnowableSameAs:
		l, err := getLesson(ctx, tx, a.SameAs)
		if err != nil {
			return out, fmt.Errorf("knowledge: distill case %d: the answer names lesson %d: %w", c.ID, a.SameAs, err)
		}
		out.SameAs = l.ID
		if a.Lesson != "" {
			if err := CheckLessonText(a.Lesson); err != nil {
				out.Dropped = err.Error()
			} else if out.LessonID, err = s.distilledLesson(ctx, tx, c, a.Lesson, l, false); err != nil {
				return out, err
			}
		}
		if out.LessonID == 0 {
			if err := flagLesson(ctx, tx, l, FlagRecurring); err != nil {
				return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
			}
		}
	}
	diagnosis, err := json.Marshal(out)
	if err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cases SET diagnosis = ? WHERE id = ?`, string(diagnosis), c.ID); err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	if err := moveDistill(ctx, tx, c.ID, DistillDone, keepTries); err != nil {
		return out, err
	}
	if err := tx.Commit(); err != nil {
		return out, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	return out, nil
}

// distilledLesson inserts text as the provisional lesson of case c, marked
// method_unclear when methodUnclear: where it applies is the case's stage
// and signature and the files its edits touched, its instructions those of
// the turn that met the failure and its version the server's that opened
// the case, or the running ones (NewLessons) when the case does not say.
// When old is a lesson that may still be served, the new one supersedes it
// (supersede); otherwise old is ignored.
func (s *Lessons) distilledLesson(ctx context.Context, tx *sqlx.Tx, c Case, text string, old Lesson, methodUnclear bool) (int64, error) {
	var hash string
	if c.ContextID != 0 {
		err := tx.GetContext(ctx, &hash, `SELECT instructions_hash FROM contexts WHERE id = ?`, c.ContextID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
		}
	}
	runningHash, runningVersion := s.running.InstructionsHash, s.running.ServerVersion
	version := c.ServerVersion
	if hash == "" {
		hash = runningHash
	}
	if version == "" {
		version = runningVersion
	}
	l := Lesson{
		Text: text, Status: LessonProvisional, Origin: OriginDistilled, CaseID: c.ID,
		Applies:          Applies{Stage: c.Stage, Files: caseFiles(c.Edits), Signature: c.Signature},
		InstructionsHash: hash, ServerVersion: version, MethodUnclear: methodUnclear,
	}
	if old.ID != 0 && old.Servable() && !methodUnclear {
		l.Supersedes = old.ID
	}
	id, err := insertLesson(ctx, tx, s.now(), l)
	if err != nil {
		return 0, err
	}
	change, summary := ChangeDistill, fmt.Sprintf("Lesson %d was distilled from case %d.", id, c.ID)
	if l.Supersedes != 0 {
		change, summary = ChangeSupersede, fmt.Sprintf("Lesson %d, distilled from case %d, superseded lesson %d.", id, c.ID, old.ID)
	}
	corpus, err := newVersion(ctx, tx, s.now(), ActorDistiller, change, id, summary)
	if err != nil {
		return 0, err
	}
	if err := enterIndex(ctx, tx, id, corpus); err != nil {
		return 0, err
	}
	if l.Supersedes != 0 {
		if err := supersede(ctx, tx, s.now(), old, id, corpus); err != nil {
			return 0, fmt.Errorf("knowledge: distill case %d: lesson %d supersedes %d: %w", c.ID, id, old.ID, err)
		}
	}
	return id, nil
}

// caseFiles are the files a case's edits touched (editedFiles), in the
// order first touched, each once.
func caseFiles(edits string) []string {
	var files []string
	for line := range strings.Lines(edits) {
		_, touched := editedFiles(line)
		for _, f := range touched {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files
}

// supersede records that lesson newID supersedes old, in tx: a provisional
// old lesson becomes superseded and is never served again; a confirmed one
// keeps its status, since a person confirmed it, and is flagged superseded
// for review.
func supersede(ctx context.Context, tx *sqlx.Tx, now time.Time, old Lesson, newID, version int64) error {
	if old.Status == LessonConfirmed {
		return flagLesson(ctx, tx, old, FlagSuperseded)
	}
	return moveLesson(ctx, tx, now, old, LessonSuperseded, lessonStamp{supersededBy: newID, version: version})
}

// logCut writes the one log line saying what the question about case c
// left out to keep within DistillBudget.
func (s *Lessons) logCut(ctx context.Context, c Case, cut []string) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	defer tx.Rollback()
	line := fmt.Sprintf("The distiller's question about case %d left out %s, to keep within %d characters.",
		c.ID, strings.Join(cut, ", "), DistillBudget)
	ev := Event{At: s.now(), Level: LevelInfo, Message: line, AppID: sql.NullString{String: c.AppID, Valid: c.AppID != ""}}
	if err := insertEvent(ctx, tx, ev, attrsJSON(map[string]any{"case": c.ID, "cut": cut})); err != nil {
		return fmt.Errorf("knowledge: distill case %d: %w", c.ID, err)
	}
	return tx.Commit()
}

// DistillQueued queues every resolved case not yet asked about, then asks
// about each pending one, oldest first, counting the try before asking. A
// case whose question fails stays queued for a later turn, and is marked
// failed once it has taken maxTries (0 for DistillMaxTries). It answers
// the outcomes of the cases distilled, and the failures joined into one
// error; a cancelled ctx stops it.
func (s *Lessons) DistillQueued(ctx context.Context, ask Ask, maxTries int) ([]Outcome, error) {
	if maxTries <= 0 {
		maxTries = DistillMaxTries
	}
	if _, err := s.cases.QueueResolved(ctx); err != nil {
		return nil, err
	}
	var rows []caseRow
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+caseColumns+` FROM cases
		 WHERE distill_state IN ('queued', 'asked') AND resolved_at IS NOT NULL ORDER BY id`); err != nil {
		return nil, fmt.Errorf("knowledge: pending distillations: %w", err)
	}
	var outcomes []Outcome
	var failures []error
	for _, c := range toCases(rows) {
		if err := ctx.Err(); err != nil {
			return outcomes, errors.Join(append(failures, err)...)
		}
		tries := c.DistillTries
		if c.Diagnosis == "" {
			tries++
			if err := s.cases.MarkDistill(ctx, c.ID, DistillAsked, tries); err != nil {
				return outcomes, errors.Join(append(failures, err)...)
			}
		}
		out, err := s.Distill(ctx, c, ask)
		if err == nil {
			if out.Skipped {
				err = s.cases.settleDiagnosed(ctx, c.ID, tries)
			}
			if err == nil {
				outcomes = append(outcomes, out)
				continue
			}
		}
		failures = append(failures, err)
		state := DistillQueued
		if tries >= maxTries {
			state = DistillFailed
		}
		if err := s.cases.MarkDistill(ctx, c.ID, state, tries); err != nil {
			return outcomes, errors.Join(append(failures, err)...)
		}
	}
	return outcomes, errors.Join(failures...)
}
