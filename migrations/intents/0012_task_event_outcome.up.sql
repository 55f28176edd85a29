-- How the attempt a move ends came out, in the host's words, so that no
-- reader has to parse it back out of the reason a person reads: '' for a
-- move that ends no attempt (or one written before this column).
ALTER TABLE task_events ADD COLUMN outcome TEXT NOT NULL DEFAULT ''
    CHECK (outcome IN ('', 'completed', 'retry', 'further', 'failed', 'asked', 'stopped', 'not-an-attempt'));

-- The moves written before the column say it in their reasons, the
-- executor's own fixed sentences.
UPDATE task_events SET outcome = 'not-an-attempt'
 WHERE from_status = 'in-progress' AND reason LIKE 'not an attempt: %';
UPDATE task_events SET outcome = 'stopped'
 WHERE from_status = 'in-progress' AND to_status = 'interrupted' AND reason IN ('Stopped by the person.', 'The launcher stopped.');
UPDATE task_events SET outcome = 'further'
 WHERE from_status = 'in-progress' AND to_status = 'in-queue' AND reason LIKE 'another attempt: it got further%';
UPDATE task_events SET outcome = 'retry'
 WHERE from_status = 'in-progress' AND to_status = 'in-queue' AND outcome = '';
UPDATE task_events SET outcome = to_status
 WHERE from_status = 'in-progress' AND to_status IN ('completed', 'failed') AND outcome = '';
UPDATE task_events SET outcome = 'asked'
 WHERE from_status = 'in-progress' AND to_status = 'needs-answer' AND outcome = '';
