DROP INDEX chat_turns_one_running;
DROP INDEX chat_turns_app;
DROP TABLE chat_turns;
