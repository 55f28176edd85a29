-- The cap the owner set on an intent: what its runs may spend in dollars
-- (priced models), in tokens and in minutes of running (every model). A
-- NULL field caps nothing; an intent with no row has the default of
-- Settings (prices.json's "budget"). One row an intent, replaced whole
-- when the owner saves the cap again.
CREATE TABLE intent_caps (
    intent_id INTEGER PRIMARY KEY REFERENCES intents (id),
    dollars   REAL    CHECK (dollars IS NULL OR dollars > 0),
    tokens    INTEGER CHECK (tokens IS NULL OR tokens > 0),
    minutes   REAL    CHECK (minutes IS NULL OR minutes > 0),
    set_at    INTEGER NOT NULL
);

-- What an intent spent counts its request's chat turns: they are found by
-- their request.
CREATE INDEX chat_turns_request ON chat_turns (request_id) WHERE request_id IS NOT NULL;

CREATE TRIGGER backlog_version_intent_caps_insert AFTER INSERT ON intent_caps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER backlog_version_intent_caps_update AFTER UPDATE ON intent_caps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER backlog_version_intent_caps_delete AFTER DELETE ON intent_caps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;
