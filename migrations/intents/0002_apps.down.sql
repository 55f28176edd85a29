DROP TABLE activations;
DROP TABLE releases;
DROP TABLE apps;
