-- What a lesson's review flags were last raised against: the running
-- instructions' hash when it was flagged instructions_changed, the running
-- server version when it was flagged upgraded. A person's confirmation
-- clears the flags; these keep the same difference from raising them again
-- at the next start, so a lesson is flagged once per change.
ALTER TABLE lessons ADD COLUMN reviewed_instructions_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE lessons ADD COLUMN reviewed_server_version TEXT NOT NULL DEFAULT '';
