-- Scenario "partitioned_generated": a partitioned table (parent and two partitions, rows in
-- both) and a table with a STORED generated column, in the snapshot and while streaming
-- (publication FOR ALL TABLES, publish_via_partition_root off).
CREATE TABLE measures (id integer NOT NULL, region text NOT NULL, v integer, PRIMARY KEY (id, region))
  PARTITION BY LIST (region);
CREATE TABLE measures_eu PARTITION OF measures FOR VALUES IN ('eu');
CREATE TABLE measures_us PARTITION OF measures FOR VALUES IN ('us');
INSERT INTO measures VALUES (1, 'eu', 10), (2, 'us', 20);
CREATE TABLE gen (id integer PRIMARY KEY, a integer, twice integer GENERATED ALWAYS AS (a * 2) STORED, b text);
INSERT INTO gen (id, a, b) VALUES (1, 5, 'x');
