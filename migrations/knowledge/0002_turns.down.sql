DROP TABLE contexts;
DROP TABLE blobs;
DROP INDEX events_app_level;
DROP INDEX events_app;
DROP INDEX events_level;
