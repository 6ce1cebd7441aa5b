-- Scenario "partitioned_root": a partitioned table under publish.via.partition.root=true
-- (Debezium creates the publication FOR ALL TABLES WITH (publish_via_partition_root = true)):
-- streamed changes of every partition, rows moved between partitions by an update of the
-- partition key (DELETE + INSERT), a partition attached while streaming.
CREATE TABLE measures (id integer NOT NULL, region text NOT NULL, v integer, PRIMARY KEY (id, region))
  PARTITION BY LIST (region);
CREATE TABLE measures_eu PARTITION OF measures FOR VALUES IN ('eu');
CREATE TABLE measures_us PARTITION OF measures FOR VALUES IN ('us');
ALTER TABLE measures REPLICA IDENTITY FULL;
ALTER TABLE measures_eu REPLICA IDENTITY FULL;
ALTER TABLE measures_us REPLICA IDENTITY FULL;
INSERT INTO measures VALUES (1, 'eu', 10), (2, 'us', 20);
