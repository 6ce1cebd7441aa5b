-- Scenario "truncate_default": default skipped.operations (t in Debezium 3.x): TRUNCATE emits nothing.
CREATE TABLE ta (id integer PRIMARY KEY, v text);
INSERT INTO ta VALUES (1, 'a1');
