DROP TABLE request_ops;
DROP TRIGGER request_journal_no_delete;
DROP TRIGGER request_journal_no_update;
DROP TABLE request_journal;
DROP TABLE requests;
