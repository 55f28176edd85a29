-- Notices: the moments a run needs the owner (a builder's question, a
-- failed task, a guided plan waiting for approval, an intent done, a cap
-- reached, a provider that stopped a run), written in the transaction of
-- the move that makes them, so none is lost and none is made twice. The
-- console's tabs read them after the last they showed; the webhook's
-- outbox sends each at least once. Only the send columns change.
CREATE TABLE notices (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('question', 'failed', 'approval', 'done', 'cap', 'provider')),
    app_id     TEXT    NOT NULL,
    intent_id  INTEGER NOT NULL REFERENCES intents (id),
    task_id    INTEGER REFERENCES tasks (id),
    sentence   TEXT    NOT NULL,
    link       TEXT    NOT NULL,
    -- The webhook's outbox: pending until sent, skipped when no webhook
    -- wanted its kind as it came up, given-up after a day of failures.
    send_state TEXT    NOT NULL DEFAULT 'pending' CHECK (send_state IN ('pending', 'sent', 'skipped', 'given-up')),
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    INTEGER NOT NULL,
    sent_at    INTEGER,
    last_error TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX notices_pending ON notices (next_at) WHERE send_state = 'pending';
CREATE TRIGGER notices_fixed BEFORE UPDATE OF id, at, kind, app_id, intent_id, task_id, sentence, link ON notices
BEGIN SELECT RAISE(ABORT, 'a notice says what happened once; only its sending changes'); END;
CREATE TRIGGER notices_no_delete BEFORE DELETE ON notices
BEGIN SELECT RAISE(ABORT, 'notices are kept'); END;
