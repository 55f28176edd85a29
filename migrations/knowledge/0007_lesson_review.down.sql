ALTER TABLE lessons DROP COLUMN reviewed_server_version;
ALTER TABLE lessons DROP COLUMN reviewed_instructions_hash;
