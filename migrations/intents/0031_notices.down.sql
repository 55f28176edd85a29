DROP TRIGGER notices_no_delete;
DROP TRIGGER notices_fixed;
DROP INDEX notices_pending;
DROP TABLE notices;
