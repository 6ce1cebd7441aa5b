-- Scenario "skipped_ops": skipped.operations=c,d; TRUNCATE under it is not skipped (only the
-- listed operations are).
CREATE TABLE ta (id integer PRIMARY KEY, v text);
INSERT INTO ta VALUES (1, 'a1');
