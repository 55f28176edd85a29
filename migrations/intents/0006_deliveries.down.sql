DROP TRIGGER deliveries_no_delete;
DROP TRIGGER deliveries_no_update;
DROP TABLE deliveries;
