-- The review flags are raised on start from what the servings say since a
-- lesson was last reviewed (confirmed_at: a person's confirmation, or the
-- writing of a curated lesson): recurring after three recurrences and no
-- resolution, instructions_changed after two recurrences in turns given
-- other instructions than its own, autoapp_upgraded only on a lesson no
-- person has reviewed. A review resets what is counted, so the marks 0007
-- kept to flag each difference once are no longer read.
ALTER TABLE lessons DROP COLUMN reviewed_server_version;
ALTER TABLE lessons DROP COLUMN reviewed_instructions_hash;

-- The flag for a lesson distilled by another minor version of the
-- launcher is called autoapp_upgraded, as the page and the turns show it.
UPDATE lessons SET flags = replace(flags, '"upgraded"', '"autoapp_upgraded"') WHERE flags LIKE '%"upgraded"%';
