package executor

import (
	"context"
	"log/slog"
	"math"

	"autoapp/executor/ai"
	"autoapp/intent/spend"
)

// Caps answer how much each request to a model may use, and whether a run
// or a question may begin (*spend.Guard).
type Caps interface {
	Room(ctx context.Context, a spend.Ask) (spend.Room, error)
	Check(ctx context.Context, a spend.Ask) (string, error)
}

// CapsUnread is what refuses a request when the caps could not be read:
// nothing more is asked of the model rather than risk passing one.
const CapsUnread = "The caps could not be checked; the launcher's log has the detail. Nothing more was asked of the model."

// CapOf is the cap of a turn asked as a: before every request the guard
// hears what the turn used so far and the request's input, and answers its
// room. With no caps it caps nothing.
func CapOf(ctx context.Context, caps Caps, a spend.Ask, log *slog.Logger) ai.Cap {
	if caps == nil {
		return nil
	}
	return func(used ai.Usage, input int) ai.Room {
		ask := a
		ask.UsedInput, ask.UsedOutput, ask.Input = int64(used.Input), int64(used.Output), int64(input)
		room, err := caps.Room(context.WithoutCancel(ctx), ask)
		if err != nil {
			log.ErrorContext(ctx, "the caps could not be read", "run", a.RunID, "err", err)
			return ai.Room{Refused: CapsUnread}
		}
		if room.Refused != "" {
			return ai.Room{Refused: room.Refused}
		}
		out := -1
		if room.Output >= 0 {
			out = int(min(room.Output, math.MaxInt32))
		}
		return ai.Room{Output: out, Until: room.Until, Reached: func(u ai.Usage) string {
			return room.Reached(int64(u.Input), int64(u.Output))
		}}
	}
}

// CheckCaps is why asking as a would be refused now, or "".
func CheckCaps(ctx context.Context, caps Caps, a spend.Ask, log *slog.Logger) string {
	if caps == nil {
		return ""
	}
	refused, err := caps.Check(ctx, a)
	if err != nil {
		log.ErrorContext(ctx, "the caps could not be read", "run", a.RunID, "err", err)
		return CapsUnread
	}
	return refused
}
