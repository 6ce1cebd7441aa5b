-- Scenario "schema_changes": DDL while streaming. Every column's nullability and
-- default stay the same for as long as the column exists, so the result does not depend
-- on when the connector reads the catalog (Debezium reads it when it decodes a Relation
-- message, possibly after later DDL already ran).
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE t (id integer PRIMARY KEY, a text, b integer, m mood);
INSERT INTO t VALUES (1, 'a1', 1, 'sad');
