DROP TRIGGER lessons_retired_by_once;
ALTER TABLE lessons DROP COLUMN retired_by;
DROP TRIGGER lessons_method_unclear_immutable;
DROP INDEX lessons_method_unclear;
ALTER TABLE lessons DROP COLUMN method_unclear;
