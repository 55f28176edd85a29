DROP INDEX tasks_examples_held;
