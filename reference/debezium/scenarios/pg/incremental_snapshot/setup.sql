-- Scenario "incremental_snapshot": an execute-snapshot signal inserted into the signal table
-- while streaming; chunks of 2 rows, one row left out by an additional condition.
CREATE TABLE t (id integer PRIMARY KEY, v text);
CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));
INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 5) g;
