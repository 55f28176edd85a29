DROP TRIGGER replays_no_delete;
DROP TRIGGER replays_no_update;
DROP INDEX replays_case_arm;
DROP INDEX replays_lesson;
DROP INDEX replays_of_case;
DROP INDEX replays_manifest;
DROP TABLE replays;
