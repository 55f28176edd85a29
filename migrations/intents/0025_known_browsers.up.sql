-- Who each failed sign-in came from: a browser that signed in before
-- ('browser:' and the hash of its cookie's token) or, for any other, the
-- network address ('address:' and the address). Each has an allowance of
-- its own, so one client's guesses for the owner's name do not lock the
-- owner's own browser out.
ALTER TABLE sign_in_failures ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX sign_in_failures_client_at ON sign_in_failures (client, at);

-- Browsers that signed in before, keyed by the SHA-256 of the random token
-- their long-lived cookie holds, so a copy of the database vouches for none.
CREATE TABLE known_browsers (
    id_hash      TEXT    PRIMARY KEY,
    created_at   INTEGER NOT NULL,
    signed_in_at INTEGER NOT NULL
);
