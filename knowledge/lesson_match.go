package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// The numbers of matching (DESIGN.md, the seed's "A task's lessons").
const (
	// MaxServed is how many lessons a turn is given at most, and how
	// many hints stand beside a failed build.
	MaxServed = 3
	// MaxRelated is how many of a turn's lessons may come from file
	// overlap.
	MaxRelated = 2
	// MinSharedWords is how many distinct words a lesson's text must share
	// with a turn's words to be served for them: one is not enough.
	MinSharedWords = 2
	// wordCandidates is how many full-text matches, newest first, are read
	// before the shared words are counted.
	wordCandidates = 200
	// maxQueryWords bounds the full-text query a long task makes.
	maxQueryWords = 64
)

// Why a lesson was served. A related lesson's reason is "related:" and the
// file it shares with the turn.
const (
	ReasonPinned  = "pinned"
	ReasonRelated = "related"
	ReasonWords   = "words"
	ReasonHint    = "hint"
)

// MatchQuery is what a turn is about. Words are the task's own title,
// summary and criteria, never the builder's fixed sentences.
type MatchQuery struct {
	// AppID is the application the turn is about. A lesson distilled from
	// a case of another application is never related to its files; ""
	// relates lessons of every application.
	AppID string
	// Files are the files the task edited in an earlier attempt or names
	// in its locks, relative to the workspace.
	Files []string
	// Words are the task's title, summary and criteria.
	Words string
	// Stage, when given, sorts lessons about that build stage first among
	// the word matches.
	Stage string
}

// Served is one lesson given to a turn, with why and the label it is shown
// with.
type Served struct {
	Lesson Lesson `json:"lesson"`
	// Reason is pinned, related:<file>, words or hint.
	Reason string `json:"reason"`
	// Label is "(provisional)" for a provisional lesson and
	// "(needs review: <flags>)" for one carrying review flags, both when
	// both hold, "" otherwise.
	Label string `json:"label,omitempty"`
	// ForStage is, for a hint, the stage of the failure it stood beside.
	ForStage string `json:"forStage,omitempty"`
}

// Line is the lesson as a turn reads it: its id, its text and its label.
func (s Served) Line() string {
	line := fmt.Sprintf("[lesson %d] %s", s.Lesson.ID, s.Lesson.Text)
	if s.Label != "" {
		line += " " + s.Label
	}
	return line
}

func serve(l Lesson, reason string) Served {
	var labels []string
	if l.Status == LessonProvisional {
		labels = append(labels, "(provisional)")
	}
	if l.NeedsReview() {
		labels = append(labels, "(needs review: "+strings.Join(l.Flags, ", ")+")")
	}
	return Served{Lesson: l, Reason: reason, Label: strings.Join(labels, " ")}
}

// Match answers the lessons a turn about q is given: up to MaxServed, the
// pinned ones first, then up to MaxRelated that apply to one of q's files
// (a distilled lesson's files are those its case's edits touched, and it
// is related only to its case's application; a lesson from no case is
// related in any), then those sharing at least MinSharedWords words with
// q's words; in each tier confirmed before provisional, then newest. No
// lesson is given twice; a retired or superseded lesson never, nor what a
// method_unclear answer kept.
func (s *Lessons) Match(ctx context.Context, q MatchQuery) ([]Served, error) {
	var out []Served
	seen := map[int64]bool{}
	take := func(l Lesson, reason string) bool {
		if len(out) == MaxServed || seen[l.ID] || !l.Servable() {
			return false
		}
		seen[l.ID] = true
		out = append(out, serve(l, reason))
		return true
	}

	var pinned []lessonRow
	if err := s.db.Read.SelectContext(ctx, &pinned,
		`SELECT `+lessonColumns+` FROM lessons
		 WHERE pinned = 1 AND status IN ('provisional', 'confirmed') AND method_unclear = 0
		 ORDER BY status = 'confirmed' DESC, id DESC LIMIT ?`, MaxServed); err != nil {
		return nil, fmt.Errorf("knowledge: match pinned lessons: %w", err)
	}
	ls, err := toLessons(pinned)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		take(l, ReasonPinned)
	}

	if files := cleanList(q.Files); len(files) > 0 && len(out) < MaxServed {
		related, err := s.related(ctx, q.AppID, files)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, r := range related {
			if n == MaxRelated {
				break
			}
			if take(r.lesson, ReasonRelated+":"+r.path) {
				n++
			}
		}
	}

	if len(out) < MaxServed {
		words, err := s.byWords(ctx, q.Words, MinSharedWords, "")
		if err != nil {
			return nil, err
		}
		if q.Stage != "" {
			slices.SortStableFunc(words, func(a, b Lesson) int {
				return cmp.Compare(btoi(b.Applies.Stage == q.Stage), btoi(a.Applies.Stage == q.Stage))
			})
		}
		for _, l := range words {
			take(l, ReasonWords)
		}
	}
	return out, nil
}

// Hints answers the lessons that stand beside a failed build's problems at
// stage: up to MaxServed that name exactly that stage and share at least
// one word with the problems. A lesson that names no stage is never a hint.
func (s *Lessons) Hints(ctx context.Context, stage string, problems []string) ([]Served, error) {
	stage = strings.TrimSpace(stage)
	if stage == "" {
		return nil, nil
	}
	found, err := s.byWords(ctx, strings.Join(problems, "\n"), 1, stage)
	if err != nil {
		return nil, err
	}
	var out []Served
	for _, l := range found {
		if len(out) == MaxServed {
			break
		}
		h := serve(l, ReasonHint)
		h.ForStage = stage
		out = append(out, h)
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type relatedLesson struct {
	lesson Lesson
	path   string
}

// related answers the servable lessons applying to one of files, confirmed
// first, then newest, each once with the first of its files. With an
// appID, a lesson whose case is another application's is left out.
func (s *Lessons) related(ctx context.Context, appID string, files []string) ([]relatedLesson, error) {
	if len(files) > maxQueryWords {
		files = files[:maxQueryWords]
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(files)), ", ")
	args := make([]any, 0, len(files)+1)
	for _, f := range files {
		args = append(args, f)
	}
	args = append(args, appID, appID, MaxServed+MaxRelated)
	var rows []struct {
		lessonRow
		Path string `db:"path"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+prefixed("l.", lessonColumns)+`, MIN(f.path) AS path
		 FROM lesson_files f JOIN lessons l ON l.id = f.lesson_id
		 WHERE f.path IN (`+marks+`) AND l.status IN ('provisional', 'confirmed') AND l.method_unclear = 0
		   AND (? = '' OR l.case_id IS NULL OR EXISTS (SELECT 1 FROM cases c WHERE c.id = l.case_id AND c.app_id = ?))
		 GROUP BY l.id
		 ORDER BY l.status = 'confirmed' DESC, l.id DESC LIMIT ?`, args...); err != nil {
		return nil, fmt.Errorf("knowledge: match related lessons: %w", err)
	}
	out := make([]relatedLesson, 0, len(rows))
	for _, r := range rows {
		l, err := r.toLesson()
		if err != nil {
			return nil, err
		}
		out = append(out, relatedLesson{lesson: l, path: r.Path})
	}
	return out, nil
}

// prefixed is the comma-separated columns each with prefix.
func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// byWords answers the servable lessons among the newest full-text matches
// whose text shares at least min distinct words with words, confirmed
// first, then by how many words they share, then newest. A non-empty stage keeps only lessons
// that name exactly that stage.
func (s *Lessons) byWords(ctx context.Context, words string, min int, stage string) ([]Lesson, error) {
	asked := matchWords(words)
	if len(asked) < min {
		return nil, nil
	}
	terms := make([]string, 0, len(asked))
	for w := range asked {
		terms = append(terms, w)
	}
	slices.Sort(terms)
	if len(terms) > maxQueryWords {
		terms = terms[:maxQueryWords]
	}
	for i, t := range terms {
		terms[i] = `"` + t + `"` // a word is letters and digits only, so quoting is safe
	}
	// The newest matches are the candidates: ranking every match by
	// relevance costs a pass over all of them, which a large corpus of
	// common words makes slow, and the order below does not use it.
	query := `SELECT ` + lessonColumns + ` FROM lessons
		 WHERE id IN (SELECT rowid FROM lessons_fts WHERE lessons_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
		   AND status IN ('provisional', 'confirmed') AND method_unclear = 0`
	args := []any{strings.Join(terms, " OR "), wordCandidates}
	if stage != "" {
		query += ` AND applies_stage = ?`
		args = append(args, stage)
	}
	query += ` ORDER BY id DESC`
	var rows []lessonRow
	if err := s.db.Read.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("knowledge: match lessons by words: %w", err)
	}
	type scored struct {
		lesson Lesson
		shared int
	}
	var kept []scored
	for _, r := range rows {
		l, err := r.toLesson()
		if err != nil {
			return nil, err
		}
		shared := 0
		for w := range matchWords(l.Text) {
			if asked[w] {
				shared++
			}
		}
		if shared >= min {
			kept = append(kept, scored{l, shared})
		}
	}
	slices.SortStableFunc(kept, func(a, b scored) int {
		if c := cmp.Compare(btoi(b.lesson.Status == LessonConfirmed), btoi(a.lesson.Status == LessonConfirmed)); c != 0 {
			return c
		}
		return cmp.Compare(b.shared, a.shared)
	})
	out := make([]Lesson, len(kept))
	for i, k := range kept {
		out[i] = k.lesson
	}
	return out, nil
}

// matchWords are the distinct words of text that can tie a lesson to a
// turn: lower-cased runs of letters and digits, as the full-text index
// splits them, of three characters or more and not a common word.
func matchWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) >= 3 && !commonWords[w] {
			out[w] = true
		}
	}
	return out
}

// commonWords share nothing about a failure between two texts.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with that this from into onto when then than
		are was were has have had not but all any can its it's use uses used using add adds
		should must will would could each every only also more most some such your you our
		what which who how why where there their them they out get set new one two make
		made does did done before after while been being over under per via like just`) {
		m[w] = true
	}
	return m
}()
