ALTER TABLE tasks DROP COLUMN rev_before;
