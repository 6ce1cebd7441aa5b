-- Scenario "rename_midstream": ALTER TABLE … RENAME TO (and SET SCHEMA) while streaming, of a
-- table created after the snapshot and of one the snapshot read, with transaction metadata.
-- The snapshot must emit a record (ref.Capture runs changes.sql after the "last" one).
CREATE SCHEMA other;
CREATE TABLE a (id integer PRIMARY KEY, v text);
INSERT INTO a VALUES (1, 'a1');
