-- Scenario "blocking_snapshot": an execute-snapshot signal of type blocking inserted into the
-- signal table while streaming, with an additional condition (for blocking snapshots a whole SELECT statement); a change follows.
CREATE TABLE t (id integer PRIMARY KEY, v text);
CREATE TABLE u (id integer PRIMARY KEY, w text);
CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));
INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 4) g;
INSERT INTO u SELECT g, 'w' || g FROM generate_series(1, 2) g;
