DROP TABLE known_browsers;
DROP INDEX sign_in_failures_client_at;
ALTER TABLE sign_in_failures DROP COLUMN client;
