package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"autoapp/intent/refusal"
)

// The distiller's budget (DESIGN.md leaves the number to the host): the
// question about a case holds at most DistillBudget characters, and at
// most DistillEvents of the application's events while the case was open.
const (
	DistillBudget = 40000
	DistillEvents = 60
)

// evidence is what the distiller is shown of a case, read from what the
// store kept (blobs and rows), never from the workspace: the turn that met
// the failure as it was given, the example's steps, the edits, the
// revisions and releases, and the application's events while it was open.
type evidence struct {
	c Case
	// turn is the contexts row of the turn that met the failure, and its
	// instructions and documents as delivered; nil when none was recorded.
	turn         *TurnRow
	instructions string
	documents    []DocumentText
	steps        string
	events       []Event
	known        []knownLesson
}

// knownLesson is an existing lesson about the same failure, with whether
// it was in the index at the turn's corpus version and whether it was
// among the documents delivered to that turn.
type knownLesson struct {
	Lesson
	inIndex, delivered bool
}

// readEvidence reads what the distiller is shown of case c, with the
// existing lessons about the same failure.
func (s *Lessons) readEvidence(ctx context.Context, c Case, known []Lesson) (evidence, error) {
	e := evidence{c: c}
	if c.ContextID != 0 {
		t, docs, err := readTurn(ctx, s.db.Read, c.ContextID)
		if err != nil && !isNotFound(err) {
			return e, err
		}
		if err == nil {
			e.turn, e.documents = &t, docs
			if e.instructions, err = readBlob(ctx, s.db.Read, t.InstructionsHash); err != nil && !isNotFound(err) {
				return e, err
			}
		}
	}
	if c.ExampleSteps != "" {
		steps, err := readBlob(ctx, s.db.Read, c.ExampleSteps)
		if err != nil && !isNotFound(err) {
			return e, err
		}
		e.steps = steps
	}
	until := c.ResolvedAt
	if until.IsZero() {
		until = s.now()
	}
	var rows []eventRow
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+eventColumns+` FROM events WHERE app_id = ? AND at >= ? AND at <= ? ORDER BY id DESC LIMIT ?`,
		c.AppID, c.OpenedAt.UnixMilli(), until.UnixMilli(), DistillEvents); err != nil {
		return e, fmt.Errorf("knowledge: the events of case %d: %w", c.ID, err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		ev, err := rows[i].event()
		if err != nil {
			return e, err
		}
		e.events = append(e.events, ev)
	}
	version := c.CorpusVersion
	if e.turn != nil {
		version = e.turn.CorpusVersion
	}
	for _, l := range known {
		k := knownLesson{Lesson: l, inIndex: l.InIndexAt(version)}
		if c.ContextID != 0 {
			var n int
			if err := s.db.Read.GetContext(ctx, &n,
				`SELECT count(*) FROM servings WHERE lesson_id = ? AND context_id = ? AND included = 1`, l.ID, c.ContextID); err != nil {
				return e, fmt.Errorf("knowledge: the servings of lesson %d: %w", l.ID, err)
			}
			k.delivered = n > 0
		}
		e.known = append(e.known, k)
	}
	return e, nil
}

// isNotFound reports whether err says a row or a blob is not kept.
func isNotFound(err error) bool {
	r, ok := refusal.As(err)
	return errors.Is(err, sql.ErrNoRows) || (ok && r.Code == refusal.NotFound)
}

// message is the question about the case, within DistillBudget: the
// oldest events are cut first, then the documents from the last one, then
// the instructions' end, each cut said in the message; cut lists what was
// cut, for the log.
func (e evidence) message() (text string, cut []string) {
	events := e.events
	documents := append([]DocumentText(nil), e.documents...)
	instructions := e.instructions
	var shortened []string // the documents and instructions cut short or left out
	for {
		text = e.write(instructions, documents, events, len(e.events)-len(events))
		over := utf8.RuneCountInString(text) - DistillBudget
		switch {
		case over <= 0:
		case len(events) > 0:
			// Cut as many of the oldest events as the excess needs.
			n, size := 0, 0
			for n < len(events) && size < over {
				size += utf8.RuneCountInString(events[n].Message) + 40
				n++
			}
			events = events[n:]
			continue
		case len(documents) > 0:
			last := &documents[len(documents)-1]
			if utf8.RuneCountInString(last.Text) <= over+200 {
				documents = documents[:len(documents)-1]
				shortened = append(shortened, "the document "+last.Ref)
			} else {
				last.Text = cutEnd(last.Text, over+200)
				shortened = append(shortened, "the end of the document "+last.Ref)
			}
			continue
		case instructions != "":
			instructions = cutEnd(instructions, over+200)
			shortened = append(shortened, "the end of the instructions")
			continue
		}
		if dropped := len(e.events) - len(events); dropped > 0 {
			cut = append(cut, fmt.Sprintf("the %d oldest events", dropped))
		}
		return text, append(cut, slices.Compact(shortened)...)
	}
}

// cutEnd is text without its last n characters, marked as cut; "" when
// that leaves nothing.
func cutEnd(text string, n int) string {
	r := []rune(text)
	if n >= len(r) {
		return ""
	}
	return string(r[:len(r)-n]) + "\n[cut to keep within the budget]"
}

// write is the question with the instructions, documents and events
// given; dropped is how many of the oldest events were cut.
func (e evidence) write(instructions string, documents []DocumentText, events []Event, dropped int) string {
	c := e.c
	var b strings.Builder
	fmt.Fprintf(&b, "Case %d, a %s failure", c.ID, c.Kind)
	if c.Stage != "" {
		fmt.Fprintf(&b, " at stage %s", c.Stage)
	}
	if c.ExampleID != "" {
		fmt.Fprintf(&b, " of example %s", c.ExampleID)
	}
	b.WriteString(".\n\nThe problem as first seen:\n" + c.Message + "\n")
	if c.Request != "" {
		b.WriteString("\nThe person's request:\n" + c.Request + "\n")
	}
	if c.Kind == CaseCheck {
		b.WriteString("\nThe acceptance example's steps, as they were run:\n")
		if e.steps == "" {
			b.WriteString("(not kept)\n")
		} else {
			b.WriteString(e.steps + "\n")
		}
	}
	b.WriteString("\nThe edits made while it was open, with how each hunk matched:\n")
	if strings.TrimSpace(c.Edits) == "" {
		b.WriteString("(none recorded)\n")
	} else {
		b.WriteString(c.Edits)
	}
	b.WriteString("\nSource revisions and releases:\n")
	fmt.Fprintf(&b, "- before the repair: revision %s, release %s\n", orNone(c.RevisionBefore), orNone(c.ReleaseBefore))
	if c.Resolved() {
		fmt.Fprintf(&b, "- after it: revision %s, release %s (resolved by run %s)\n", orNone(c.ResolvedRevision), orNone(c.ResolvedRelease), c.ResolvedRunID)
	}

	if e.turn == nil {
		b.WriteString("\nThe turn that met the failure: none was recorded (the owner's own build or check).\n")
	} else {
		fmt.Fprintf(&b, "\nThe turn that met the failure (turn %d, served from corpus version %d) was given these, exactly as delivered.\n",
			e.turn.ID, e.turn.CorpusVersion)
		b.WriteString("Its instructions:\n<<<\n" + instructions + "\n>>>\n")
		for _, d := range documents {
			fmt.Fprintf(&b, "Document %s", d.Ref)
			if d.Cut {
				b.WriteString(", cut by the turn's budget")
			}
			b.WriteString(":\n<<<\n" + d.Text + "\n>>>\n")
		}
		if len(documents) < len(e.documents) {
			fmt.Fprintf(&b, "(%d more documents were left out to keep within this question's budget.)\n", len(e.documents)-len(documents))
		}
	}

	fmt.Fprintf(&b, "\nThe last events of %s while the case was open, oldest first:\n", c.AppID)
	if dropped > 0 {
		fmt.Fprintf(&b, "(%d older events were left out to keep within the budget.)\n", dropped)
	}
	if len(events) == 0 && dropped == 0 {
		b.WriteString("(none)\n")
	}
	for _, ev := range events {
		fmt.Fprintf(&b, "- %s %s %s\n", ev.At.UTC().Format(time.RFC3339), ev.Level, strings.Join(strings.Fields(ev.Message), " "))
	}

	b.WriteString("\nExisting lessons about the same failure:\n")
	if len(e.known) == 0 {
		b.WriteString("(none)\n")
	}
	for _, l := range e.known {
		fmt.Fprintf(&b, "- lesson %d (%s): %s\n  In the index at the turn's corpus version: %s. Among the documents delivered to the turn: %s.\n",
			l.ID, l.Status, l.Text, yesNo(l.inIndex), yesNo(l.delivered))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
