-- Scenario "replica_identity" (run-pg-scenario.sh, scenario_golden_test.go): unchanged TOASTed
-- values under REPLICA IDENTITY DEFAULT and FULL, tables without a primary key, REPLICA
-- IDENTITY NOTHING and USING INDEX. Every big column is STORAGE EXTERNAL and > 2 kB, so it is
-- always stored out of line and pgoutput sends it as 'u' (unchanged TOAST) when an UPDATE does
-- not touch it.
CREATE EXTENSION hstore;
CREATE TABLE toast_default (
  id integer PRIMARY KEY,
  n integer,
  t text, v varchar, b bytea, ta text[], ia integer[], ba bigint[], ua uuid[],
  j jsonb, js json, x xml, h hstore
);
CREATE TABLE toast_full (LIKE toast_default INCLUDING ALL);
ALTER TABLE toast_full REPLICA IDENTITY FULL;
DO $$
DECLARE tb text;
BEGIN
  FOREACH tb IN ARRAY ARRAY['toast_default', 'toast_full'] LOOP
    EXECUTE format('ALTER TABLE %I ALTER t SET STORAGE EXTERNAL, ALTER v SET STORAGE EXTERNAL,
      ALTER b SET STORAGE EXTERNAL, ALTER ta SET STORAGE EXTERNAL, ALTER ia SET STORAGE EXTERNAL,
      ALTER ba SET STORAGE EXTERNAL, ALTER ua SET STORAGE EXTERNAL, ALTER j SET STORAGE EXTERNAL,
      ALTER js SET STORAGE EXTERNAL, ALTER x SET STORAGE EXTERNAL, ALTER h SET STORAGE EXTERNAL', tb);
  END LOOP;
END $$;
CREATE FUNCTION big_row(i integer) RETURNS toast_default LANGUAGE sql AS $$
  SELECT i, 0, repeat('t', 2100), repeat('v', 2100), convert_to(repeat('b', 2100), 'UTF8'),
    array_fill('abc'::text, ARRAY[700]), array_fill(7, ARRAY[600]), array_fill(8::bigint, ARRAY[300]),
    array_fill('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, ARRAY[150]),
    to_jsonb(repeat('j', 2100)), ('"' || repeat('k', 2100) || '"')::json,
    ('<a>' || repeat('x', 2100) || '</a>')::xml, hstore('k', repeat('h', 2100))
$$;
INSERT INTO toast_default SELECT * FROM big_row(1);
INSERT INTO toast_full SELECT * FROM big_row(1);

CREATE TABLE nopk (a integer, b text NOT NULL);
INSERT INTO nopk VALUES (1, 'one');
CREATE TABLE nopk_full (a integer, b text NOT NULL);
ALTER TABLE nopk_full REPLICA IDENTITY FULL;
CREATE TABLE ri_nothing (id integer PRIMARY KEY, v text);
ALTER TABLE ri_nothing REPLICA IDENTITY NOTHING;
INSERT INTO ri_nothing VALUES (1, 'one');
CREATE TABLE ri_index (id integer PRIMARY KEY, code integer NOT NULL, v text NOT NULL);
CREATE UNIQUE INDEX ri_index_code ON ri_index (code);
ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_code;
INSERT INTO ri_index VALUES (1, 10, 'one');
CREATE TABLE ri_index_nopk (code integer NOT NULL, v text NOT NULL, w integer);
CREATE UNIQUE INDEX ri_index_nopk_code ON ri_index_nopk (code);
ALTER TABLE ri_index_nopk REPLICA IDENTITY USING INDEX ri_index_nopk_code;
