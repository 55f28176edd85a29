DROP TRIGGER servings_no_delete;
DROP TRIGGER servings_closed_once;
DROP TRIGGER servings_opening_immutable;
DROP INDEX servings_open;
DROP INDEX servings_run;
DROP INDEX servings_lesson;
DROP TABLE servings;
