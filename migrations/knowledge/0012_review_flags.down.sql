UPDATE lessons SET flags = replace(flags, '"autoapp_upgraded"', '"upgraded"') WHERE flags LIKE '%"autoapp_upgraded"%';
ALTER TABLE lessons ADD COLUMN reviewed_instructions_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE lessons ADD COLUMN reviewed_server_version TEXT NOT NULL DEFAULT '';
