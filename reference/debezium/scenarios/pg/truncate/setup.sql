-- Scenario "truncate": TRUNCATE events (op "t") with skipped.operations=none, deletes
-- without tombstones (tombstones.on.delete=false).
CREATE TABLE ta (id integer PRIMARY KEY, v text);
CREATE TABLE tb (id integer PRIMARY KEY, v text);
CREATE TABLE tc (v text);
INSERT INTO ta VALUES (1, 'a1');
