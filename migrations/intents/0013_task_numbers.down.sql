DROP TRIGGER tasks_number;
DROP TABLE task_numbers;
