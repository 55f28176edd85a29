ALTER TABLE operations DROP COLUMN sent;
