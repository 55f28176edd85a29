package intent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// ChatStatus is where a chat turn stands.
type ChatStatus string

// The statuses of a chat turn. A turn starts running and ends once.
const (
	ChatRunning  ChatStatus = "running"
	ChatAnswered ChatStatus = "answered"
	ChatFailed   ChatStatus = "failed"
	ChatStopped  ChatStatus = "stopped"
)

// ChatBusySentence refuses a second chat turn of an application while one
// runs.
const ChatBusySentence = "The engineer is still answering; wait for its turn to end."

// ChatTurn is one chat turn (executor/chat runs them) as its chat_turns
// row holds it.
type ChatTurn struct {
	ID    int64
	AppID string
	// RequestID is the request the turn belongs to; 0 for none.
	RequestID int64
	RunID     string
	// Message is the person's, byte for byte as they sent it.
	Message string
	Status  ChatStatus
	// Reply is the engineer's final text.
	Reply string
	// Lines say what each tool call did, one line each, in order.
	Lines []string
	// Sentence says how the turn ended when it did not answer.
	Sentence  string
	StartedAt time.Time
	EndedAt   time.Time // zero while it runs
}

// StartChatTurn records a new turn of the application appID, running, for
// the person's message; requestID is the request it belongs to, 0 for
// none. It refuses an application that does not exist, and one whose turn
// is still running (a row a launcher that stopped left running included).
func (s *ChatTurns) StartChatTurn(ctx context.Context, appID string, requestID int64, message string) (ChatTurn, error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	defer tx.Rollback()
	t, err := s.StartChatTurnIn(ctx, tx, appID, requestID, message)
	if err != nil {
		return ChatTurn{}, err
	}
	if err := tx.Commit(); err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	return t, nil
}

// StartChatTurnIn is StartChatTurn inside the transaction of the request
// that journals the words the turn answers: the turn's row holds only if
// the entry does.
func (s *ChatTurns) StartChatTurnIn(ctx context.Context, w migrations.Within, appID string, requestID int64, message string) (ChatTurn, error) {
	now := s.now()
	var apps, busy int
	if err := sqlx.GetContext(ctx, w, &apps, `SELECT count(*) FROM apps WHERE id = ?`, appID); err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	if apps == 0 {
		return ChatTurn{}, refuse(refusal.NotFound, "There is no application %q.", appID)
	}
	if err := sqlx.GetContext(ctx, w, &busy, `SELECT count(*) FROM chat_turns WHERE app_id = ? AND status = 'running'`, appID); err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	if busy > 0 {
		return ChatTurn{}, refuse(refusal.Conflict, ChatBusySentence)
	}
	var id int64
	if err := sqlx.GetContext(ctx, w, &id, `SELECT coalesce(max(id), 0) + 1 FROM chat_turns`); err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	t := ChatTurn{ID: id, AppID: appID, RequestID: requestID, RunID: fmt.Sprintf("chat-%s-%d", appID, id), Message: message,
		Status: ChatRunning, Lines: []string{}, StartedAt: time.UnixMilli(now.UnixMilli())}
	request := sql.NullInt64{Int64: requestID, Valid: requestID != 0}
	if _, err := w.ExecContext(ctx,
		`INSERT INTO chat_turns (id, app_id, request_id, run_id, message, status, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, appID, request, t.RunID, message, ChatRunning, now.UnixMilli()); err != nil {
		return ChatTurn{}, fmt.Errorf("intent: start a chat turn: %w", err)
	}
	return t, nil
}

// AddChatLine adds one tool call's line to chat turn id while it runs; a
// turn that has ended keeps its lines as they are.
func (s *ChatTurns) AddChatLine(ctx context.Context, id int64, line string) error {
	if _, err := s.db.Write.ExecContext(ctx,
		`UPDATE chat_turns SET lines = json_insert(lines, '$[#]', ?) WHERE id = ? AND status = 'running'`, line, id); err != nil {
		return fmt.Errorf("intent: line of chat turn %d: %w", id, err)
	}
	return nil
}

// EndChatTurn records how the running chat turn id ended: answered,
// failed or stopped, with the engineer's reply and the sentence saying how
// it ended when it did not answer.
func (s *ChatTurns) EndChatTurn(ctx context.Context, id int64, to ChatStatus, reply, sentence string) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: end chat turn %d: %w", id, err)
	}
	defer tx.Rollback()
	if err := moveChatTurn(ctx, tx, s.now(), id, to, reply, sentence); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: end chat turn %d: %w", id, err)
	}
	return nil
}

// StopChatTurns ends every chat turn still running as stopped, with
// sentence: what serve does on start with the turns a launcher that
// stopped left running. It answers how many there were.
func (s *ChatTurns) StopChatTurns(ctx context.Context, sentence string) (int, error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("intent: stop chat turns: %w", err)
	}
	defer tx.Rollback()
	var ids []int64
	if err := tx.SelectContext(ctx, &ids, `SELECT id FROM chat_turns WHERE status = 'running' ORDER BY id`); err != nil {
		return 0, fmt.Errorf("intent: stop chat turns: %w", err)
	}
	now := s.now()
	for _, id := range ids {
		if err := moveChatTurn(ctx, tx, now, id, ChatStopped, "", sentence); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("intent: stop chat turns: %w", err)
	}
	return len(ids), nil
}

// chatMoves is the table of a chat turn's moves, from → to: a running turn
// ends once.
var chatMoves = map[ChatStatus][]ChatStatus{
	ChatRunning: {ChatAnswered, ChatFailed, ChatStopped},
}

// moveChatTurn is the only writer of chat_turns.status and of what an
// ending stamps (the reply, the sentence, ended_at), in the caller's
// transaction. It refuses a move the table does not allow, and a turn that
// moved meanwhile.
func moveChatTurn(ctx context.Context, tx *sqlx.Tx, now time.Time, id int64, to ChatStatus, reply, sentence string) error {
	var from ChatStatus
	err := tx.GetContext(ctx, &from, `SELECT status FROM chat_turns WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no chat turn %d.", id)
	}
	if err != nil {
		return fmt.Errorf("intent: move chat turn %d: %w", id, err)
	}
	if !slices.Contains(chatMoves[from], to) {
		return refuse(refusal.Conflict, "A chat turn cannot move from %s to %s.", from, to)
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE chat_turns SET status = ?, reply = ?, sentence = ?, ended_at = ? WHERE id = ? AND status = ?`,
		to, reply, sentence, now.UnixMilli(), id, from)
	if err != nil {
		return fmt.Errorf("intent: move chat turn %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("intent: move chat turn %d: %w", id, err)
	} else if n == 0 {
		return refuse(refusal.Conflict, "The chat turn moved meanwhile: it is no longer %s.", from)
	}
	return nil
}

// chatTurnRow is a chat_turns row as SQLite holds it.
type chatTurnRow struct {
	ID        int64         `db:"id"`
	AppID     string        `db:"app_id"`
	RequestID sql.NullInt64 `db:"request_id"`
	RunID     string        `db:"run_id"`
	Message   string        `db:"message"`
	Status    ChatStatus    `db:"status"`
	Reply     string        `db:"reply"`
	Lines     string        `db:"lines"`
	Sentence  string        `db:"sentence"`
	StartedAt int64         `db:"started_at"`
	EndedAt   sql.NullInt64 `db:"ended_at"`
}

const chatTurnColumns = `id, app_id, request_id, run_id, message, status, reply, lines, sentence, started_at, ended_at`

func (r chatTurnRow) turn() (ChatTurn, error) {
	t := ChatTurn{ID: r.ID, AppID: r.AppID, RequestID: r.RequestID.Int64, RunID: r.RunID, Message: r.Message, Status: r.Status,
		Reply: r.Reply, Sentence: r.Sentence, StartedAt: time.UnixMilli(r.StartedAt)}
	if r.EndedAt.Valid {
		t.EndedAt = time.UnixMilli(r.EndedAt.Int64)
	}
	if err := json.Unmarshal([]byte(r.Lines), &t.Lines); err != nil {
		return t, fmt.Errorf("intent: chat turn %d: lines are not the JSON they should be: %w", r.ID, err)
	}
	return t, nil
}

// ChatTurns are the application's last limit chat turns, oldest first.
func (s *ChatTurns) ChatTurns(ctx context.Context, appID string, limit int) ([]ChatTurn, error) {
	var rows []chatTurnRow
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+chatTurnColumns+` FROM chat_turns WHERE app_id = ? ORDER BY id DESC LIMIT ?`, appID, limit); err != nil {
		return nil, fmt.Errorf("intent: chat turns of %s: %w", appID, err)
	}
	slices.Reverse(rows)
	return chatTurns(rows)
}

// EndedChatTurns are the application's last limit chat turns before turn
// before that have ended, newest first: the conversation a turn is given.
func (s *ChatTurns) EndedChatTurns(ctx context.Context, appID string, before int64, limit int) ([]ChatTurn, error) {
	var rows []chatTurnRow
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+chatTurnColumns+` FROM chat_turns
		 WHERE app_id = ? AND id < ? AND status != 'running' ORDER BY id DESC LIMIT ?`,
		appID, before, limit); err != nil {
		return nil, fmt.Errorf("intent: chat history of %s: %w", appID, err)
	}
	return chatTurns(rows)
}

func chatTurns(rows []chatTurnRow) ([]ChatTurn, error) {
	turns := make([]ChatTurn, 0, len(rows))
	for _, r := range rows {
		t, err := r.turn()
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	return turns, nil
}
