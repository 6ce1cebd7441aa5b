-- Scenario "heartbeat": heartbeat.interval.ms with heartbeat.action.query writing to a
-- table that is not captured.
CREATE TABLE t (id integer PRIMARY KEY, v text);
CREATE TABLE hb (id integer PRIMARY KEY, ts timestamptz);
INSERT INTO t VALUES (1, 'a1');
