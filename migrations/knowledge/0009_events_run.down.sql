DROP INDEX events_run;
