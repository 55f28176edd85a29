-- What an owner's operation sent (the SHA-256 of its values), so the same
-- operation id sent again with other values is refused instead of being
-- taken for the first. Operations recorded before this have ''.
ALTER TABLE operations ADD COLUMN sent TEXT NOT NULL DEFAULT '';
