DROP INDEX links_source;
DROP TABLE links_state;
