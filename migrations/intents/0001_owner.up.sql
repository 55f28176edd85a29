-- The one owner of this server, and the sessions signed in as them.
CREATE TABLE owner (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    name          TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- A session row is keyed by the SHA-256 of the cookie's id, so a copy of the
-- database does not hand out live sessions.
CREATE TABLE sessions (
    id_hash      TEXT    PRIMARY KEY,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
);

-- Failed sign-ins, kept only long enough to throttle guessing.
CREATE TABLE sign_in_failures (
    id      INTEGER PRIMARY KEY,
    account TEXT    NOT NULL,
    at      INTEGER NOT NULL
);
CREATE INDEX sign_in_failures_account_at ON sign_in_failures (account, at);
